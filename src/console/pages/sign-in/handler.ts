import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { DatabaseExecutor } from '../../../domain/database.js';
import {
  acceptInvitation,
  CHOOSE_ORGANIZATION,
  endSession,
  saveFlashForCookie,
  signInOrChoose,
  type ConsoleSession,
  type OrganizationChoice,
} from '../../../domain/sessions.js';
import { completeTwoFactor, enrollTotp, startTotpEnrollment } from '../../../domain/totp.js';
import { memberActor, getInvitation } from '../../../domain/members.js';
import type { Safe } from '../../html.js';
import { invalid } from '../../../contract/errors.js';
import {
  changeOutcome,
  clearSessionCookie,
  cookie,
  EVERY_MEMBER,
  formToken,
  readCookie,
  Redirect,
  setSessionCookie,
  type ConsoleDeps,
  type Form,
} from '../../plugins/index.js';
import { inWords, readerOf } from '../../plugins/errors.js';
import { sendPage } from '../../views/layout.js';
import { acceptanceOf, codeOf, credentialsOf, enrollmentOf, typedEmailOf, withoutSsoOf } from './form.js';
import { ssoRouteForEmail } from '../../../domain/sso/settings.js';
import { samlStartFor, ssoStartFor } from '../sso/handler.js';
import { codeView, enrollView, invitationView, recoveryCodesBox, recoveryCodesView, signInView } from './view.js';
import { passkeySecondFactorBlock, passkeySignInBlock } from '../passkeys/handler.js';
import { passkeyScripts } from '../passkeys/view.js';
import { mustUsePasskey } from '../../../domain/passkeys.js';

const hidden = { schema: { hide: true } };
/** Where a session goes after a step of signing in: its next step, else the console. */
const nextStep = (stage: ConsoleSession['stage']) =>
  new Redirect(stage === 'totp' ? '/console/two-factor' : stage === 'enroll' ? '/console/two-factor/enroll' : '/console/overview');

/**
 * The device cookie (src/domain/passwords.ts): kept by the browser where an account signed in, sent
 * back with its next sign-ins, which then take the password gate's known lane (issue 52, M2).
 */
const DEVICE_COOKIE = 'cp_device';
const DEVICE_COOKIE_MAX_AGE_S = 180 * 86_400;

