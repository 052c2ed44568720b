import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ApiError } from '../../../contract/errors.js';
import type { DatabaseExecutor } from '../../../domain/database.js';
import { acceptInvitation, endSession, saveFlashForCookie, signIn, type ConsoleSession } from '../../../domain/sessions.js';
import { completeTwoFactor, enrollTotp, startTotpEnrollment } from '../../../domain/totp.js';
import { INVITATION_UNUSABLE, memberActor, readInvitation } from '../../../domain/members.js';
import { MIN_PASSWORD } from '../../../domain/passwords.js';
import QRCode from 'qrcode';
import { csrfField, html, notice, type PageOptions, type Safe } from '../../html.js';
import { clearSessionCookie, formToken, setSessionCookie, type ConsoleDeps, type Form } from '../../plugins/index.js';
import { navFor } from '../../views/nav.js';
import { sendPage } from '../../views/layout.js';

const send = (reply: FastifyReply, status: number, title: string, body: Safe, nav?: PageOptions['nav']) => sendPage(reply, status, { title, body, nav });

const messageOf = (err: unknown) => {
  if (err instanceof ApiError && err.statusCode < 500) return { status: err.statusCode, message: err.message };
  throw err;
};

/** Signing in and out, the two-factor steps and the invitation page. */
export function registerAuthPages(scope: FastifyInstance, deps: ConsoleDeps & { db: DatabaseExecutor }) {
  const { db, now } = deps;

  scope.get('/', { schema: { hide: true } }, async (request, reply) => reply.redirect(request.consoleSession ? '/console/overview' : '/console/sign-in', 303));

  const signInPage = (request: FastifyRequest, reply: FastifyReply, status: number, message?: string, email = '') =>
    send(
      reply,
      status,
      'Sign in',
      html`<h1>Sign in</h1>
${notice(message)}
<form method="post" action="/console/sign-in" class="stack">
${csrfField(formToken(request, reply, deps))}
<label for="f-email">Email</label> <input type="email" name="email" autocomplete="username" required value="${email}" id="f-email">
<label for="f-password">Password</label> <input type="password" name="password" autocomplete="current-password" required id="f-password">
<button type="submit">Sign in</button>
</form>
<p class="muted">Members join by invitation from an owner of their organization or from the platform's operator.</p>`,
    );

  scope.get('/sign-in', { schema: { hide: true } }, async (request, reply) => {
    if (request.consoleSession?.stage === 'active') return reply.redirect('/console/overview', 303);
    return signInPage(request, reply, 200);
  });

  scope.post('/sign-in', { schema: { hide: true } }, async (request, reply) => {
    const form = request.body as Form;
    try {
      const s = await signIn(db, { email: form.email, password: form.password }, request.ip, now());
      setSessionCookie(reply, s.cookie, deps);
      return reply.redirect(s.stage === 'totp' ? '/console/two-factor' : s.stage === 'enroll' ? '/console/two-factor/enroll' : '/console/overview', 303);
    } catch (err) {
      const { status, message } = messageOf(err);
      return signInPage(request, reply, status, message, typeof form.email === 'string' ? form.email.slice(0, 254) : '');
    }
  });

  const codePage = (request: FastifyRequest, reply: FastifyReply, status: number, message?: string) =>
    send(
      reply,
      status,
      'Two-factor code',
      html`<h1>Two-factor code</h1>
${notice(message)}
<form method="post" action="/console/two-factor" class="stack">
${csrfField(formToken(request, reply, deps))}
<label for="f-code">Code</label> <input name="code" inputmode="numeric" autocomplete="one-time-code" required maxlength="11" aria-describedby="code-help" id="f-code">
<p id="code-help" class="muted">The six digits your authenticator app shows now, or one of your recovery codes.</p>
<button type="submit">Verify</button>
</form>`,
    );

  scope.get('/two-factor', { schema: { hide: true } }, async (request, reply) => {
    const s = request.consoleSession;
    if (!s) return reply.redirect('/console/sign-in', 303);
    if (s.stage !== 'totp') return reply.redirect('/console/overview', 303);
    return codePage(request, reply, 200);
  });

  scope.post('/two-factor', { schema: { hide: true } }, async (request, reply) => {
    const s = request.consoleSession;
    if (!s) return reply.redirect('/console/sign-in', 303);
    try {
      const renewed = await completeTwoFactor(db, s, (request.body as Form).code, request.ip, now());
      setSessionCookie(reply, renewed.cookie, deps);
      return reply.redirect('/console/overview', 303);
    } catch (err) {
      const { status, message } = messageOf(err);
      return codePage(request, reply, status, message);
    }
  });

  const enrollPage = async (s: ConsoleSession, reply: FastifyReply, status: number, message?: string) => {
    // Made by the server, kept with the session, shown once: as a QR code and as text.
    const { secret, uri } = await startTotpEnrollment(db, s);
    const qr = await QRCode.toDataURL(uri, { margin: 1, width: 200, errorCorrectionLevel: 'M' });
    const required = s.stage === 'enroll';
    const replacing = s.member.twoFactor;
    return send(
      reply,
      status,
      'Two-factor authentication',
      html`<h1>Two-factor authentication</h1>
${
  required
    ? html`<p>Your organization requires two-factor authentication. Set it up to continue.</p>
<form method="post" action="/console/sign-out" class="signout-inline">${csrfField(s.csrfToken)}<button type="submit" class="secondary">Sign out</button></form>`
    : ''
}
${replacing ? html`<p>Two-factor authentication is on. Setting up a new authenticator app replaces the old one: enter your password to confirm.</p>` : ''}
${notice(message)}
<ol>
<li><p>Scan this QR code with your authenticator app:</p>
<img class="qr" src="${qr}" width="200" height="200" alt="QR code of your two-factor setup key">
<p>Or type this setup key into the app: <code class="secret" id="totp-secret">${secret.replace(/(.{4})(?=.)/g, '$1 ')}</code> <button type="button" class="secondary" data-copy="totp-secret" hidden>Copy setup key</button></p>
<p><a href="${uri}">Open in authenticator app</a> (on the device that has the app)</p></li>
<li>Enter the six digits it shows (with or without the space).</li>
</ol>
<form method="post" action="/console/two-factor/enroll" class="stack">
${csrfField(s.csrfToken)}
${
  replacing
    ? html`<input type="email" name="username" value="${s.member.email}" autocomplete="username" hidden>
<label for="f-password">Current password</label> <input type="password" name="password" autocomplete="current-password" required id="f-password">`
    : ''
}
<label for="f-code">Code</label> <input name="code" inputmode="numeric" autocomplete="one-time-code" required maxlength="11" id="f-code">
<button type="submit">Turn on two-factor</button>
</form>`,
      required ? undefined : navFor(s, '/console/two-factor/enroll'),
    );
  };

  scope.get('/two-factor/enroll', { schema: { hide: true } }, async (request, reply) => {
    const s = request.consoleSession;
    if (!s || s.stage === 'totp') return reply.redirect('/console/sign-in', 303);
    return enrollPage(s, reply, 200);
  });

  scope.post('/two-factor/enroll', { schema: { hide: true } }, async (request, reply) => {
    const s = request.consoleSession;
    if (!s || s.stage === 'totp') return reply.redirect('/console/sign-in', 303);
    const form = request.body as Form;
    try {
      const { recoveryCodes, renewed } = await enrollTotp(db, s, { code: form.code, password: form.password }, memberActor(s.member, request.ip), now());
      // Post, redirect, get: the codes wait, sealed, for the page the redirect leads to (once).
      const codes = html`${notice('Two-factor authentication is on.', 'ok')}
<p>Each of these codes signs you in once if you lose your authenticator app. They are shown only now: keep them somewhere safe.</p>
<pre class="secret" id="recovery-codes" aria-label="Recovery codes">${recoveryCodes.join('\n')}</pre>
<button type="button" class="secondary" data-copy="recovery-codes" hidden>Copy recovery codes</button>`;
      if (renewed) {
        setSessionCookie(reply, renewed.cookie, deps);
        await saveFlashForCookie(db, renewed.orgId, renewed.cookie, codes.text);
      } else await request.keepForNextPage?.(codes.text);
      return reply.redirect('/console/two-factor/recovery-codes', 303);
    } catch (err) {
      const { status, message } = messageOf(err);
      return enrollPage(s, reply, status, message);
    }
  });

  scope.post('/sign-out', { schema: { hide: true } }, async (request, reply) => {
    if (request.consoleSession) await endSession(db, request.consoleSession);
    clearSessionCookie(reply, deps);
    return reply.redirect('/console/sign-in', 303);
  });

  const invitationPage = async (request: FastifyRequest<{ Params: { token: string } }>, reply: FastifyReply, status: number, message?: string) => {
    const inv = await readInvitation(db, request.params.token, now());
    if (!inv) return send(reply, 404, 'Invitation', html`<h1>Invitation</h1>${notice(INVITATION_UNUSABLE)}`);
    return send(
      reply,
      status,
      'Accept invitation',
      html`<h1>Accept invitation</h1>
<p>You are invited as <strong>${inv.role}</strong> with the email <strong>${inv.email}</strong>. Choose a password of at least ${MIN_PASSWORD} characters.</p>
${notice(message)}
<form method="post" action="/console/invitations/${encodeURIComponent(request.params.token)}" class="stack">
${csrfField(formToken(request, reply, deps))}
<input type="email" name="username" value="${inv.email}" autocomplete="username" hidden>
<label for="f-password">Password</label> <input type="password" name="password" autocomplete="new-password" required minlength="${MIN_PASSWORD}" id="f-password">
<button type="submit">Accept invitation</button>
</form>`,
    );
  };

  scope.get<{ Params: { token: string } }>('/invitations/:token', { schema: { hide: true } }, async (request, reply) => invitationPage(request, reply, 200));

  scope.post<{ Params: { token: string } }>('/invitations/:token', { schema: { hide: true } }, async (request, reply) => {
    try {
      const s = await acceptInvitation(db, { token: request.params.token, password: (request.body as Form).password }, request.ip, now());
      setSessionCookie(reply, s.cookie, deps);
      return reply.redirect(s.stage === 'enroll' ? '/console/two-factor/enroll' : '/console/overview', 303);
    } catch (err) {
      const { status, message } = messageOf(err);
      return invitationPage(request, reply, status, message);
    }
  });
}

/** The page after two-factor is turned on: a member page (the guard's), where the recovery codes wait once. */
export function registerRecoveryCodesPage(scope: FastifyInstance) {
  scope.get('/two-factor/recovery-codes', async (request, reply) =>
    send(
      reply,
      200,
      'Recovery codes',
      html`<h1>Recovery codes</h1>
<p class="muted">Recovery codes are shown once, on this page right after two-factor is turned on; setting up a new authenticator app makes new ones.</p>
<p><a href="/console/overview">Continue to the console</a></p>`,
      navFor(request.member, '/console/two-factor/enroll'),
    ),
  );
}
