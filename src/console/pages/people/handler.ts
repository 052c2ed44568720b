import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { DatabaseExecutor } from '../../../domain/database.js';
import {
  createRespondent,
  deleteRespondent,
  deleteRespondents,
  getRespondent,
  listRoster,
  MAX_BULK,
  moveRespondent,
  moveRespondents,
  readRosterCsv,
  replaceRoster,
  rosterPage,
} from '../../../domain/checkins/roster.js';
import { linksCsv, resendCheckinLink, roundNowState } from '../../../domain/checkins/rounds.js';
import { ApiError } from '../../../contract/errors.js';
import { notice, type Safe } from '../../html.js';
import { actorOf, CHANGERS, changeOutcome, queryText, type ConsoleDeps, type Form } from '../../plugins/index.js';
import { sendPage } from '../../views/layout.js';
import { chosenOf, PAGE_SIZE, respondentOf, rosterHref, rosterQuery, teamOf, uploadOf } from './form.js';
import { parseMultipart, UPLOAD_LIMIT_BYTES } from './multipart.js';
import { BULK_WORDS, peopleView, removeChosenView, type UploadState } from './view.js';

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
    const roster = await rosterPage(db, s.orgId, { ...query, pageSize: PAGE_SIZE }, now());
    return sendPage(reply, status, peopleView({ session: s, roster, query: { ...query, page: roster.page }, upload, message }));
  };
  const peoplePage = (request: FastifyRequest, reply: FastifyReply, status: number, message?: Safe) => render(request, reply, status, message);
  const outcome = changeOutcome(peoplePage, (request) => rosterHref(queryOf(request)));
  const linkFor = (o: string, t: string) => `${deps.baseUrl}/checkin/o/${encodeURIComponent(o)}#${t}`;

  scope.get('/people', admin, async (request, reply) => peoplePage(request, reply, 200));

  scope.post('/people', admin, async (request, reply) =>
    outcome(request, reply, async () => {
      const form = request.body as Form;
      await createRespondent(db, request.member.orgId, respondentOf(form), actorOf(request), now());
      return notice(`${(form.email ?? '').trim()} added. They get their first link with the next round.`, 'ok');
    }),
  );
  scope.post<{ Params: { id: string } }>('/people/:id/move', admin, async (request, reply) =>
    outcome(request, reply, async () => {
      const person = await getRespondent(db, request.member.orgId, request.params.id);
      await moveRespondent(db, request.member.orgId, request.params.id, teamOf(request.body as Form), actorOf(request), now());
      return notice(`${person.email}: team changed; it applies from the next round.`, 'ok');
    }),
  );
  scope.post<{ Params: { id: string } }>('/people/:id/remove', admin, async (request, reply) =>
    outcome(request, reply, async () => {
      const person = await getRespondent(db, request.member.orgId, request.params.id);
      await deleteRespondent(db, request.member.orgId, request.params.id, actorOf(request), now());
      return notice(
        `${person.email} removed from the roster. This week's link, if they had one, keeps working until the week ends: the change applies from the next round.`,
        'ok',
      );
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
      if (chosen.length > 0) return sendPage(reply, 200, removeChosenView(request.member, chosen, form.back ?? ''));
    }
    return outcome(request, reply, async () => {
      const at = now();
      const started = (await roundNowState(db, request.member.orgId, at)).startedAt !== null;
      if (action === 'remove') {
        const r = await deleteRespondents(db, request.member.orgId, ids, actorOf(request), at);
        return notice(`${BULK_WORDS.removed(r.removed.length)} ${BULK_WORDS.fixed(started)}`, 'ok');
      }
      if (action !== 'move') throw new ApiError('invalid_request', 'Choose to move or to remove the chosen people.');
      const team = teamOf(form);
      const r = await moveRespondents(db, request.member.orgId, ids, team, actorOf(request), at);
      return notice(`${BULK_WORDS.moved(r.moved.length, team === null ? null : team.trim() || null)} ${BULK_WORDS.fixed(started)}`, 'ok');
    });
  });

  // With mail, a change like the others; without, the new link comes back as a one-row links file
  // (the only copy: it is never stored for a later page).
  scope.post<{ Params: { id: string } }>('/people/:id/resend', admin, async (request, reply) => {
    if (deps.mailer) {
      return outcome(request, reply, async () => {
        const person = await getRespondent(db, request.member.orgId, request.params.id);
        await resendCheckinLink(db, request.member.orgId, request.params.id, { linkFor, mails: true }, actorOf(request), now());
        return notice(`A new link goes to ${person.email} by email within a minute. Their earlier link keeps working.`, 'ok');
      });
    }
    try {
      const r = await resendCheckinLink(db, request.member.orgId, request.params.id, { linkFor, mails: false }, actorOf(request), now());
      const person = await getRespondent(db, request.member.orgId, request.params.id);
      const team = person.teamId ? ((await listRoster(db, request.member.orgId)).teams.find((t) => t.id === person.teamId)?.name ?? null) : null;
      const csv = linksCsv([{ email: person.email, team, link: r.link! }]);
      return reply.type('text/csv; charset=utf-8').header('content-disposition', `attachment; filename="checkin-link-${r.week}.csv"`).send(csv);
    } catch (err) {
      if (err instanceof ApiError && err.statusCode < 500) return peoplePage(request, reply, err.statusCode, notice(err.message));
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
      if (text.trim() === '') return render(request, reply, 400, notice('Choose a CSV file, or paste its text, before replacing the roster.'));
      if (file.choose) return render(request, reply, 200, undefined, { text, file });
      if (file.errors.length > 0) return render(request, reply, 400, undefined, { text, file });
      return outcome(request, reply, async () => {
        const r = await replaceRoster(db, request.member.orgId, text, actorOf(request), now(), columns);
        return notice(`Roster replaced: ${r.added} added, ${r.removed} removed, ${r.moved} moved, ${r.unchanged} unchanged.`, 'ok');
      });
    });
  });
}
