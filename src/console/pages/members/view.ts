import type { ConsoleSession } from '../../../domain/sessions.js';
import { MEMBER_ROLES, type InvitationView, type MemberRole, type MemberView } from '../../../domain/members.js';
import { csrfField, html, type PageOptions, type Safe } from '../../html.js';
import { navFor } from '../../views/nav.js';
import { PLAIN, type Speaker } from '../../words.js';
import { TEAM_FIELD } from './form.js';

/** The roles in plain words: what each lets a member do (the invitation form and the members table). */
export const ROLE_WORDS: Record<MemberRole, { name: string; does: string }> = {
  owner: { name: 'Owner', does: 'does everything, including members and the security settings' },
  admin: { name: 'Admin', does: 'manages keys, webhooks, actions, alerts and the roster, and hides comments' },
  viewer: { name: 'Viewer', does: 'reads every page and changes nothing' },
  manager: {
    name: 'Manager',
    does: 'reads the overview, alerts, actions and comments of the teams you tick below, and nothing else: not the whole organization, not other teams',
  },
};

const W = {
  teamsLegend: 'Teams (for a manager only)',
  teamsHelp:
    'Tick the teams whose figures the manager sees. A team with fewer than 5 answers in a week shows no figures for that week, to them as to everyone.',
  teamsOfLegend: (email: string) => `Teams of ${email} (for a manager only)`,
  teamsSummary: 'Teams (for a manager)',
  // The visible words first (WCAG 2.5.3), then whose; as a name, not hidden text: a hidden element
  // in the table's scrolling region would widen a phone's page past it.
  teamsSummaryOf: (email: string) => `Teams (for a manager) of ${email}`,
  noTeams: 'This organization has no teams yet: a manager needs at least one (teams come from the People page or the API).',
  managerOf: (names: string[]) => `manager of ${names.join(', ')}`,
};

export interface MembersData {
  session: ConsoleSession;
  members: MemberView[];
  invitations: InvitationView[];
  /** Whether the organization requires two-factor of every member. */
  required: boolean;
  /** The organization's teams: a manager's are chosen among them. */
  teams?: { id: string; name: string }[];
  message?: Safe;
  /** The owner's passkey setting (src/console/pages/passkeys/view.ts). */
  passkeys?: Safe;
  /** Dates in the reader's locale and the organization's time zone (PLAIN: en-GB, UTC). */
  speaker?: Speaker;
}

