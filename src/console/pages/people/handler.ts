import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { DatabaseExecutor } from '../../../domain/database.js';
import { createRespondent, getRespondent, listRoster, moveRespondent, deleteRespondent, replaceRoster } from '../../../domain/checkins/roster.js';
import { getCheckinSettings, updateCheckinSettings } from '../../../domain/checkins/settings.js';
import { exportWeekLinks, linksCsv, linksFileState, participation, resendCheckinLink } from '../../../domain/checkins/rounds.js';
import { ApiError } from '../../../contract/errors.js';
import { notice, type Safe } from '../../html.js';
import { actorOf, CHANGERS, changeOutcome, type ConsoleDeps, type Form } from '../../plugins/index.js';
import { sendPage } from '../../views/layout.js';
import { respondentOf, settingsOf, teamOf } from './form.js';
import { peopleView } from './view.js';

/**
 * The People page (CONTRACT.md section 12): owners and admins keep the check-in roster, the round's
 * settings and word list; every change is the operator API's domain call.
 */
export function registerPeoplePages(scope: FastifyInstance, deps: ConsoleDeps & { db: DatabaseExecutor; mailer?: unknown }) {
  const { db, now } = deps;
  const admin = { config: { roles: CHANGERS } };

  const peoplePage = async (request: FastifyRequest, reply: FastifyReply, status: number, message?: Safe) => {
    const s = request.member;
    const [roster, settings, counts, links] = await Promise.all([
      listRoster(db, s.orgId),
      getCheckinSettings(db, s.orgId),
      participation(db, s.orgId, now()),
      linksFileState(db, s.orgId, now()),
    ]);
    return sendPage(reply, status, peopleView({ session: s, roster, settings, counts, links, mails: Boolean(deps.mailer), message }));
  };
  const outcome = changeOutcome(peoplePage);
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
      await moveRespondent(db, request.member.orgId, request.params.id, teamOf(request.body as Form), actorOf(request), now());
      return notice('Team changed; it applies from the next round.', 'ok');
    }),
  );
  scope.post<{ Params: { id: string } }>('/people/:id/remove', admin, async (request, reply) =>
    outcome(request, reply, async () => {
      await deleteRespondent(db, request.member.orgId, request.params.id, actorOf(request), now());
      return notice(
        "Removed from the roster. This week's link, if they had one, keeps working until the week ends: the change applies from the next round.",
        'ok',
      );
    }),
  );
  // With mail, a change like the others; without, the new link comes back as a one-row links file
  // (the only copy: it is never stored for a later page).
  scope.post<{ Params: { id: string } }>('/people/:id/resend', admin, async (request, reply) => {
    if (deps.mailer) {
      return outcome(request, reply, async () => {
        await resendCheckinLink(db, request.member.orgId, request.params.id, { linkFor, mails: true }, actorOf(request), now());
        return notice('A new link goes to them by email within a minute. Their earlier link keeps working.', 'ok');
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
  scope.post('/people/replace', admin, async (request, reply) =>
    outcome(request, reply, async () => {
      const r = await replaceRoster(db, request.member.orgId, (request.body as Form).csv ?? '', actorOf(request), now());
      return notice(`Roster replaced: ${r.added} added, ${r.removed} removed, ${r.moved} moved, ${r.unchanged} unchanged.`, 'ok');
    }),
  );
  scope.post('/people/settings', admin, async (request, reply) =>
    outcome(request, reply, async () => {
      await updateCheckinSettings(db, request.member.orgId, settingsOf(request.body as Form), actorOf(request), now());
      return notice(
        'Check-in settings saved. Reasons and flag words apply from the next round; this week is judged by those in force when its round started.',
        'ok',
      );
    }),
  );
  // A file download, not a change shown on a page: the links exist in this answer only. A refusal
  // (mail is on; the links were handed out and new ones were not asked for) is the page, saying why.
  scope.post('/people/links', admin, async (request, reply) => {
    try {
      const renew = (request.body as Form).renew === '1';
      const { week, links } = await exportWeekLinks(db, request.member.orgId, { linkFor, mails: Boolean(deps.mailer), renew }, actorOf(request), now());
      const csv = linksCsv(links);
      return reply.type('text/csv; charset=utf-8').header('content-disposition', `attachment; filename="checkin-links-${week}.csv"`).send(csv);
    } catch (err) {
      if (err instanceof ApiError && err.statusCode < 500) return peoplePage(request, reply, err.statusCode, notice(err.message));
      throw err;
    }
  });
}
