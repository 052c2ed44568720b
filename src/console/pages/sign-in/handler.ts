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
import QRCode from 'qrcode';
import type { Safe } from '../../html.js';
import { invalid } from '../../../contract/errors.js';
import { changeOutcome, clearSessionCookie, EVERY_MEMBER, formToken, Redirect, setSessionCookie, type ConsoleDeps, type Form } from '../../plugins/index.js';
import { sendPage } from '../../views/layout.js';
import { acceptanceOf, codeOf, credentialsOf, enrollmentOf, typedEmailOf } from './form.js';
import { codeView, enrollView, invitationView, recoveryCodesBox, recoveryCodesView, signInView } from './view.js';

const hidden = { schema: { hide: true } };
/** Where a session goes after a step of signing in: its next step, else the console. */
const nextStep = (stage: ConsoleSession['stage']) =>
  new Redirect(stage === 'totp' ? '/console/two-factor' : stage === 'enroll' ? '/console/two-factor/enroll' : '/console/overview');

/** Signing in and out, the two-factor steps and the invitation page. */
export function registerAuthPages(scope: FastifyInstance, deps: ConsoleDeps & { db: DatabaseExecutor }) {
  const { db, now } = deps;

  scope.get('/', hidden, async (request, reply) => reply.redirect(request.consoleSession ? '/console/overview' : '/console/sign-in', 303));

  const signInPage = async (request: FastifyRequest, reply: FastifyReply, status: number, message?: Safe, choices?: OrganizationChoice['choices']) =>
    sendPage(reply, status, signInView({ csrf: formToken(request, reply, deps), email: typedEmailOf(request.body as Form | undefined), message, choices }));

  scope.get('/sign-in', hidden, async (request, reply) => {
    if (request.consoleSession?.stage === 'active') return reply.redirect('/console/overview', 303);
    return signInPage(request, reply, 200);
  });

  scope.post<{ Body: Form }>('/sign-in', hidden, async (request, reply) => {
    // The organizations the password opens, when it opens several: the page asks which (status 200).
    let choices: OrganizationChoice['choices'] | undefined;
    const page = (rq: FastifyRequest, rp: FastifyReply, status: number, message?: Safe) => signInPage(rq, rp, choices ? 200 : status, message, choices);
    return changeOutcome(page)(request, reply, async () => {
      const s = await signInOrChoose(db, credentialsOf(request.body), request.ip, now());
      if ('choices' in s) {
        choices = s.choices;
        throw invalid(CHOOSE_ORGANIZATION);
      }
      setSessionCookie(reply, s.cookie, deps);
      return nextStep(s.stage);
    });
  });

  const codePage = async (request: FastifyRequest, reply: FastifyReply, status: number, message?: Safe) =>
    sendPage(reply, status, codeView({ csrf: formToken(request, reply, deps), message }));

  scope.get('/two-factor', hidden, async (request, reply) => {
    const s = request.consoleSession;
    if (!s) return reply.redirect('/console/sign-in', 303);
    if (s.stage !== 'totp') return reply.redirect('/console/overview', 303);
    return codePage(request, reply, 200);
  });

  scope.post<{ Body: Form }>('/two-factor', hidden, async (request, reply) => {
    const s = request.consoleSession;
    if (!s) return reply.redirect('/console/sign-in', 303);
    return changeOutcome(codePage)(request, reply, async () => {
      const renewed = await completeTwoFactor(db, s, codeOf(request.body), request.ip, now());
      setSessionCookie(reply, renewed.cookie, deps);
      return new Redirect('/console/overview');
    });
  });

  const enrollPage = async (s: ConsoleSession, reply: FastifyReply, status: number, message?: Safe) => {
    // Made by the server, kept with the session, shown once: as a QR code and as text.
    const { secret, uri } = await startTotpEnrollment(db, s);
    const qr = await QRCode.toDataURL(uri, { margin: 1, width: 200, errorCorrectionLevel: 'M' });
    return sendPage(reply, status, enrollView({ session: s, secret, uri, qr, message }));
  };

  scope.get('/two-factor/enroll', hidden, async (request, reply) => {
    const s = request.consoleSession;
    if (!s || s.stage === 'totp') return reply.redirect('/console/sign-in', 303);
    return enrollPage(s, reply, 200);
  });

  scope.post<{ Body: Form }>('/two-factor/enroll', hidden, async (request, reply) => {
    const s = request.consoleSession;
    if (!s || s.stage === 'totp') return reply.redirect('/console/sign-in', 303);
    return changeOutcome((_rq, rp, status, message) => enrollPage(s, rp, status, message))(request, reply, async () => {
      const { recoveryCodes, renewed } = await enrollTotp(db, s, enrollmentOf(request.body), memberActor(s.member, request.ip), now());
      // Post, redirect, get: the codes wait, sealed, for the page the redirect leads to (once).
      const codes = recoveryCodesBox(recoveryCodes);
      if (renewed) {
        setSessionCookie(reply, renewed.cookie, deps);
        await saveFlashForCookie(db, renewed.orgId, renewed.cookie, codes.text);
      } else await request.keepForNextPage?.(codes.text);
      return new Redirect('/console/two-factor/recovery-codes');
    });
  });

  scope.post('/sign-out', hidden, async (request, reply) => {
    if (request.consoleSession) await endSession(db, request.consoleSession);
    clearSessionCookie(reply, deps);
    return reply.redirect('/console/sign-in', 303);
  });

  const invitationPage = async (request: FastifyRequest<{ Params: { token: string } }>, reply: FastifyReply, status: number, message?: Safe) => {
    const invitation = await getInvitation(db, request.params.token, now());
    const csrf = invitation ? formToken(request, reply, deps) : '';
    return sendPage(reply, invitation ? status : 404, invitationView({ invitation, token: request.params.token, csrf, message }));
  };

  scope.get<{ Params: { token: string } }>('/invitations/:token', hidden, async (request, reply) => invitationPage(request, reply, 200));

  scope.post<{ Params: { token: string }; Body: Form }>('/invitations/:token', hidden, async (request, reply) =>
    changeOutcome((_rq, rp, status, message) => invitationPage(request, rp, status, message))(request, reply, async () => {
      const s = await acceptInvitation(db, acceptanceOf(request.params.token, request.body), request.ip, now());
      setSessionCookie(reply, s.cookie, deps);
      return new Redirect(s.stage === 'enroll' ? '/console/two-factor/enroll' : '/console/overview');
    }),
  );
}

/** The page after two-factor is turned on: a member page (the guard's), where the recovery codes wait once. */
export function registerRecoveryCodesPage(scope: FastifyInstance) {
  scope.get('/two-factor/recovery-codes', { config: { roles: EVERY_MEMBER } }, async (request, reply) =>
    sendPage(reply, 200, recoveryCodesView({ session: request.member })),
  );
}
