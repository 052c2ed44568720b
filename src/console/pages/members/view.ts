import { copyWords } from '../../views/layout.js';
import type { ConsoleSession } from '../../../domain/sessions.js';
import { MEMBER_ROLES, type InvitationView, type MemberRole, type MemberView } from '../../../domain/members.js';
import { languageNames } from '../../../i18n/index.js';
import { csrfField, html, type PageOptions, type Safe } from '../../html.js';
import { navFor } from '../../views/nav.js';
import { PLAIN, type Speaker } from '../../words.js';
import { TEAM_FIELD } from './form.js';

/** Team names as a list in the reader's language ("A, B, C"; "A、B、C"): organization data, joined by the locale's rule. */
export function teamList(sp: Speaker, names: readonly string[]): string {
  try {
    return new Intl.ListFormat(sp.lang, { type: 'conjunction', style: 'narrow' }).format(names);
  } catch {
    return names.join(', ');
  }
}

/** A role in running text ("viewer", "manager of Bravo"): what the tables, notices and the invitation mail say. */
export function roleInWords(sp: Speaker, role: MemberRole, teamNames: readonly string[] = []): string {
  return role === 'manager' && teamNames.length > 0
    ? sp.t('console.members.managerOf', { teams: teamList(sp, teamNames) })
    : sp.t('console.members.roleInline', { role });
}

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
  /** The reader's words, and dates in their locale and the organization's time zone (PLAIN: English, UTC). */
  speaker?: Speaker;
}

