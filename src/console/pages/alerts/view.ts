import type { Alert } from '../../../contract/schemas/alerts.js';
import type { ConsoleSession } from '../../../domain/sessions.js';
import { csrfField, html, type PageOptions, type Safe } from '../../html.js';
import { navFor } from '../../views/nav.js';
import { PLAIN, type Speaker } from '../../words.js';
import { alertLines, type AlertLine } from './sentences.js';

/** The page's words (English until the catalogue takes them). */
const W = {
  title: 'Alerts',
  intro: (shown: number, org: Safe, unread: string) =>
    html`The newest alerts of <bdi>${org}</bdi> (up to ${shown}), newest first. The alerts of one team and week are one line. ${unread}`,
  introTeams: (shown: number, unread: string) =>
    `The newest alerts of the teams you manage (up to ${shown}), newest first; alerts of other teams and of the whole organization are not shown. The alerts of one team and week are one line. ${unread}`,
  managers: 'Managers can read alerts but not mark them.',
  unreadCount: (n: number) => (n === 0 ? 'None is unread.' : `${n} unread.`),
  none: 'No alerts yet.',
  caption: 'Alerts, newest first',
  columns: { state: 'State', raised: 'Raised', what: 'What happened', change: 'Change' },
  unread: 'Unread',
  read: (at: string) => `Read ${at}`,
  markRead: 'Mark read',
  markUnread: 'Mark unread',
  viewers: 'Viewers can read alerts but not mark them.',
  developers: 'For developers',
  api: html`Each line is one or more alerts of <code>GET /v1/alerts</code> (the engine raises a low level, a drop and fewer answers of one team and week as separate alerts, each with its <code>type</code>). Marking a line read sets the <code>readAt</code> of each of its alerts.`,
};

export interface AlertsData {
  session: ConsoleSession;
  /** The newest alerts, newest first, `shown` of them at most. */
  alerts: Alert[];
  shown: number;
  message?: Safe;
  speaker?: Speaker;
  /** A manager's page: their teams' alerts only. */
  scoped?: boolean;
}

/** The alerts that a line's button marks besides the one its address names: the hidden field `with`. */
export const withIds = (line: AlertLine) =>
  line.alerts
    .slice(1)
    .map((a) => a.id)
    .join(' ');

/** The alerts page: one sentence per team and week, newest first, unread marked; for admins and owners a button that sets the read marker. */
export function alertsView({ session: s, alerts, shown, message, speaker = PLAIN, scoped = false }: AlertsData): PageOptions {
  const canChange = s.member.role === 'owner' || s.member.role === 'admin';
  const lines = alertLines(alerts, speaker);
  const unread = lines.filter((l) => l.unread).length;
  const readAt = (l: AlertLine) => l.alerts.map((a) => a.readAt).find((r) => r !== null) ?? null;
  return {
    title: W.title,
    nav: navFor(s, '/console/alerts'),
    body: html`<h1>${W.title}</h1>
${message ?? ''}
<p>${scoped ? W.introTeams(shown, W.unreadCount(unread)) : W.intro(shown, html`${s.orgName}`, W.unreadCount(unread))}</p>
${
  lines.length === 0
    ? html`<p>${W.none}</p>`
    : html`<table>
<caption>${W.caption}</caption>
<thead><tr><th scope="col">${W.columns.state}</th><th scope="col">${W.columns.raised}</th><th scope="col">${W.columns.what}</th>${canChange ? html`<th scope="col">${W.columns.change}</th>` : ''}</tr></thead>
<tbody>${lines.map((l) => {
        const verb = l.unread ? W.markRead : W.markUnread;
        const first = l.alerts[0];
        return html`<tr${l.unread ? html` class="unread"` : ''}>
<td>${l.unread ? W.unread : W.read(speaker.when(readAt(l)))}</td><td>${speaker.when(l.createdAt)}</td><td class="wrap">${l.sentence}</td>
${
  canChange
    ? html`<td><form method="post" action="/console/alerts/${encodeURIComponent(first.id)}/${l.unread ? 'read' : 'unread'}">${csrfField(s.csrfToken)}${
        l.alerts.length > 1 ? html`<input type="hidden" name="with" value="${withIds(l)}">` : ''
      }
<button type="submit" class="secondary" aria-label="${verb}: ${l.label}">${verb}</button></form></td>`
    : ''
}</tr>`;
      })}</tbody>
</table>`
}
${canChange ? '' : html`<p class="muted">${scoped ? W.managers : W.viewers}</p>`}
${scoped ? '' : html`<details class="developers"><summary>${W.developers}</summary><p>${W.api}</p></details>`}`,
  };
}
