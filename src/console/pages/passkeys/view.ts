import type { ConsoleSession } from '../../../domain/sessions.js';
import type { PasskeyView } from '../../../domain/passkeys.js';
import { csrfField, html, notice, type PageOptions, type Safe } from '../../html.js';
import { PLAIN, type Speaker } from '../../words.js';
import { assetHref } from '../../assets.js';

/**
 * The passkey pieces of the console's pages (issue 55): the Account page's section, the forms the
 * passkey script drives (src/console/client/passkeys.ts: `data-passkey`, the WebAuthn options in
 * `data-options`, never an inline script), the page of a session held by the requirement, and the
 * owner's setting on the Members page. Every word comes from the catalogue (`console.passkeys.*`), the
 * script's too: the words it may show are rendered into the form's data attributes.
 */

/** The script of every page that shows a passkey form. */
export const passkeyScripts = () => [assetHref('passkeys.js')];

/** A form the passkey script drives: on submit it runs the ceremony, puts the answer in `response`, and posts. */
function ceremonyForm(o: {
  csrf: string;
  action: string;
  mode: 'register' | 'authenticate';
  options: string;
  button: string;
  extra?: Safe;
  secondary?: boolean;
  sp: Speaker;
}) {
  return html`<form method="post" action="${o.action}" class="stack" data-passkey="${o.mode}" data-options="${o.options}" data-failed="${o.sp.t('console.passkeys.failed')}" data-unsupported="${o.sp.t('console.passkeys.unsupported')}">
${csrfField(o.csrf)}
${o.extra ?? ''}
<input type="hidden" name="response" value="">
<button type="submit"${o.secondary ? html` class="secondary"` : ''}>${o.button}</button>
<p class="notice error" role="alert" data-passkey-error hidden></p>
</form>`;
}

/** The sign-in page's entry: a passkey alone (a discoverable credential names its member). */
export const signInBlock = (csrf: string, options: string, sp: Speaker = PLAIN) => html`<section aria-labelledby="passkey-sign-in">
<h2 id="passkey-sign-in">${sp.t('console.passkeys.signInHeading')}</h2>
<p class="muted">${sp.t('console.passkeys.signInHelp')}</p>
${ceremonyForm({ csrf, action: '/console/sign-in/passkey', mode: 'authenticate', options, button: sp.t('console.passkeys.signInButton'), secondary: true, sp })}
</section>`;

/** The second step of signing in: a passkey of the member's, instead of a code. */
export const secondFactorBlock = (csrf: string, options: string, orCode: boolean, sp: Speaker = PLAIN) => html`<section aria-labelledby="passkey-second">
<h2 id="passkey-second">${sp.t('console.passkeys.secondFactorHeading')}</h2>
${ceremonyForm({ csrf, action: '/console/two-factor/passkey', mode: 'authenticate', options, button: sp.t('console.passkeys.secondFactorButton'), sp })}
</section>
${orCode ? html`<h2>${sp.t('console.passkeys.orCode')}</h2>` : ''}`;

/** After the password: the ceremony that creates the passkey (shown once, on the page the redirect leads to). */
export const registrationBlock = (
  csrf: string,
  name: string,
  options: string,
  sp: Speaker = PLAIN,
) => html`<section aria-labelledby="passkey-create" class="stack">
<h2 id="passkey-create">${sp.t('console.passkeys.createHeading', { name })}</h2>
<p>${sp.t('console.passkeys.createHelp')}</p>
${ceremonyForm({
  csrf,
  action: '/console/account/passkeys/new',
  mode: 'register',
  options,
  button: sp.t('console.passkeys.createButton'),
  extra: html`<input type="hidden" name="name" value="${name}">`,
  sp,
})}
</section>`;

/** The form that starts adding a passkey: a name, and the password again. */
function addForm(s: ConsoleSession, sp: Speaker) {
  const { t } = sp;
  return html`<h3>${t('console.passkeys.addHeading')}</h3>
<form method="post" action="/console/account/passkeys" class="stack">
${csrfField(s.csrfToken)}
<input type="email" name="username" value="${s.member.email}" autocomplete="username" hidden>
<label for="f-passkey-name">${t('console.passkeys.name')}</label> <input name="name" maxlength="64" autocomplete="off" aria-describedby="passkey-name-help" id="f-passkey-name">
<p id="passkey-name-help" class="muted">${t('console.passkeys.nameHelp')}</p>
<label for="f-passkey-password">${t('console.passkeys.currentPassword')}</label> <input type="password" name="password" autocomplete="current-password" required id="f-passkey-password">
<button type="submit">${t('console.passkeys.addButton')}</button>
</form>`;
}

