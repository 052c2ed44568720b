import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { DatabaseExecutor } from '../../../domain/database.js';
import { updateAlertRead } from '../../../domain/alerts.js';
import { alertsInScope } from '../../../domain/team-scope.js';
import { notice, type Safe } from '../../html.js';
import { ApiError } from '../../../contract/errors.js';
import { ALERT_TYPES } from '../../../domain/alert-engine.js';
import { actorOf, CHANGERS, changeOutcome, EVERY_MEMBER, type ConsoleDeps, type Form } from '../../plugins/index.js';
import { sendPage } from '../../views/layout.js';
import { speakerOf } from '../../views/speaker.js';
import type { Speaker } from '../../words.js';
import { alertLines } from './sentences.js';
import { alertsView } from './view.js';

/** A refusal in the reader's words, chosen by its code (the domain's English message only for a code this page does not expect). */
async function inWords<T>(sp: Speaker, work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (err) {
    if (!(err instanceof ApiError)) throw err;
    if (err.code === 'not_found') throw new ApiError(err.code, sp.t('console.alerts.notFound'), err.headers);
    if (err.code === 'invalid_request' && /^A line holds/.test(err.message))
      throw new ApiError(err.code, sp.t('console.alerts.tooMany', { max: MAX_PER_LINE }), err.headers);
    throw err;
  }
}

/** The page lists this many of the newest alerts (GET /alerts answers at most 50 too). */
const PAGE_ALERTS = 50;
/** A line is one group's week: at most one alert of each type the engine raises. */
const MAX_PER_LINE = ALERT_TYPES.length;

/** The alerts page (CONTRACT.md section 11): newest first, unread marked; admins and owners set the read marker; a manager reads their teams' only. */
export function registerAlertPages(scope: FastifyInstance, deps: ConsoleDeps & { db: DatabaseExecutor }) {
  const { db, now } = deps;
  const admin = { config: { roles: CHANGERS } };

  const alertsPage = async (request: FastifyRequest, reply: FastifyReply, status: number, message?: Safe) => {
    const s = request.member;
    const [alerts, speaker] = await Promise.all([alertsInScope(db, s.orgId, request.managedTeams, PAGE_ALERTS), speakerOf(db, request)]);
    return sendPage(reply, status, alertsView({ session: s, alerts, shown: PAGE_ALERTS, message, speaker, scoped: request.managedTeams !== null }));
  };
  const outcome = changeOutcome(alertsPage);

  scope.get('/alerts', { config: { roles: EVERY_MEMBER } }, async (request, reply) => alertsPage(request, reply, 200));

  // The address says which alert and which way; a line of several alerts (one team and week) names
  // the others in `with`, and each is marked by the same operation as PATCH /v1/alerts/{id}.
  for (const read of [true, false]) {
    scope.post<{ Params: { alertId: string }; Body: Form }>(`/alerts/:alertId/${read ? 'read' : 'unread'}`, admin, async (request, reply) =>
      outcome(request, reply, async () => {
        const sp = await speakerOf(db, request);
        return inWords(sp, async () => {
          const others = (request.body?.with ?? '').split(' ').filter((id) => id !== '' && id !== request.params.alertId);
          if (others.length > MAX_PER_LINE - 1) throw new ApiError('invalid_request', `A line holds at most ${MAX_PER_LINE} alerts.`);
          const marked = [];
          for (const id of [request.params.alertId, ...new Set(others)])
            marked.push(await updateAlertRead(db, request.member.orgId, id, read, actorOf(request), now()));
          const [line] = alertLines(marked, sp);
          return notice(sp.t('console.alerts.marked', { read: read ? 'yes' : 'no', count: marked.length, line: line.label }), 'ok');
        });
      }),
    );
  }
}
