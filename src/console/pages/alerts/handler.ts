import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { DatabaseExecutor } from '../../../domain/database.js';
import { listRecentAlerts, updateAlertRead } from '../../../domain/alerts.js';
import { notice, type Safe } from '../../html.js';
import { actorOf, CHANGERS, changeOutcome, type ConsoleDeps } from '../../plugins/index.js';
import { sendPage } from '../../views/layout.js';
import { alertsView } from './view.js';

/** The page lists this many of the newest alerts (GET /alerts answers at most 50 too). */
const PAGE_ALERTS = 50;

/** The alerts page (CONTRACT.md section 11): newest first, unread marked; admins and owners set the read marker. */
export function registerAlertPages(scope: FastifyInstance, deps: ConsoleDeps & { db: DatabaseExecutor }) {
  const { db, now } = deps;
  const admin = { config: { roles: CHANGERS } };

  const alertsPage = async (request: FastifyRequest, reply: FastifyReply, status: number, message?: Safe) => {
    const s = request.member;
    const alerts = await listRecentAlerts(db, s.orgId, PAGE_ALERTS);
    return sendPage(reply, status, alertsView({ session: s, alerts, shown: PAGE_ALERTS, message }));
  };
  const outcome = changeOutcome(alertsPage);

  scope.get('/alerts', async (request, reply) => alertsPage(request, reply, 200));

  // The buttons carry no field: the address says which alert and which way.
  for (const read of [true, false]) {
    scope.post<{ Params: { alertId: string } }>(`/alerts/:alertId/${read ? 'read' : 'unread'}`, admin, async (request, reply) =>
      outcome(request, reply, async () => {
        const a = await updateAlertRead(db, request.member.orgId, request.params.alertId, read, actorOf(request), now());
        return notice(`Alert marked ${read ? 'read' : 'unread'}: ${a.message.slice(0, 120)}`, 'ok');
      }),
    );
  }
}
