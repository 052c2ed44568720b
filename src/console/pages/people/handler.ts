import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { DatabaseExecutor } from '../../../domain/database.js';
import { createRespondent, listRoster, moveRespondent, deleteRespondent, replaceRoster } from '../../../domain/checkins/roster.js';
import { getCheckinSettings, updateCheckinSettings } from '../../../domain/checkins/settings.js';
import { exportWeekLinks, linksCsv, participation } from '../../../domain/checkins/rounds.js';
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
    const [roster, settings, counts] = await Promise.all([listRoster(db, s.orgId), getCheckinSettings(db, s.orgId), participation(db, s.orgId, now())]);
    return sendPage(reply, status, peopleView({ session: s, roster, settings, counts, mails: Boolean(deps.mailer), message }));
  };
  const outcome = changeOutcome(peoplePage);

  scope.get('/people', admin, async (request, reply) => peoplePage(request, reply, 200));

  scope.post('/people', admin, async (request, reply) =>
    outcome(request, reply, async () => {
      const form = request.body as Form;
      await createRespondent(db, request.member.orgId, respondentOf(form), actorOf(request), now());
      return notice(`${(form.email ?? '').trim()} added.`, 'ok');
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
      return notice('Removed from the roster.', 'ok');
    }),
  );
  scope.post('/people/replace', admin, async (request, reply) =>
    outcome(request, reply, async () => {
      const r = await replaceRoster(db, request.member.orgId, (request.body as Form).csv ?? '', actorOf(request), now());
      return notice(`Roster replaced: ${r.added} added, ${r.removed} removed, ${r.moved} moved, ${r.unchanged} unchanged.`, 'ok');
    }),
  );
  scope.post('/people/settings', admin, async (request, reply) =>
    outcome(request, reply, async () => {
      await updateCheckinSettings(db, request.member.orgId, settingsOf(request.body as Form), actorOf(request), now());
      return notice('Check-in settings saved.', 'ok');
    }),
  );
  // A file download, not a change shown on a page: the links exist in this answer only.
  scope.post('/people/links', admin, async (request, reply) => {
    const linkFor = (o: string, t: string) => `${deps.baseUrl}/checkin/o/${encodeURIComponent(o)}#${t}`;
    const { week, links } = await exportWeekLinks(db, request.member.orgId, { linkFor }, actorOf(request), now());
    const csv = linksCsv(links);
    return reply.type('text/csv; charset=utf-8').header('content-disposition', `attachment; filename="checkin-links-${week}.csv"`).send(csv);
  });
}
