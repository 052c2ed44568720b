import type { Alert } from '../../../contract/schemas/alerts.js';
import type { ConsoleSession } from '../../../domain/sessions.js';
import { csrfField, html, type PageOptions, type Safe } from '../../html.js';
import { navFor } from '../../views/nav.js';
import { when } from '../../views/layout.js';

export interface AlertsData {
  session: ConsoleSession;
  /** The newest alerts, newest first, `shown` of them at most. */
  alerts: Alert[];
  shown: number;
  message?: Safe;
}

/** The alerts page: newest first, unread marked; for admins and owners a button that sets the read marker. */
export function alertsView({ session: s, alerts, shown, message }: AlertsData): PageOptions {
  const canChange = s.member.role !== 'viewer';
  const unread = alerts.filter((a) => a.readAt === null).length;
  return {
    title: 'Alerts',
    nav: navFor(s, '/console/alerts'),
    body: html`<h1>Alerts</h1>
${message ?? ''}
<p>The ${shown} newest alerts of ${s.orgName}, newest first; ${unread} unread. Marking one read sets the <code>readAt</code> that <code>GET /v1/alerts</code> shows.</p>
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
  };
}
