import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { DatabaseExecutor } from '../../../domain/database.js';
import {
  createRespondent,
  deleteRespondent,
  deleteRespondents,
  getRespondent,
  getRespondentLanguage,
  listRoster,
  MAX_BULK,
  moveRespondent,
  moveRespondents,
  readRosterCsv,
  replaceRoster,
  rosterPage,
  setRespondentLanguageBy,
} from '../../../domain/checkins/roster.js';
import { getDefaultLanguage } from '../../../domain/checkins/settings.js';
import { linksCsv, resendCheckinLink, roundNowState } from '../../../domain/checkins/rounds.js';
import { ApiError } from '../../../contract/errors.js';
import { notice, type Safe } from '../../html.js';
import { actorOf, CHANGERS, changeOutcome, queryText, type ConsoleDeps, type Form } from '../../plugins/index.js';
import { sendPage } from '../../views/layout.js';
import { speakerAndLanguageOf, speakerOf } from '../../views/speaker.js';
import { inWords, spoken } from '../checkins/said.js';
import { languageName } from '../checkins/view.js';
import { chosenOf, PAGE_SIZE, respondentOf, rosterHref, rosterQuery, teamOf, uploadOf } from './form.js';
import { parseMultipart, UPLOAD_LIMIT_BYTES } from './multipart.js';
import { bulkNotice, languageView, peopleView, removeChosenView, type UploadState } from './view.js';

/**
 * The People page (CONTRACT.md section 12, and section 11 amended): owners and admins keep the
 * check-in roster, a page at a time; every change is the operator API's domain call, and leads back
 * to the page and search it was made from (post, redirect, get).
 */
