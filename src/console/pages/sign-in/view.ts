import type { ConsoleSession } from '../../../domain/sessions.js';
import { INVITATION_UNUSABLE } from '../../../domain/members.js';
import { MIN_PASSWORD } from '../../../domain/passwords.js';
import { csrfField, html, notice, type PageOptions, type Safe } from '../../html.js';
import { navFor } from '../../views/nav.js';

/** The sign-in page's words of single sign-on (issue 55). */
export const SIGN_IN_WORDS = {
  passwordHelp: 'If your organization signs in with its own identity provider (single sign-on), leave the password empty: choosing Sign in takes you there.',
  withoutSso: 'Sign in with a password instead of single sign-on',
  withoutSsoHelp:
    "Your address will not be sent to your organization's identity provider. When your organization requires single sign-on, only its break-glass owner can sign in this way.",
} as const;

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
}: {
  csrf: string;
  email: string;
  message?: Safe;
  choices?: Array<{ orgId: string; name: string }>;
  /** Signing in with a passkey alone (src/console/pages/passkeys/view.ts). */
  passkey?: Safe;
  /** The person chose a password sign-in although their domain goes to an IdP (issue 55). */
  withoutSso?: boolean;
}): PageOptions {
  const choice = choices?.length
    ? html`<fieldset>
<legend>Organization</legend>
${choices.map((c, i) => html`<label><input type="radio" name="organization" value="${c.orgId}" required${i === 0 ? html` checked` : ''}> ${c.name}</label>`)}
</fieldset>`
    : '';
  return {
    title: 'Sign in',
    body: html`<h1>Sign in</h1>
${message ?? ''}
<form method="post" action="/console/sign-in" class="stack">
${csrfField(csrf)}
<label for="f-email">Email</label> <input type="email" name="email" autocomplete="username" required value="${email}" id="f-email">
${choice}
${withoutSso ? html`<input type="hidden" name="without_sso" value="1">` : ''}
<label for="f-password">Password</label> <input type="password" name="password" autocomplete="current-password" id="f-password" aria-describedby="password-help"${withoutSso ? html` required` : ''}>
<p id="password-help" class="muted">${withoutSso ? SIGN_IN_WORDS.withoutSsoHelp : SIGN_IN_WORDS.passwordHelp}</p>
<button type="submit">Sign in</button>
</form>
${passkey ?? ''}
${withoutSso ? '' : html`<p><a href="/console/sign-in?without-sso=1">${SIGN_IN_WORDS.withoutSso}</a></p>`}
<p class="muted">Members join by invitation from an owner of their organization or from the platform's operator.</p>`,
  };
}

/**
 * The second step of signing in: a code of the authenticator app, or a recovery code; or a passkey
 * (`passkey`, src/console/pages/passkeys/view.ts), the only way when `code` is false.
 */
