import type { ConsoleSession } from '../../../domain/sessions.js';
import type { PasskeyView } from '../../../domain/passkeys.js';
import { csrfField, html, notice, type PageOptions, type Safe } from '../../html.js';
import { PASSKEY_WORDS as W } from '../../words.js';
import { assetHref } from '../../assets.js';
import { when } from '../../views/layout.js';

/**
 * The passkey pieces of the console's pages (issue 55): the Account page's section, the forms the
 * passkey script drives (src/console/client/passkeys.ts: `data-passkey`, the WebAuthn options in
 * `data-options`, never an inline script), the page of a session held by the requirement, and the
 * owner's setting on the Members page. Every word is in PASSKEY_WORDS.
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
}) {
  return html`<form method="post" action="${o.action}" class="stack" data-passkey="${o.mode}" data-options="${o.options}" data-failed="${W.failed}" data-unsupported="${W.unsupported}">
${csrfField(o.csrf)}
${o.extra ?? ''}
<input type="hidden" name="response" value="">
<button type="submit"${o.secondary ? html` class="secondary"` : ''}>${o.button}</button>
<p class="notice error" role="alert" data-passkey-error hidden></p>
</form>`;
}

/** The sign-in page's entry: a passkey alone (a discoverable credential names its member). */
export const signInBlock = (csrf: string, options: string) => html`<section aria-labelledby="passkey-sign-in">
<h2 id="passkey-sign-in">${W.signInHeading}</h2>
<p class="muted">${W.signInHelp}</p>
${ceremonyForm({ csrf, action: '/console/sign-in/passkey', mode: 'authenticate', options, button: W.signInButton, secondary: true })}
</section>`;

/** The second step of signing in: a passkey of the member's, instead of a code. */
export const secondFactorBlock = (csrf: string, options: string, orCode: boolean) => html`<section aria-labelledby="passkey-second">
<h2 id="passkey-second">${W.secondFactorHeading}</h2>
${ceremonyForm({ csrf, action: '/console/two-factor/passkey', mode: 'authenticate', options, button: W.secondFactorButton })}
</section>
${orCode ? html`<h2>${W.orCode}</h2>` : ''}`;

/** After the password: the ceremony that creates the passkey (shown once, on the page the redirect leads to). */
export const registrationBlock = (csrf: string, name: string, options: string) => html`<section aria-labelledby="passkey-create" class="stack">
<h2 id="passkey-create">${W.createHeading(name)}</h2>
<p>${W.createHelp}</p>
${ceremonyForm({ csrf, action: '/console/account/passkeys/new', mode: 'register', options, button: W.createButton, extra: html`<input type="hidden" name="name" value="${name}">` })}
</section>`;

/** The form that starts adding a passkey: a name, and the password again. */
function addForm(s: ConsoleSession) {
  return html`<h3>${W.addHeading}</h3>
<form method="post" action="/console/account/passkeys" class="stack">
${csrfField(s.csrfToken)}
<input type="email" name="username" value="${s.member.email}" autocomplete="username" hidden>
<label for="f-passkey-name">${W.name}</label> <input name="name" maxlength="64" autocomplete="off" aria-describedby="passkey-name-help" id="f-passkey-name">
<p id="passkey-name-help" class="muted">${W.nameHelp}</p>
<label for="f-passkey-password">${W.currentPassword}</label> <input type="password" name="password" autocomplete="current-password" required id="f-passkey-password">
<button type="submit">${W.addButton}</button>
</form>`;
}

/** The Account page's section: the member's passkeys (rename, remove), and adding one. */
export function passkeysSection({ session: s, passkeys, available }: { session: ConsoleSession; passkeys: PasskeyView[]; available: boolean }): Safe {
  const list =
    passkeys.length === 0
      ? html`<p>${W.none}</p>`
      : html`<div class="table-scroll" role="region" aria-labelledby="passkeys-caption" tabindex="0"><table>
<caption id="passkeys-caption">${W.caption}</caption>
<thead><tr><th scope="col">${W.name}</th><th scope="col">${W.addedOn}</th><th scope="col">${W.lastUsed}</th><th scope="col">${W.synced}</th><th scope="col">${W.change}</th></tr></thead>
<tbody>
${passkeys.map(
  (p) => html`<tr><td>${p.name}</td><td>${when(p.createdAt)}</td><td>${when(p.lastUsedAt, W.never)}</td><td>${p.backedUp ? W.yes : W.no}</td>
<td><form method="post" action="/console/account/passkeys/${encodeURIComponent(p.id)}/rename">${csrfField(s.csrfToken)}
<label for="f-passkey-rename-${p.id}">${W.newName(p.name)}</label> <input name="name" required maxlength="64" value="${p.name}" id="f-passkey-rename-${p.id}">
<button type="submit" class="secondary" aria-label="${W.renameLabel(p.name)}">${W.rename}</button></form>
<form method="post" action="/console/account/passkeys/${encodeURIComponent(p.id)}/remove" data-confirm="${W.removeConfirm(p.name)}">${csrfField(s.csrfToken)}
<button type="submit" class="danger" aria-label="${W.removeLabel(p.name)}">${W.remove}</button></form></td></tr>`,
)}
</tbody></table></div>`;
  return html`<h2 id="passkeys">${W.heading}</h2>
<p>${W.intro}</p>
${list}
${available ? addForm(s) : notice(W.unavailable)}`;
}

/** A session held by the requirement: use the passkey the member has, or add one (the password again). */
export function requiredView({ session: s, block, message }: { session: ConsoleSession; block: Safe | null; message?: Safe }): PageOptions {
  return {
    title: W.requiredTitle,
    scripts: passkeyScripts(),
    body: html`<h1>${W.requiredTitle}</h1>
${message ?? ''}
<p>${block ? W.requiredHasOne : W.requiredNone}</p>
${block ?? addForm(s)}
<form method="post" action="/console/sign-out" class="signout-inline">${csrfField(s.csrfToken)}<button type="submit" class="secondary">Sign out</button></form>`,
  };
}

/** The owner's setting on the Members page. */
export const requirementSetting = (csrf: string, required: boolean) => html`<h2>${W.settingHeading}</h2>
<form method="post" action="/console/members/passkeys" class="stack">
${csrfField(csrf)}
<p>${required ? W.settingOn : W.settingOff}</p>
<p class="muted">${W.settingHelp}</p>
<input type="hidden" name="required" value="${required ? 'false' : 'true'}">
<button type="submit" class="secondary">${required ? W.settingStop : W.settingRequire}</button>
</form>`;
