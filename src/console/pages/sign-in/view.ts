import type { ConsoleSession } from '../../../domain/sessions.js';
import { MIN_PASSWORD } from '../../../domain/passwords.js';
import { csrfField, html, notice, type PageOptions, type Safe } from '../../html.js';
import { navFor } from '../../views/nav.js';
import { PLAIN, type Speaker } from '../../words.js';

/** A copy button's words, for the console's script: what it says once copied, or once the text is selected instead. */
export { copyWords } from '../../views/layout.js';
import { copyWords } from '../../views/layout.js';

/**
 * The sign-in page: the work address first (an address of an organization's verified domain goes
 * to its IdP, and needs no password here), else email and password. `csrf` is the form cookie's token (no session yet).
 * `choices`: the organizations whose consoles the password just typed opens, when it opens several
 * (shown only to whoever typed it); the password is asked again with the choice.
 */
export function signInView({
  csrf,
  email,
  message,
  choices,
  passkey,
  withoutSso = false,
  speaker: sp = PLAIN,
}: {
  csrf: string;
  email: string;
  message?: Safe;
  choices?: Array<{ orgId: string; name: string }>;
  /** Signing in with a passkey alone (src/console/pages/passkeys/view.ts). */
  passkey?: Safe;
  /** The person chose a password sign-in although their domain goes to an IdP (issue 55). */
  withoutSso?: boolean;
  /** The reader's words (no member yet: the browser's language). */
  speaker?: Speaker;
}): PageOptions {
  const { t } = sp;
  const choice = choices?.length
    ? html`<fieldset>
<legend>${t('console.signIn.organization')}</legend>
${choices.map((c, i) => html`<label><input type="radio" name="organization" value="${c.orgId}" required${i === 0 ? html` checked` : ''}> ${c.name}</label>`)}
</fieldset>`
    : '';
  return {
    title: t('console.signIn.title'),
    speaker: sp,
    body: html`<h1>${t('console.signIn.title')}</h1>
${message ?? ''}
<form method="post" action="/console/sign-in" class="stack">
${csrfField(csrf)}
<label for="f-email">${t('console.signIn.email')}</label> <input type="email" name="email" autocomplete="username" required value="${email}" id="f-email">
${choice}
${withoutSso ? html`<input type="hidden" name="without_sso" value="1">` : ''}
<label for="f-password">${t('console.signIn.password')}</label> <input type="password" name="password" autocomplete="current-password" id="f-password" aria-describedby="password-help"${withoutSso ? html` required` : ''}>
<p id="password-help" class="muted">${withoutSso ? t('console.signIn.withoutSsoHelp') : t('console.signIn.passwordHelp')}</p>
<button type="submit">${t('console.signIn.submit')}</button>
</form>
${passkey ?? ''}
${withoutSso ? '' : html`<p><a href="/console/sign-in?without-sso=1">${t('console.signIn.withoutSso')}</a></p>`}
<p class="muted">${t('console.signIn.byInvitation')}</p>`,
  };
}

/**
 * The second step of signing in: a code of the authenticator app, or a recovery code; or a passkey
 * (`passkey`, src/console/pages/passkeys/view.ts), the only way when `code` is false.
 */
export function codeView({
  csrf,
  message,
  passkey,
  code = true,
  speaker: sp = PLAIN,
}: {
  csrf: string;
  message?: Safe;
  passkey?: Safe;
  code?: boolean;
  speaker?: Speaker;
}): PageOptions {
  const { t } = sp;
  return {
    title: t('console.signIn.codeTitle'),
    speaker: sp,
    body: html`<h1>${t('console.signIn.codeTitle')}</h1>
${message ?? ''}
${passkey ?? ''}
<form method="post" action="/console/two-factor" class="stack"${code ? '' : html` hidden`}>
${csrfField(csrf)}
<label for="f-code">${t('console.signIn.code')}</label> <input name="code" inputmode="numeric" autocomplete="one-time-code" required maxlength="11" aria-describedby="code-help" id="f-code">
<p id="code-help" class="muted">${t('console.signIn.codeHelp')}</p>
<button type="submit">${t('console.signIn.verify')}</button>
</form>`,
  };
}

export interface EnrollData {
  session: ConsoleSession;
  /** The new secret, made by the server: as text, as an otpauth URI and as its QR code (a data: URL). */
  secret: string;
  uri: string;
  qr: string;
  message?: Safe;
  speaker?: Speaker;
}

/**
 * Setting up two-factor: the secret shown once, as a QR code and as text. Required by the
 * organization, it is a step of signing in (no navigation). Every enrollment, the first included,
 * asks for the password again.
 */