export function codeView({ csrf, message, passkey, code = true }: { csrf: string; message?: Safe; passkey?: Safe; code?: boolean }): PageOptions {
  return {
    title: 'Two-factor code',
    body: html`<h1>Two-factor code</h1>
${message ?? ''}
${passkey ?? ''}
<form method="post" action="/console/two-factor" class="stack"${code ? '' : html` hidden`}>
${csrfField(csrf)}
<label for="f-code">Code</label> <input name="code" inputmode="numeric" autocomplete="one-time-code" required maxlength="11" aria-describedby="code-help" id="f-code">
<p id="code-help" class="muted">The six digits your authenticator app shows now, or one of your recovery codes.</p>
<button type="submit">Verify</button>
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
}

/**
 * Setting up two-factor: the secret shown once, as a QR code and as text. Required by the
 * organization, it is a step of signing in (no navigation). Every enrollment, the first included,
 * asks for the password again.
 */
export function enrollView({ session: s, secret, uri, qr, message }: EnrollData): PageOptions {
  const required = s.stage === 'enroll';
  const replacing = s.member.twoFactor;
  return {
    title: 'Two-factor authentication',
    nav: required ? undefined : navFor(s, '/console/two-factor/enroll'),
    body: html`<h1>Two-factor authentication</h1>
${
  required
    ? html`<p>Your organization requires two-factor authentication. Set it up to continue.</p>
<form method="post" action="/console/sign-out" class="signout-inline">${csrfField(s.csrfToken)}<button type="submit" class="secondary">Sign out</button></form>`
    : ''
}
${
  replacing
    ? html`<p>Two-factor authentication is on. Setting up a new authenticator app replaces the old one: enter your password to confirm.</p>`
    : html`<p>Enter your password to confirm that the app you set up is yours.</p>`
}
${message ?? ''}
<ol>
<li><p>Scan this QR code with your authenticator app:</p>
<img class="qr" src="${qr}" width="200" height="200" alt="QR code of your two-factor setup key">
<p>Or type this setup key into the app: <code class="secret" id="totp-secret">${secret.replace(/(.{4})(?=.)/g, '$1 ')}</code> <button type="button" class="secondary" data-copy="totp-secret" hidden>Copy setup key</button></p>
<p><a href="${uri}">Open in authenticator app</a> (on the device that has the app)</p></li>
<li>Enter the six digits it shows (with or without the space).</li>
</ol>
<form method="post" action="/console/two-factor/enroll" class="stack">
${csrfField(s.csrfToken)}
<input type="email" name="username" value="${s.member.email}" autocomplete="username" hidden>
<label for="f-password">Current password</label> <input type="password" name="password" autocomplete="current-password" required id="f-password">
<label for="f-code">Code</label> <input name="code" inputmode="numeric" autocomplete="one-time-code" required maxlength="11" id="f-code">
<button type="submit">Turn on two-factor</button>
</form>`,
  };
}

/** What the page after enrolling shows once: the recovery codes, with a copy button. */
export const recoveryCodesBox = (codes: string[]) => html`${notice('Two-factor authentication is on.', 'ok')}
<p>Each of these codes signs you in once if you lose your authenticator app. They are shown only now: keep them somewhere safe.</p>
<pre class="secret" id="recovery-codes" aria-label="Recovery codes">${codes.join('\n')}</pre>
<button type="button" class="secondary" data-copy="recovery-codes" hidden>Copy recovery codes</button>`;

/** The page the redirect after enrolling leads to (a member page); the codes are put in once, after its heading. */
export function recoveryCodesView({ session: s }: { session: ConsoleSession }): PageOptions {
  return {
    title: 'Recovery codes',
    nav: navFor(s, '/console/two-factor/enroll'),
    body: html`<h1>Recovery codes</h1>
<p class="muted">Recovery codes are shown once, on this page right after two-factor is turned on; setting up a new authenticator app makes new ones.</p>
<p><a href="/console/overview">Continue to the console</a></p>`,
  };
}

export interface InvitationData {
  /** The invitation the link names, or null when it cannot be used (used, expired, mistyped). */
  invitation: { email: string; role: string } | null;
  token: string;
  csrf: string;
  message?: Safe;
}

/** The invitation page: the person chooses a password, and is signed in. */
export function invitationView({ invitation: inv, token, csrf, message }: InvitationData): PageOptions {
  if (!inv) return { title: 'Invitation', body: html`<h1>Invitation</h1>${notice(INVITATION_UNUSABLE)}` };
  return {
    title: 'Accept invitation',
    body: html`<h1>Accept invitation</h1>
<p>You are invited as <strong>${inv.role}</strong> with the email <strong>${inv.email}</strong>. Choose a password of at least ${MIN_PASSWORD} characters.</p>
${message ?? ''}
<form method="post" action="/console/invitations/${encodeURIComponent(token)}" class="stack">
${csrfField(csrf)}
<input type="email" name="username" value="${inv.email}" autocomplete="username" hidden>
<label for="f-password">Password</label> <input type="password" name="password" autocomplete="new-password" required minlength="${MIN_PASSWORD}" id="f-password">
<button type="submit">Accept invitation</button>
</form>`,
  };
}