/** Signing in and out, the two-factor steps and the invitation page. */
export function registerAuthPages(scope: FastifyInstance, deps: ConsoleDeps & { db: DatabaseExecutor }) {
  const { db, now } = deps;
  const deviceOf = (request: FastifyRequest) => readCookie(request, DEVICE_COOKIE);
  const keepDevice = (reply: FastifyReply, value: string) =>
    reply.header('set-cookie', cookie(DEVICE_COOKIE, value, { secure: deps.secureCookies, maxAgeSeconds: DEVICE_COOKIE_MAX_AGE_S }));

  scope.get('/', hidden, async (request, reply) => reply.redirect(request.consoleSession ? '/console/overview' : '/console/sign-in', 303));

  const signInPage = async (request: FastifyRequest, reply: FastifyReply, status: number, message?: Safe, choices?: OrganizationChoice['choices']) => {
    const csrf = formToken(request, reply, deps);
    const speaker = readerOf(request);
    // Signing in with a passkey alone (src/console/pages/passkeys/): one block, bound to the same form token.
    const passkey = choices ? undefined : ((await passkeySignInBlock(csrf, deps, speaker)) ?? undefined);
    const email = typedEmailOf(request.body as Form | undefined);
    return sendPage(reply, status, {
      ...signInView({ csrf, email, message, choices, passkey, withoutSso: withoutSsoOf(request), speaker }),
      scripts: passkey ? passkeyScripts() : [],
    });
  };

  scope.get('/sign-in', hidden, async (request, reply) => {
    if (request.consoleSession?.stage === 'active') return reply.redirect('/console/overview', 303);
    return signInPage(request, reply, 200);
  });

  scope.post<{ Body: Form }>('/sign-in', hidden, async (request, reply) => {
    // The organizations the password opens, when it opens several: the page asks which (status 200).
    let choices: OrganizationChoice['choices'] | undefined;
    const page = (rq: FastifyRequest, rp: FastifyReply, status: number, message?: Safe) => signInPage(rq, rp, choices ? 200 : status, message, choices);
    return changeOutcome(page)(request, reply, () =>
      inWords(readerOf(request), async () => {
        // An address of an organization's verified domain goes to its IdP, whatever else was typed (issue 55).
        const sso = await ssoRouteForEmail(db, request.body?.email);
        if (sso?.kind === 'oidc' && !withoutSsoOf(request)) return new Redirect(ssoStartFor(sso.orgId, sso.email));
        if (sso?.kind === 'saml' && !withoutSsoOf(request)) return new Redirect(samlStartFor(sso.orgId));
        const s = await signInOrChoose(db, credentialsOf(request.body), request.ip, now(), deviceOf(request));
        if ('choices' in s) {
          choices = s.choices;
          throw invalid(CHOOSE_ORGANIZATION);
        }
        keepDevice(reply, s.device);
        setSessionCookie(reply, s.cookie, deps);
        return nextStep(s.stage);
      }),
    );
  });

  const codePage = async (request: FastifyRequest, reply: FastifyReply, status: number, message?: Safe) => {
    // A passkey of the member's, when they have one; the code unless the requirement says passkey only.
    const s = request.consoleSession;
    const code = !s || (s.member.twoFactor && !(await mustUsePasskey(db, { orgId: s.orgId, id: s.member.id, role: s.member.role })));
    const speaker = readerOf(request);
    const passkey = s ? ((await passkeySecondFactorBlock(s, deps, code, speaker)) ?? undefined) : undefined;
    return sendPage(reply, status, {
      ...codeView({ csrf: formToken(request, reply, deps), message, passkey, code, speaker }),
      scripts: passkey ? passkeyScripts() : [],
    });
  };

  scope.get('/two-factor', hidden, async (request, reply) => {
    const s = request.consoleSession;
    if (!s) return reply.redirect('/console/sign-in', 303);
    if (s.stage !== 'totp') return reply.redirect('/console/overview', 303);
    return codePage(request, reply, 200);
  });

  scope.post<{ Body: Form }>('/two-factor', hidden, async (request, reply) => {
    const s = request.consoleSession;
    if (!s) return reply.redirect('/console/sign-in', 303);
    return changeOutcome(codePage)(request, reply, () =>
      inWords(readerOf(request), async () => {
        const renewed = await completeTwoFactor(db, s, codeOf(request.body), request.ip, now());
        setSessionCookie(reply, renewed.cookie, deps);
        return new Redirect('/console/overview');
      }),
    );
  });

  const enrollPage = async (s: ConsoleSession, request: FastifyRequest, reply: FastifyReply, status: number, message?: Safe) => {
    // Made by the server, kept with the session, shown once: as a QR code and as text.
    const { secret, uri } = await startTotpEnrollment(db, s);
    // Loaded here, on the first enrolment: the page's other answers never need it (docs/decisions.md).
    const { default: QRCode } = await import('qrcode');
    const qr = await QRCode.toDataURL(uri, { margin: 1, width: 200, errorCorrectionLevel: 'M' });
    return sendPage(reply, status, enrollView({ session: s, secret, uri, qr, message, speaker: readerOf(request) }));
  };

  scope.get('/two-factor/enroll', hidden, async (request, reply) => {
    const s = request.consoleSession;
    if (!s || s.stage === 'totp') return reply.redirect('/console/sign-in', 303);
    return enrollPage(s, request, reply, 200);
  });

  scope.post<{ Body: Form }>('/two-factor/enroll', hidden, async (request, reply) => {
    const s = request.consoleSession;
    if (!s || s.stage === 'totp') return reply.redirect('/console/sign-in', 303);
    const speaker = readerOf(request);
    return changeOutcome((rq, rp, status, message) => enrollPage(s, rq, rp, status, message))(request, reply, () =>
      inWords(speaker, async () => {
        const { recoveryCodes, renewed } = await enrollTotp(db, s, enrollmentOf(request.body), memberActor(s.member, request.ip), now());
        // Post, redirect, get: the codes wait, sealed, for the page the redirect leads to (once).
        const codes = recoveryCodesBox(recoveryCodes, speaker);
        if (renewed) {
          setSessionCookie(reply, renewed.cookie, deps);
          await saveFlashForCookie(db, renewed.orgId, renewed.cookie, codes.text);
        } else await request.keepForNextPage?.(codes.text);
        return new Redirect('/console/two-factor/recovery-codes');
      }),
    );
  });

  scope.post('/sign-out', hidden, async (request, reply) => {
    if (request.consoleSession) await endSession(db, request.consoleSession);
    clearSessionCookie(reply, deps);
    return reply.redirect('/console/sign-in', 303);
  });

  const invitationPage = async (request: FastifyRequest<{ Params: { token: string } }>, reply: FastifyReply, status: number, message?: Safe) => {
    const invitation = await getInvitation(db, request.params.token, now());
    const csrf = invitation ? formToken(request, reply, deps) : '';
    return sendPage(reply, invitation ? status : 404, invitationView({ invitation, token: request.params.token, csrf, message, speaker: readerOf(request) }));
  };

  scope.get<{ Params: { token: string } }>('/invitations/:token', hidden, async (request, reply) => invitationPage(request, reply, 200));

  scope.post<{ Params: { token: string }; Body: Form }>('/invitations/:token', hidden, async (request, reply) =>
    changeOutcome((_rq, rp, status, message) => invitationPage(request, rp, status, message))(request, reply, () =>
      inWords(readerOf(request), async () => {
        const s = await acceptInvitation(db, acceptanceOf(request.params.token, request.body), request.ip, now(), deviceOf(request));
        keepDevice(reply, s.device);
        setSessionCookie(reply, s.cookie, deps);
        return new Redirect(s.stage === 'enroll' ? '/console/two-factor/enroll' : '/console/overview');
      }),
    ),
  );
}

/** The page after two-factor is turned on: a member page (the guard's), where the recovery codes wait once. */
export function registerRecoveryCodesPage(scope: FastifyInstance) {
  scope.get('/two-factor/recovery-codes', { config: { roles: EVERY_MEMBER } }, async (request, reply) =>
    sendPage(reply, 200, recoveryCodesView({ session: request.member, speaker: readerOf(request) })),
  );
}