export function registerPeoplePages(scope: FastifyInstance, deps: ConsoleDeps & { db: DatabaseExecutor; mailer?: unknown }) {
  const { db, now } = deps;
  const admin = { config: { roles: CHANGERS } };

  /** The search and page of this request: a page's query, or a change's `back` field. */
  const queryOf = (request: FastifyRequest) =>
    request.method === 'GET'
      ? rosterQuery({ q: queryText(request, 'q'), page: queryText(request, 'page') })
      : rosterQuery(new URLSearchParams(((request.body ?? {}) as Form).back ?? ''));

  const render = async (request: FastifyRequest, reply: FastifyReply, status: number, message?: Safe, upload?: UploadState) => {
    const s = request.member;
    const query = queryOf(request);
    const [roster, { speaker, language }] = await Promise.all([
      rosterPage(db, s.orgId, { ...query, pageSize: PAGE_SIZE }, now()),
      speakerAndLanguageOf(db, request),
    ]);
    return sendPage(reply, status, peopleView({ session: s, roster, query: { ...query, page: roster.page }, language, upload, message, speaker }));
  };
  const peoplePage = (request: FastifyRequest, reply: FastifyReply, status: number, message?: Safe) => render(request, reply, status, message);
  const outcome = changeOutcome(peoplePage, (request) => rosterHref(queryOf(request)));
  const linkFor = (o: string, t: string) => `${deps.baseUrl}/checkin/o/${encodeURIComponent(o)}#${t}`;

  scope.get('/people', admin, async (request, reply) => peoplePage(request, reply, 200));

  scope.post('/people', admin, async (request, reply) =>
    outcome(request, reply, async () => {
      const form = request.body as Form;
      const sp = await speakerOf(db, request);
      await inWords(sp, () => createRespondent(db, request.member.orgId, respondentOf(form), actorOf(request), now()));
      return notice(sp.t('console.people.added', { email: (form.email ?? '').trim() }), 'ok');
    }),
  );
  scope.post<{ Params: { id: string } }>('/people/:id/move', admin, async (request, reply) =>
    outcome(request, reply, async () => {
      const sp = await speakerOf(db, request);
      const person = await inWords(sp, () => getRespondent(db, request.member.orgId, request.params.id));
      await inWords(sp, () => moveRespondent(db, request.member.orgId, request.params.id, teamOf(request.body as Form), actorOf(request), now()));
      return notice(sp.t('console.people.movedOne', { email: person.email }), 'ok');
    }),
  );
  scope.post<{ Params: { id: string } }>('/people/:id/remove', admin, async (request, reply) =>
    outcome(request, reply, async () => {
      const sp = await speakerOf(db, request);
      const person = await inWords(sp, () => getRespondent(db, request.member.orgId, request.params.id));
      await inWords(sp, () => deleteRespondent(db, request.member.orgId, request.params.id, actorOf(request), now()));
      return notice(sp.t('console.people.removedOne', { email: person.email }), 'ok');
    }),
  );
  // One person's mail language: a page of its own, so that the roster's rows stay small.
  scope.get<{ Params: { id: string } }>('/people/:id/language', admin, async (request, reply) => {
    const s = request.member;
    const back = rosterHref(rosterQuery(new URLSearchParams(queryText(request, 'back') ?? ''))).replace(/^\/console\/people\??/, '');
    const sp = await speakerOf(db, request);
    const person = await getRespondentLanguage(db, s.orgId, request.params.id).catch((err: unknown) => {
      if (err instanceof ApiError && err.code === 'not_found') return null;
      throw err;
    });
    if (!person) return peoplePage(request, reply, 404, notice(sp.t('console.people.errGone')));
    if (person.source === 'scim') return peoplePage(request, reply, 400, notice(sp.t('console.people.errScim')));
    return sendPage(reply, 200, languageView(s, person, await getDefaultLanguage(db, s.orgId), back, sp));
  });
  // One person's mail language (issue 57), as the people file's language column sets it: the
  // mails read it when they go, so it applies to every mail not yet sent.
  scope.post<{ Params: { id: string } }>('/people/:id/language', admin, async (request, reply) =>
    outcome(request, reply, async () => {
      const sp = await speakerOf(db, request);
      const person = await inWords(sp, () => getRespondent(db, request.member.orgId, request.params.id));
      const r = await inWords(sp, () =>
        setRespondentLanguageBy(db, request.member.orgId, request.params.id, (request.body as Form).language ?? '', actorOf(request), now()),
      );
      if (r.language !== null) return notice(sp.t('console.people.languageSet', { email: person.email, language: languageName(r.language) }), 'ok');
      const orgDefault = await getDefaultLanguage(db, request.member.orgId);
      return notice(sp.t('console.people.languageCleared', { email: person.email, language: languageName(orgDefault) }), 'ok');
    }),
  );
  // Several people at once (the roster table's checkboxes): a move at once, a removal after a
  // confirmation page that lists them. One transaction each, every person audited as one change.
  scope.post('/people/bulk', admin, async (request, reply) => {
    const form = request.body as Form;
    const ids = chosenOf(form);
    const action = form.removeOne ? 'remove' : form.do;
    if (action === 'remove' && form.confirm !== '1' && ids.length > 0 && ids.length <= MAX_BULK) {
      const chosen: { id: string; email: string }[] = [];
      for (const id of ids) {
        const r = await getRespondent(db, request.member.orgId, id).catch(() => null);
        if (r) chosen.push({ id: r.id, email: r.email });
      }
      if (chosen.length > 0) return sendPage(reply, 200, removeChosenView(request.member, chosen, form.back ?? '', await speakerOf(db, request)));
    }
    return outcome(request, reply, async () => {
      const at = now();
      const sp = await speakerOf(db, request);
      const started = (await roundNowState(db, request.member.orgId, at)).startedAt !== null;
      if (action === 'remove') {
        const r = await inWords(sp, () => deleteRespondents(db, request.member.orgId, ids, actorOf(request), at));
        return notice(bulkNotice(sp, { removed: r.removed.length }, started), 'ok');
      }
      if (action !== 'move') throw new ApiError('invalid_request', sp.t('console.people.errChooseAction'));
      const team = teamOf(form);
      const r = await inWords(sp, () => moveRespondents(db, request.member.orgId, ids, team, actorOf(request), at));
      return notice(bulkNotice(sp, { moved: r.moved.length, team: team === null ? null : team.trim() || null }, started), 'ok');
    });
  });

  // With mail, a change like the others; without, the new link comes back as a one-row links file
  // (the only copy: it is never stored for a later page).
  scope.post<{ Params: { id: string } }>('/people/:id/resend', admin, async (request, reply) => {
    if (deps.mailer) {
      return outcome(request, reply, async () => {
        const sp = await speakerOf(db, request);
        const person = await inWords(sp, () => getRespondent(db, request.member.orgId, request.params.id));
        await inWords(sp, () => resendCheckinLink(db, request.member.orgId, request.params.id, { linkFor, mails: true }, actorOf(request), now()));
        return notice(sp.t('console.people.resent', { email: person.email }), 'ok');
      });
    }
    try {
      const r = await resendCheckinLink(db, request.member.orgId, request.params.id, { linkFor, mails: false }, actorOf(request), now());
      const person = await getRespondent(db, request.member.orgId, request.params.id);
      const team = person.teamId ? ((await listRoster(db, request.member.orgId)).teams.find((t) => t.id === person.teamId)?.name ?? null) : null;
      const csv = linksCsv([{ email: person.email, team, link: r.link! }]);
      return reply.type('text/csv; charset=utf-8').header('content-disposition', `attachment; filename="checkin-link-${r.week}.csv"`).send(csv);
    } catch (err) {
      if (err instanceof ApiError && err.statusCode < 500) {
        return peoplePage(request, reply, err.statusCode, notice(spoken(err, await speakerOf(db, request)).message));
      }
      throw err;
    }
  });

  // The roster file: multipart (an <input type=file>) in this route's own scope, or the pasted
  // text. A refusal lists every error and keeps the text; a header whose columns are not obvious
  // asks which they are, the text kept for that second step.
  void scope.register(async (upload) => {
    upload.addContentTypeParser('multipart/form-data', { parseAs: 'buffer', bodyLimit: UPLOAD_LIMIT_BYTES }, (request, body, done) => {
      try {
        done(null, parseMultipart(body as Buffer, String(request.headers['content-type'] ?? '')));
      } catch (err) {
        done(err as Error, undefined);
      }
    });
    upload.post('/people/replace', { ...admin, bodyLimit: UPLOAD_LIMIT_BYTES }, async (request, reply) => {
      const { text, columns } = uploadOf(request.body as Form);
      const file = readRosterCsv(text, columns);
      if (text.trim() === '') return render(request, reply, 400, notice((await speakerOf(db, request)).t('console.people.emptyUpload')));
      if (file.choose) return render(request, reply, 200, undefined, { text, file });
      if (file.errors.length > 0) return render(request, reply, 400, undefined, { text, file });
      return outcome(request, reply, async () => {
        const sp = await speakerOf(db, request);
        const r = await inWords(sp, () => replaceRoster(db, request.member.orgId, text, actorOf(request), now(), columns));
        return notice(sp.t('console.people.replaced', { ...r }), 'ok');
      });
    });
  });
}