/** The members page (owners): members and their roles, invitations, and the two-factor requirement. */
export function membersView({ session: s, members, invitations, required, teams = [], message, passkeys, speaker: sp = PLAIN }: MembersData): PageOptions {
  const { t } = sp;
  const when = (iso: string | null) => sp.when(iso, t('console.members.never'));
  const roleOptions = (current: string) =>
    MEMBER_ROLES.map((r) => html`<option value="${r}"${r === current ? html` selected` : ''}>${t('console.members.roleInline', { role: r })}</option>`);
  const teamName = new Map(teams.map((x) => [x.id, x.name]));
  const roleText = (role: MemberRole, ids: string[] | undefined) =>
    roleInWords(
      sp,
      role,
      (ids ?? []).map((id) => teamName.get(id) ?? id),
    );
  const teamBoxes = (prefix: string, ticked: readonly string[]) =>
    teams.length === 0
      ? html`<p class="muted">${t('console.members.noTeams')}</p>`
      : html`${teams.map(
          (x, i) =>
            html`<span><input type="checkbox" name="${TEAM_FIELD}${x.id}" id="${prefix}-${i}"${ticked.includes(x.id) ? html` checked` : ''}> <label for="${prefix}-${i}"><bdi>${x.name}</bdi></label></span>`,
        )}`;
  return {
    title: t('console.members.title'),
    speaker: sp,
    nav: navFor(s, '/console/members'),
    body: html`<h1>${t('console.members.title')}</h1>
${message ?? ''}
<div class="table-scroll" role="region" aria-labelledby="members-caption" tabindex="0"><table>
<caption id="members-caption">${t('console.members.caption', { org: s.orgName })}</caption>
<thead><tr><th scope="col">${t('console.members.email')}</th><th scope="col">${t('console.members.role')}</th><th scope="col">${t('console.members.twoFactor')}</th><th scope="col">${t('console.members.joined')}</th><th scope="col">${t('console.members.lastSignIn')}</th><th scope="col">${t('console.members.change')}</th></tr></thead>
<tbody>
${members.map(
  (m) => html`<tr>
<td>${m.email}</td><td>${roleText(m.role, m.teams)}</td><td>${m.twoFactor ? t('console.members.on') : t('console.members.off')}</td><td>${when(m.createdAt)}</td>
<td>${when(m.lastSignInAt)}</td>
<td>
<form method="post" action="/console/members/${encodeURIComponent(m.id)}/role" class="stack">${csrfField(s.csrfToken)}
<label for="f-role-${m.id}">${t('console.members.roleOf', { email: m.email })}</label> <select name="role" id="f-role-${m.id}">${roleOptions(m.role)}</select>
<details${m.role === 'manager' ? html` open` : ''}><summary aria-label="${t('console.members.teamsSummaryOf', { email: m.email })}">${t('console.members.teamsSummary')}</summary><fieldset class="checks" aria-label="${t('console.members.teamsOfLegend', { email: m.email })}">${teamBoxes(`f-teams-${m.id}`, m.teams ?? [])}</fieldset></details>
<button type="submit" class="secondary" aria-label="${t('console.members.changeRoleOf', { email: m.email })}">${t('console.members.changeRole')}</button></form>
<form method="post" action="/console/members/${encodeURIComponent(m.id)}/remove" data-confirm="${t('console.members.removeConfirm', { email: m.email })}">${csrfField(s.csrfToken)}
<button type="submit" class="danger" aria-label="${t('console.members.removeLabel', { email: m.email })}">${t('console.members.remove')}</button></form>
</td></tr>`,
)}
</tbody>
</table></div>
<h2>${t('console.members.inviteHeading')}</h2>
<form method="post" action="/console/members/invite" class="stack">
${csrfField(s.csrfToken)}
<label for="f-email">${t('console.members.email')}</label> <input type="email" name="email" required maxlength="254" id="f-email">
<dl class="facts" id="f-role-words">${MEMBER_ROLES.map((r) => html`<dt>${t('console.members.roleName', { role: r })}</dt><dd>${t('console.members.roleDoes', { role: r })}</dd>`)}</dl>
<label for="f-role">${t('console.members.role')}</label> <select name="role" id="f-role" aria-describedby="f-role-words">${MEMBER_ROLES.map(
      (r) => html`<option value="${r}"${r === 'viewer' ? html` selected` : ''}>${t('console.members.roleName', { role: r })}</option>`,
    )}</select>
<fieldset class="checks" aria-describedby="f-teams-help"><legend>${t('console.members.teamsLegend')}</legend>
<p class="muted" id="f-teams-help">${t('console.members.teamsHelp')}</p>
${teamBoxes('f-team', [])}
</fieldset>
<button type="submit">${t('console.members.invite')}</button>
</form>
${
  invitations.length > 0
    ? html`<div class="table-scroll" role="region" aria-labelledby="invitations-caption" tabindex="0"><table><caption id="invitations-caption">${t('console.members.invitationsCaption')}</caption>
<thead><tr><th scope="col">${t('console.members.email')}</th><th scope="col">${t('console.members.role')}</th><th scope="col">${t('console.members.invitedBy')}</th><th scope="col">${t('console.members.expires')}</th><th scope="col">${t('console.members.change')}</th></tr></thead>
<tbody>${invitations.map(
        (
          i,
        ) => html`<tr><td>${i.email}</td><td>${roleText(i.role, i.teams)}</td><td>${i.invitedBy === null ? t('console.members.operator') : (members.find((m) => m.id === i.invitedBy)?.email ?? i.invitedBy)}</td><td>${when(i.expiresAt)}</td>
<td><form method="post" action="/console/members/invitations/${encodeURIComponent(i.id)}/revoke" data-confirm="${t('console.members.revokeConfirm', { email: i.email })}">${csrfField(s.csrfToken)}
<button type="submit" class="danger" aria-label="${t('console.members.revokeLabel', { email: i.email })}">${t('console.members.revoke')}</button></form></td></tr>`,
      )}</tbody></table></div>`
    : ''
}
<h2>${t('console.members.twoFactorHeading')}</h2>
<form method="post" action="/console/members/two-factor" class="stack">
${csrfField(s.csrfToken)}
<p>${required ? t('console.members.twoFactorRequired') : t('console.members.twoFactorOptional')}</p>
<input type="hidden" name="required" value="${required ? 'false' : 'true'}">
<button type="submit" class="secondary">${required ? t('console.members.twoFactorStop') : t('console.members.twoFactorRequire')}</button>
</form>
${passkeys ?? ''}`,
  };
}

