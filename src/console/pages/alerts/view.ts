import type { Alert } from '../../../contract/schemas/alerts.js';
import type { ConsoleSession } from '../../../domain/sessions.js';
import { csrfField, html, type PageOptions, type Safe } from '../../html.js';
import { navFor } from '../../views/nav.js';
import { PLAIN, type Speaker } from '../../words.js';
import { alertLines, type AlertLine } from './sentences.js';

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
  const { t } = speaker;
  const canChange = s.member.role === 'owner' || s.member.role === 'admin';
  const lines = alertLines(alerts, speaker);
  const unread = lines.filter((l) => l.unread).length;
  const readAt = (l: AlertLine) => l.alerts.map((a) => a.readAt).find((r) => r !== null) ?? null;
  const code = (chunks: Safe) => html`<code>${chunks}</code>`;
  return {
    title: t('console.alerts.title'),
    speaker,
    nav: navFor(s, '/console/alerts'),
    body: html`<h1>${t('console.alerts.title')}</h1>
${message ?? ''}
<p>${scoped ? t('console.alerts.introTeams', { shown, unread }) : speaker.rich('console.alerts.intro', { shown, unread, org: html`<bdi>${s.orgName}</bdi>` })}</p>
${
  lines.length === 0
    ? html`<p>${t('console.alerts.none')}</p>`
    : html`<div class="table-scroll" role="region" aria-labelledby="alerts-caption" tabindex="0"><table>
<caption id="alerts-caption">${t('console.alerts.caption')}</caption>
<thead><tr><th scope="col">${t('console.alerts.colState')}</th><th scope="col">${t('console.alerts.colRaised')}</th><th scope="col">${t('console.alerts.colWhat')}</th>${canChange ? html`<th scope="col">${t('console.alerts.colChange')}</th>` : ''}</tr></thead>
<tbody>${lines.map((l) => {
        const first = l.alerts[0];
        return html`<tr${l.unread ? html` class="unread"` : ''}>
<td>${l.unread ? t('console.alerts.unread') : t('console.alerts.read', { at: speaker.when(readAt(l), '') })}</td><td>${speaker.when(l.createdAt)}</td><td class="wrap">${l.sentence}</td>
${
  canChange
    ? html`<td><form method="post" action="/console/alerts/${encodeURIComponent(first.id)}/${l.unread ? 'read' : 'unread'}">${csrfField(s.csrfToken)}${
        l.alerts.length > 1 ? html`<input type="hidden" name="with" value="${withIds(l)}">` : ''
      }
<button type="submit" class="secondary" aria-label="${t('console.alerts.markLabel', { read: l.unread ? 'yes' : 'no', line: l.label })}">${l.unread ? t('console.alerts.markRead') : t('console.alerts.markUnread')}</button></form></td>`
    : ''
}</tr>`;
      })}</tbody>
</table></div>`
}
${canChange ? '' : html`<p class="muted">${scoped ? t('console.alerts.managers') : t('console.alerts.viewers')}</p>`}
${
  scoped
    ? ''
    : html`<details class="developers"><summary>${t('console.alerts.developers')}</summary><p>${speaker.rich(
        'console.alerts.api',
        { list: 'GET /v1/alerts', type: 'type', readAt: 'readAt' },
        { code },
      )}</p></details>`
}`,
  };
}