/** The members page (owners): members and their roles, invitations, and the two-factor requirement. */
export function membersView({ session: s, members, invitations, required, teams = [], message, passkeys, speaker: sp = PLAIN }: MembersData): PageOptions {
  const when = (iso: string | null) => sp.when(iso);
  const roleOptions = (current: string) =>
    MEMBER_ROLES.map((r) => html`<option value="${r}"${r === current ? html` selected` : ''}>${ROLE_WORDS[r].name.toLowerCase()}</option>`);
  const teamName = new Map(teams.map((t) => [t.id, t.name]));
  const roleText = (role: MemberRole, ids: string[] | undefined) =>
    role === 'manager' ? W.managerOf((ids ?? []).map((id) => teamName.get(id) ?? id)) : ROLE_WORDS[role].name.toLowerCase();
  const teamBoxes = (prefix: string, ticked: readonly string[]) =>
    teams.length === 0
      ? html`<p class="muted">${W.noTeams}</p>`
      : html`${teams.map(
          (t, i) =>
            html`<span><input type="checkbox" name="${TEAM_FIELD}${t.id}" id="${prefix}-${i}"${ticked.includes(t.id) ? html` checked` : ''}> <label for="${prefix}-${i}"><bdi>${t.name}</bdi></label></span>`,
        )}`;
  return {
    title: 'Members',
    nav: navFor(s, '/console/members'),
    body: html`<h1>Members</h1>
${message ?? ''}
<div class="table-scroll" role="region" aria-labelledby="members-caption" tabindex="0"><table>
<caption id="members-caption">Members of ${s.orgName}</caption>
<thead><tr><th scope="col">Email</th><th scope="col">Role</th><th scope="col">Two-factor</th><th scope="col">Joined</th><th scope="col">Last sign-in</th><th scope="col">Change</th></tr></thead>
<tbody>
${members.map(
  (m) => html`<tr>
<td>${m.email}</td><td>${roleText(m.role, m.teams)}</td><td>${m.twoFactor ? 'on' : 'off'}</td><td>${when(m.createdAt)}</td>
<td>${when(m.lastSignInAt)}</td>
<td>
<form method="post" action="/console/members/${encodeURIComponent(m.id)}/role" class="stack">${csrfField(s.csrfToken)}
<label for="f-role-${m.id}">Role of ${m.email}</label> <select name="role" id="f-role-${m.id}">${roleOptions(m.role)}</select>
<details${m.role === 'manager' ? html` open` : ''}><summary aria-label="${W.teamsSummaryOf(m.email)}">${W.teamsSummary}</summary><fieldset class="checks" aria-label="${W.teamsOfLegend(m.email)}">${teamBoxes(`f-teams-${m.id}`, m.teams ?? [])}</fieldset></details>
<button type="submit" class="secondary" aria-label="Change role of ${m.email}">Change role</button></form>
<form method="post" action="/console/members/${encodeURIComponent(m.id)}/remove" data-confirm="Remove ${m.email}? Their sessions end at once.">${csrfField(s.csrfToken)}
<button type="submit" class="danger" aria-label="Remove ${m.email}">Remove</button></form>
</td></tr>`,
)}
</tbody>
</table></div>
<h2>Invite a member</h2>
<form method="post" action="/console/members/invite" class="stack">
${csrfField(s.csrfToken)}
<label for="f-email">Email</label> <input type="email" name="email" required maxlength="254" id="f-email">
<dl class="facts" id="f-role-words">${MEMBER_ROLES.map((r) => html`<dt>${ROLE_WORDS[r].name}</dt><dd>${ROLE_WORDS[r].does}</dd>`)}</dl>
<label for="f-role">Role</label> <select name="role" id="f-role" aria-describedby="f-role-words">${MEMBER_ROLES.map(
      (r) => html`<option value="${r}"${r === 'viewer' ? html` selected` : ''}>${ROLE_WORDS[r].name}</option>`,
    )}</select>
<fieldset class="checks" aria-describedby="f-teams-help"><legend>${W.teamsLegend}</legend>
<p class="muted" id="f-teams-help">${W.teamsHelp}</p>
${teamBoxes('f-team', [])}
</fieldset>
<button type="submit">Invite</button>
</form>
${
  invitations.length > 0
    ? html`<div class="table-scroll" role="region" aria-labelledby="invitations-caption" tabindex="0"><table><caption id="invitations-caption">Invitations not yet accepted</caption>
<thead><tr><th scope="col">Email</th><th scope="col">Role</th><th scope="col">Invited by</th><th scope="col">Expires</th><th scope="col">Change</th></tr></thead>
<tbody>${invitations.map(
        (
          i,
        ) => html`<tr><td>${i.email}</td><td>${roleText(i.role, i.teams)}</td><td>${i.invitedBy === null ? 'operator' : (members.find((m) => m.id === i.invitedBy)?.email ?? i.invitedBy)}</td><td>${when(i.expiresAt)}</td>
<td><form method="post" action="/console/members/invitations/${encodeURIComponent(i.id)}/revoke" data-confirm="Revoke the invitation of ${i.email}? Its link stops working at once.">${csrfField(s.csrfToken)}
<button type="submit" class="danger" aria-label="Revoke invitation of ${i.email}">Revoke</button></form></td></tr>`,
      )}</tbody></table></div>`
    : ''
}
<h2>Two-factor authentication</h2>
<form method="post" action="/console/members/two-factor" class="stack">
${csrfField(s.csrfToken)}
<p>${required ? 'Every member must use two-factor authentication.' : 'Two-factor authentication is optional for members.'}</p>
<input type="hidden" name="required" value="${required ? 'false' : 'true'}">
<button type="submit" class="secondary">${required ? 'Stop requiring two-factor' : 'Require two-factor for every member'}</button>
</form>
${passkeys ?? ''}`,
  };
}

/** Without SMTP_URL: the new invitation's link, shown once to the inviting owner, and why the address is unproven. */
export const invitationLinkBox = (inv: { email: string; role: string }, url: string, until: string) =>
  html`<div class="notice ok" role="status"><p>Invitation for ${inv.email} (${inv.role}) created. Send them this link; it works once, until ${until}, and is shown only now:</p>
<code class="secret" id="invitation-link">${url}</code> <button type="button" class="secondary" data-copy="invitation-link" hidden>Copy link</button>
<p><strong>The address is unproven:</strong> this service sends no email (no SMTP_URL), so whoever opens the link becomes this member. Give it to them yourself, over a channel you trust.</p></div>`;

/** The account page: any member's own password, two-factor and passkeys (`passkeys`: src/console/pages/passkeys/view.ts). */
export function accountView({ session: s, message, passkeys }: { session: ConsoleSession; message?: Safe; passkeys?: Safe }): PageOptions {
  return {
    title: 'Account',
    nav: navFor(s, '/console/account'),
    body: html`<h1>Account</h1>
${message ?? ''}
<p>Signed in as <strong>${s.member.email}</strong> (${s.member.role}). Two-factor authentication is ${s.member.twoFactor ? 'on' : 'off'}.</p>
<p><a href="/console/two-factor/enroll">${s.member.twoFactor ? 'Set up a new authenticator app' : 'Turn on two-factor authentication'}</a></p>
${passkeys ?? ''}
<h2>Change password</h2>
<form method="post" action="/console/account/password" class="stack">
${csrfField(s.csrfToken)}
<input type="email" name="username" value="${s.member.email}" autocomplete="username" hidden>
<label for="f-current">Current password</label> <input type="password" name="current" autocomplete="current-password" required id="f-current">
<label for="f-next">New password</label> <input type="password" name="next" autocomplete="new-password" required minlength="12" id="f-next">
<button type="submit">Change password</button>
</form>
<p class="muted">Changing the password ends every session of yours, this one too.</p>`,
  };
}
