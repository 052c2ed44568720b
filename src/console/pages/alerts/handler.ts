import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { DatabaseExecutor } from '../../../domain/database.js';
import { listRecentAlerts, setAlertRead } from '../../../domain/alerts.js';
import { csrfField, html, notice, type Safe } from '../../html.js';
import { actorOf, CHANGERS, changeOutcome, type ConsoleDeps, type Form } from '../../plugins/index.js';
import { navFor } from '../../views/nav.js';
import { sendPage, when } from '../../views/layout.js';

/** The page lists this many of the newest alerts (GET /alerts answers at most 50 too). */
const PAGE_ALERTS = 50;

/** The alerts page (CONTRACT.md section 11): newest first, unread marked; admins and owners set the read marker. */
export function registerAlertPages(scope: FastifyInstance, deps: ConsoleDeps & { db: DatabaseExecutor }) {
  const { db, now } = deps;

  const alertsPage = async (request: FastifyRequest, reply: FastifyReply, status: number, message?: Safe) => {
    const s = request.member;
    const canChange = s.member.role !== 'viewer';
    const alerts = await listRecentAlerts(db, s.orgId, PAGE_ALERTS);
    const unread = alerts.filter((a) => a.readAt === null).length;
    return sendPage(reply, status, {
      title: 'Alerts',
      nav: navFor(s, '/console/alerts'),
      body: html`<h1>Alerts</h1>
${message ?? ''}
<p>The ${PAGE_ALERTS} newest alerts of ${s.orgName}, newest first; ${unread} unread. Marking one read sets the <code>readAt</code> that <code>GET /v1/alerts</code> shows.</p>
${
  alerts.length === 0
    ? html`<p>No alerts yet.</p>`
    : html`<table>
<caption>Alerts, newest first</caption>
<thead><tr><th scope="col">State</th><th scope="col">Raised</th><th scope="col">Type</th><th scope="col">Week</th><th scope="col">Team</th><th scope="col">Message</th>${canChange ? html`<th scope="col">Change</th>` : ''}</tr></thead>
<tbody>${alerts.map(
        (a) => html`<tr${a.readAt === null ? html` class="unread"` : ''}>
<td>${a.readAt === null ? 'Unread' : html`Read ${when(a.readAt)}`}</td><td>${when(a.createdAt)}</td><td>${a.type}</td><td>${a.weekISO ?? ''}</td><td><bdi>${a.subteamName ?? ''}</bdi></td><td class="wrap"><bdi>${a.message}</bdi></td>
${
  canChange
    ? html`<td><form method="post" action="/console/alerts/${encodeURIComponent(a.id)}/${a.readAt === null ? 'read' : 'unread'}">${csrfField(s.csrfToken)}
<button type="submit" class="secondary" aria-label="${a.readAt === null ? 'Mark read' : 'Mark unread'}: ${a.message.slice(0, 80)}">${a.readAt === null ? 'Mark read' : 'Mark unread'}</button></form></td>`
    : ''
}</tr>`,
      )}</tbody>
</table>`
}
${canChange ? '' : html`<p class="muted">Viewers can read alerts but not mark them.</p>`}`,
    });
  };
  const outcome = changeOutcome(alertsPage);
  const admin = { config: { roles: CHANGERS } };

  scope.get('/alerts', async (request, reply) => alertsPage(request, reply, 200));
  for (const read of [true, false]) {
    scope.post<{ Params: { alertId: string }; Body: Form }>(`/alerts/:alertId/${read ? 'read' : 'unread'}`, admin, async (request, reply) =>
      outcome(request, reply, async () => {
        const a = await setAlertRead(db, request.member.orgId, request.params.alertId, read, actorOf(request), now());
        return notice(`Alert marked ${read ? 'read' : 'unread'}: ${a.message.slice(0, 120)}`, 'ok');
      }),
    );
  }
}