export function enrollView({ session: s, secret, uri, qr, message, speaker: sp = PLAIN }: EnrollData): PageOptions {
  const { t } = sp;
  const required = s.stage === 'enroll';
  const replacing = s.member.twoFactor;
  return {
    title: t('console.signIn.enrollTitle'),
    speaker: sp,
    nav: required ? undefined : navFor(s, '/console/two-factor/enroll'),
    body: html`<h1>${t('console.signIn.enrollTitle')}</h1>
${
  required
    ? html`<p>${t('console.signIn.enrollRequired')}</p>
<form method="post" action="/console/sign-out" class="signout-inline">${csrfField(s.csrfToken)}<button type="submit" class="secondary">${t('console.layout.signOut')}</button></form>`
    : ''
}
${replacing ? html`<p>${t('console.signIn.enrollReplacing')}</p>` : html`<p>${t('console.signIn.enrollConfirm')}</p>`}
${message ?? ''}
<ol>
<li><p>${t('console.signIn.enrollScan')}</p>
<img class="qr" src="${qr}" width="200" height="200" alt="${t('console.signIn.enrollQrAlt')}">
<p>${sp.rich('console.signIn.enrollKey', { key: html`<code class="secret" id="totp-secret">${secret.replace(/(.{4})(?=.)/g, '$1 ')}</code>` })} <button type="button" class="secondary" data-copy="totp-secret"${copyWords(sp)} hidden>${t('console.signIn.copyKey')}</button></p>
<p>${sp.rich('console.signIn.enrollOpen', {}, { a: (chunks) => html`<a href="${uri}">${chunks}</a>` })}</p></li>
<li>${t('console.signIn.enrollDigits')}</li>
</ol>
<form method="post" action="/console/two-factor/enroll" class="stack">
${csrfField(s.csrfToken)}
<input type="email" name="username" value="${s.member.email}" autocomplete="username" hidden>
<label for="f-password">${t('console.signIn.currentPassword')}</label> <input type="password" name="password" autocomplete="current-password" required id="f-password">
<label for="f-code">${t('console.signIn.code')}</label> <input name="code" inputmode="numeric" autocomplete="one-time-code" required maxlength="11" id="f-code">
<button type="submit">${t('console.signIn.enrollSubmit')}</button>
</form>`,
  };
}

/** What the page after enrolling shows once: the recovery codes, with a copy button. */
export const recoveryCodesBox = (codes: string[], sp: Speaker = PLAIN) => html`${notice(sp.t('console.signIn.twoFactorOn'), 'ok')}
<p>${sp.t('console.signIn.recoveryHelp')}</p>
<pre class="secret" id="recovery-codes" aria-label="${sp.t('console.signIn.recoveryTitle')}">${codes.join('\n')}</pre>
<button type="button" class="secondary" data-copy="recovery-codes"${copyWords(sp)} hidden>${sp.t('console.signIn.copyCodes')}</button>`;

/** The page the redirect after enrolling leads to (a member page); the codes are put in once, after its heading. */
export function recoveryCodesView({ session: s, speaker: sp = PLAIN }: { session: ConsoleSession; speaker?: Speaker }): PageOptions {
  const { t } = sp;
  return {
    title: t('console.signIn.recoveryTitle'),
    speaker: sp,
    nav: navFor(s, '/console/two-factor/enroll'),
    body: html`<h1>${t('console.signIn.recoveryTitle')}</h1>
<p class="muted">${t('console.signIn.recoveryOnce')}</p>
<p><a href="/console/overview">${t('console.signIn.continue')}</a></p>`,
  };
}

export interface InvitationData {
  /** The invitation the link names, or null when it cannot be used (used, expired, mistyped). */
  invitation: { email: string; role: string } | null;
  token: string;
  csrf: string;
  message?: Safe;
  speaker?: Speaker;
}

/** The invitation page: the person chooses a password, and is signed in. */
export function invitationView({ invitation: inv, token, csrf, message, speaker: sp = PLAIN }: InvitationData): PageOptions {
  const { t } = sp;
  if (!inv)
    return {
      title: t('console.signIn.invitation'),
      speaker: sp,
      body: html`<h1>${t('console.signIn.invitation')}</h1>${notice(t('console.refusal.invitationUnusable'))}`,
    };
  const strong = (chunks: Safe) => html`<strong>${chunks}</strong>`;
  return {
    title: t('console.signIn.accept'),
    speaker: sp,
    body: html`<h1>${t('console.signIn.accept')}</h1>
<p>${sp.rich('console.signIn.invited', { role: t('console.signIn.role', { role: inv.role }), email: inv.email, min: MIN_PASSWORD }, { strong })}</p>
${message ?? ''}
<form method="post" action="/console/invitations/${encodeURIComponent(token)}" class="stack">
${csrfField(csrf)}
<input type="email" name="username" value="${inv.email}" autocomplete="username" hidden>
<label for="f-password">${t('console.signIn.password')}</label> <input type="password" name="password" autocomplete="new-password" required minlength="${MIN_PASSWORD}" id="f-password">
<button type="submit">${t('console.signIn.accept')}</button>
</form>`,
  };
}
