import type { ConsoleSession, MemberSession } from '../../../domain/sessions.js';
import { csrfField, html, type PageOptions, type Safe } from '../../html.js';
import { navFor } from '../../views/nav.js';
import { PLAIN, type Speaker } from '../../words.js';

const STAGES: Record<MemberSession['stage'], string> = {
  active: 'signed in',
  totp: 'password given, waiting for the code',
  enroll: 'setting up two-factor',
  passkey: 'waiting for a passkey',
};

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
  /** Dates in the reader's locale and the organization's time zone (PLAIN: en-GB, UTC). */
  speaker?: Speaker;
}): PageOptions {
  const when = (iso: string) => sp.when(iso);
  const others = sessions.filter((x) => !x.current).length;
  return {
    title: 'Sessions',
    nav: navFor(s, '/console/sessions'),
    body: html`<h1>Sessions</h1>
${message ?? ''}
<p>Where you are signed in to this organization's console. A session ends after 12 hours without use, and 7 days after signing in.</p>
<div class="table-scroll" role="region" aria-labelledby="sessions-caption" tabindex="0"><table>
<caption id="sessions-caption">Your sessions, the most recently used first</caption>
<thead><tr><th scope="col">Signed in</th><th scope="col">Last used</th><th scope="col">Address</th><th scope="col">State</th><th scope="col">This session</th></tr></thead>
<tbody>${sessions.map(
      (x) =>
        html`<tr${x.current ? html` class="current"` : ''}><td>${when(x.createdAt)}</td><td>${when(x.lastSeenAt)}</td><td>${x.address ?? 'unknown'}</td><td>${STAGES[x.stage]}</td><td>${x.current ? 'this one' : ''}</td></tr>`,
    )}</tbody>
</table></div>
<p class="muted">The browser of each session is not recorded; its address and times are.</p>
<h2>Sign out everywhere</h2>
${
  others > 0
    ? html`<form method="post" action="/console/sessions/end-others">${csrfField(s.csrfToken)}
<button type="submit" class="secondary">Sign out other sessions</button> <span class="muted">Ends the ${others === 1 ? 'other session' : `${others} other sessions`}; you stay signed in here.</span>
</form>`
    : html`<p>You have no other session.</p>`
}
<form method="post" action="/console/sessions/end-all" data-confirm="Sign out of every session, this one included?">${csrfField(s.csrfToken)}
<button type="submit" class="danger">Sign out everywhere</button> <span class="muted">Ends every session, this one included.</span>
</form>`,
  };
}