/** Without SMTP_URL: the new invitation's link, shown once to the inviting owner, and why the address is unproven. */
export const invitationLinkBox = (inv: { email: string; role: string }, url: string, until: string, sp: Speaker = PLAIN) =>
  html`<div class="notice ok" role="status"><p>${sp.t('console.members.linkCreated', { email: inv.email, role: inv.role, until })}</p>
<code class="secret" id="invitation-link">${url}</code> <button type="button" class="secondary" data-copy="invitation-link"${copyWords(sp)} hidden>${sp.t('console.members.copyLink')}</button>
<p>${sp.rich('console.members.linkUnproven', { setting: html`<code>SMTP_URL</code>` }, { strong: (chunks) => html`<strong>${chunks}</strong>` })}</p></div>`;

/** The language menu's value for "follow the browser": no locale. */
export const BROWSER_LANGUAGE = '';

/**
 * The account page: any member's own language, password, two-factor and passkeys (`passkeys`:
 * src/console/pages/passkeys/view.ts).
 */
export function accountView({
  session: s,
  message,
  passkeys,
  speaker: sp = PLAIN,
}: {
  session: ConsoleSession;
  message?: Safe;
  passkeys?: Safe;
  /** The reader's words (PLAIN: English, UTC). */
  speaker?: Speaker;
}): PageOptions {
  const { t } = sp;
  const chosen = s.member.language ?? BROWSER_LANGUAGE;
  return {
    title: t('console.account.title'),
    speaker: sp,
    nav: navFor(s, '/console/account'),
    body: html`<h1>${t('console.account.title')}</h1>
${message ?? ''}
<p>${sp.rich('console.account.signedInAs', { email: s.member.email, role: t('console.members.roleInline', { role: s.member.role }) }, { strong: (chunks) => html`<strong>${chunks}</strong>` })} ${
      s.member.twoFactor ? t('console.account.twoFactorOn') : t('console.account.twoFactorOff')
    }</p>
<p><a href="/console/two-factor/enroll">${s.member.twoFactor ? t('console.account.newAuthenticator') : t('console.account.turnOnTwoFactor')}</a></p>
<h2>${t('console.account.languageHeading')}</h2>
<form method="post" action="/console/account/language" class="stack">
${csrfField(s.csrfToken)}
<label for="f-language">${t('console.account.language')}</label> <select name="language" id="f-language" aria-describedby="f-language-help">
<option value="${BROWSER_LANGUAGE}"${chosen === BROWSER_LANGUAGE ? html` selected` : ''}>${t('console.account.browserLanguage')}</option>
${languageNames().map(({ locale, name }) => html`<option value="${locale}" lang="${locale}"${locale === chosen ? html` selected` : ''}>${name}</option>`)}
</select>
<p class="muted" id="f-language-help">${t('console.account.languageHelp')}</p>
<button type="submit" class="secondary">${t('console.account.saveLanguage')}</button>
</form>
${passkeys ?? ''}
<h2>${t('console.account.passwordHeading')}</h2>
<form method="post" action="/console/account/password" class="stack">
${csrfField(s.csrfToken)}
<input type="email" name="username" value="${s.member.email}" autocomplete="username" hidden>
<label for="f-current">${t('console.account.currentPassword')}</label> <input type="password" name="current" autocomplete="current-password" required id="f-current">
<label for="f-next">${t('console.account.newPassword')}</label> <input type="password" name="next" autocomplete="new-password" required minlength="12" id="f-next">
<button type="submit">${t('console.account.changePassword')}</button>
</form>
<p class="muted">${t('console.account.passwordEndsSessions')}</p>`,
  };
}