/** The Account page's section: the member's passkeys (rename, remove), and adding one. */
export function passkeysSection({
  session: s,
  passkeys,
  available,
  speaker: sp = PLAIN,
}: {
  session: ConsoleSession;
  passkeys: PasskeyView[];
  available: boolean;
  /** The reader's words, and dates in their locale and the organization's time zone. */
  speaker?: Speaker;
}): Safe {
  const { t } = sp;
  const list =
    passkeys.length === 0
      ? html`<p>${t('console.passkeys.none')}</p>`
      : html`<div class="table-scroll" role="region" aria-labelledby="passkeys-caption" tabindex="0"><table>
<caption id="passkeys-caption">${t('console.passkeys.caption')}</caption>
<thead><tr><th scope="col">${t('console.passkeys.name')}</th><th scope="col">${t('console.passkeys.addedOn')}</th><th scope="col">${t('console.passkeys.lastUsed')}</th><th scope="col">${t('console.passkeys.synced')}</th><th scope="col">${t('console.passkeys.change')}</th></tr></thead>
<tbody>
${passkeys.map(
  (
    p,
  ) => html`<tr><td>${p.name}</td><td>${sp.when(p.createdAt)}</td><td>${sp.when(p.lastUsedAt, t('console.passkeys.never'))}</td><td>${p.backedUp ? t('console.passkeys.yes') : t('console.passkeys.no')}</td>
<td><form method="post" action="/console/account/passkeys/${encodeURIComponent(p.id)}/rename">${csrfField(s.csrfToken)}
<label for="f-passkey-rename-${p.id}">${t('console.passkeys.newName', { name: p.name })}</label> <input name="name" required maxlength="64" value="${p.name}" id="f-passkey-rename-${p.id}">
<button type="submit" class="secondary" aria-label="${t('console.passkeys.renameLabel', { name: p.name })}">${t('console.passkeys.rename')}</button></form>
<form method="post" action="/console/account/passkeys/${encodeURIComponent(p.id)}/remove" data-confirm="${t('console.passkeys.removeConfirm', { name: p.name })}">${csrfField(s.csrfToken)}
<button type="submit" class="danger" aria-label="${t('console.passkeys.removeLabel', { name: p.name })}">${t('console.passkeys.remove')}</button></form></td></tr>`,
)}
</tbody></table></div>`;
  return html`<h2 id="passkeys">${t('console.passkeys.heading')}</h2>
<p>${t('console.passkeys.intro')}</p>
${list}
${available ? addForm(s, sp) : notice(t('console.passkeys.unavailable'))}`;
}

/** A session held by the requirement: use the passkey the member has, or add one (the password again). */
export function requiredView({
  session: s,
  block,
  message,
  speaker: sp = PLAIN,
}: {
  session: ConsoleSession;
  block: Safe | null;
  message?: Safe;
  speaker?: Speaker;
}): PageOptions {
  const { t } = sp;
  return {
    title: t('console.passkeys.requiredTitle'),
    speaker: sp,
    scripts: passkeyScripts(),
    body: html`<h1>${t('console.passkeys.requiredTitle')}</h1>
${message ?? ''}
<p>${block ? t('console.passkeys.requiredHasOne') : t('console.passkeys.requiredNone')}</p>
${block ?? addForm(s, sp)}
<form method="post" action="/console/sign-out" class="signout-inline">${csrfField(s.csrfToken)}<button type="submit" class="secondary">${t('console.layout.signOut')}</button></form>`,
  };
}

/** The owner's setting on the Members page. */
export const requirementSetting = (csrf: string, required: boolean, sp: Speaker = PLAIN) => html`<h2>${sp.t('console.passkeys.settingHeading')}</h2>
<form method="post" action="/console/members/passkeys" class="stack">
${csrfField(csrf)}
<p>${required ? sp.t('console.passkeys.settingOn') : sp.t('console.passkeys.settingOff')}</p>
<p class="muted">${sp.t('console.passkeys.settingHelp')}</p>
<input type="hidden" name="required" value="${required ? 'false' : 'true'}">
<button type="submit" class="secondary">${required ? sp.t('console.passkeys.settingStop') : sp.t('console.passkeys.settingRequire')}</button>
</form>`;
