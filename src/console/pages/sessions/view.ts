import type { ConsoleSession, MemberSession } from '../../../domain/sessions.js';
import { csrfField, html, type PageOptions, type Safe } from '../../html.js';
import { navFor } from '../../views/nav.js';
import { PLAIN, type Speaker } from '../../words.js';

/** The member's own sessions, the current one marked, and the two ways to sign out everywhere. */
export function sessionsView({
  session: s,
  sessions,
  message,
  speaker: sp = PLAIN,
}: {
  session: ConsoleSession;
  sessions: MemberSession[];
  message?: Safe;
  /** The reader's words, and dates in their locale and the organization's time zone (PLAIN: English, UTC). */
  speaker?: Speaker;
}): PageOptions {
  const { t } = sp;
  const when = (iso: string) => sp.when(iso);
  const others = sessions.filter((x) => !x.current).length;
  return {
    title: t('console.sessions.title'),
    speaker: sp,
    nav: navFor(s, '/console/sessions'),
    body: html`<h1>${t('console.sessions.title')}</h1>
${message ?? ''}
<p>${t('console.sessions.intro')}</p>
<div class="table-scroll" role="region" aria-labelledby="sessions-caption" tabindex="0"><table>
<caption id="sessions-caption">${t('console.sessions.caption')}</caption>
<thead><tr><th scope="col">${t('console.sessions.signedIn')}</th><th scope="col">${t('console.sessions.lastUsed')}</th><th scope="col">${t('console.sessions.address')}</th><th scope="col">${t('console.sessions.state')}</th><th scope="col">${t('console.sessions.thisSession')}</th></tr></thead>
<tbody>${sessions.map(
      (x) =>
        html`<tr${x.current ? html` class="current"` : ''}><td>${when(x.createdAt)}</td><td>${when(x.lastSeenAt)}</td><td>${x.address ?? t('console.sessions.unknownAddress')}</td><td>${t('console.sessions.stage', { stage: x.stage })}</td><td>${x.current ? t('console.sessions.thisOne') : ''}</td></tr>`,
    )}</tbody>
</table></div>
<p class="muted">${t('console.sessions.notRecorded')}</p>
<h2>${t('console.sessions.everywhere')}</h2>
${
  others > 0
    ? html`<form method="post" action="/console/sessions/end-others">${csrfField(s.csrfToken)}
<button type="submit" class="secondary">${t('console.sessions.endOthers')}</button> <span class="muted">${t('console.sessions.endOthersHelp', { others })}</span>
</form>`
    : html`<p>${t('console.sessions.noOthers')}</p>`
}
<form method="post" action="/console/sessions/end-all" data-confirm="${t('console.sessions.endAllConfirm')}">${csrfField(s.csrfToken)}
<button type="submit" class="danger">${t('console.sessions.endAll')}</button> <span class="muted">${t('console.sessions.endAllHelp')}</span>
</form>`,
  };
}
