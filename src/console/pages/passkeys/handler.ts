import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { invalid } from '../../../contract/errors.js';
import type { DatabaseExecutor } from '../../../domain/database.js';
import { memberActor } from '../../../domain/members.js';
import {
  completePasskeySecondFactor,
  finishPasskeyRegistration,
  listPasskeys,
  mustUsePasskey,
  PASSKEYS_NEED_A_NAME,
  relyingPartyOf,
  removePasskey,
  renamePasskey,
  requiresPasskeys,
  secondFactorOptions,
  passkeySignInOptions,
  signInWithPasskey,
  startPasskeyRegistration,
} from '../../../domain/passkeys.js';
import { saveFlashForCookie, type ConsoleSession } from '../../../domain/sessions.js';
import { notice, type Safe } from '../../html.js';
import { actorOf, changeOutcome, EVERY_MEMBER, formToken, Redirect, setSessionCookie, type ConsoleDeps, type Form } from '../../plugins/index.js';
import { sendPage } from '../../views/layout.js';
import { PASSKEY_WORDS as W } from '../../words.js';
import { accountView } from '../members/view.js';
import { codeView, signInView } from '../sign-in/view.js';
import { finishOf, nameOf, registrationOf, responseOf, tokenOf } from './form.js';
import { passkeyScripts, passkeysSection, registrationBlock, requiredView, requirementSetting, secondFactorBlock, signInBlock } from './view.js';

type Deps = ConsoleDeps & { db: DatabaseExecutor };
const hidden = { schema: { hide: true } };

/** The sign-in page's passkey entry, bound to the page's form token (null when passkeys cannot work here: an IP address). */
export async function passkeySignInBlock(csrf: string, deps: Deps): Promise<Safe | null> {
  const rp = relyingPartyOf(deps.baseUrl);
  if (!rp) return null;
  return signInBlock(csrf, await passkeySignInOptions(deps.db, rp, csrf, deps.now()));
}

/** The second step's passkey (null when the member has none, or passkeys cannot work here). */
export async function passkeySecondFactorBlock(s: ConsoleSession, deps: Deps, orCode: boolean): Promise<Safe | null> {
  const rp = relyingPartyOf(deps.baseUrl);
  const options = rp ? await secondFactorOptions(deps.db, rp, s, deps.now()) : null;
  return options ? secondFactorBlock(s.csrfToken, options, orCode) : null;
}

/** The Account page: the member's password, two-factor, and passkeys. */
export async function sendAccountPage(deps: Deps, s: ConsoleSession, reply: FastifyReply, status: number, message?: Safe) {
  const passkeys = await listPasskeys(deps.db, s.orgId, s.member.id);
  const available = relyingPartyOf(deps.baseUrl) !== null;
  const section = passkeysSection({ session: s, passkeys, available });
  return sendPage(reply, status, { ...accountView({ session: s, message, passkeys: section }), scripts: available ? passkeyScripts() : [] });
}

/** The owner's setting, for the Members page. */
export async function passkeyRequirementBlock(deps: Deps, s: ConsoleSession): Promise<Safe> {
  return requirementSetting(s.csrfToken, await requiresPasskeys(deps.db, s.orgId));
}

/**
 * The passkey steps outside the member guard (signing in, and a session held by the requirement):
 * each checks its session's stage itself. Every change goes through the console's CSRF check and
 * answers post, redirect, get; every check of a password or passkey spends the sign-in limits.
 */
export function registerPasskeyAuthPages(scope: FastifyInstance, deps: Deps) {
  const { db, now } = deps;
  const rpOrRefuse = () => {
    const rp = relyingPartyOf(deps.baseUrl);
    if (!rp) throw invalid(PASSKEYS_NEED_A_NAME);
    return rp;
  };

  const signInPage = async (request: FastifyRequest, reply: FastifyReply, status: number, message?: Safe) => {
    const csrf = formToken(request, reply, deps);
    const passkey = (await passkeySignInBlock(csrf, deps)) ?? undefined;
    return sendPage(reply, status, { ...signInView({ csrf, email: '', message, passkey }), scripts: passkey ? passkeyScripts() : [] });
  };

  scope.post<{ Body: Form }>('/sign-in/passkey', hidden, async (request, reply) =>
    changeOutcome(signInPage)(request, reply, async () => {
      const signedIn = await signInWithPasskey(db, rpOrRefuse(), tokenOf(request.body), responseOf(request.body), request.ip, now());
      setSessionCookie(reply, signedIn.cookie, deps);
      return new Redirect('/console/overview');
    }),
  );

  /** A session held by the requirement: its page; else the second step of signing in. */
  const heldOrCodePage = (s: ConsoleSession) => async (_request: FastifyRequest, reply: FastifyReply, status: number, message?: Safe) => {
    if (s.stage === 'passkey') return requiredPage(s, reply, status, message);
    const code = s.member.twoFactor && !(await mustUsePasskey(db, { orgId: s.orgId, id: s.member.id, role: s.member.role }));
    const block = await passkeySecondFactorBlock(s, deps, code);
    return sendPage(reply, status, { ...codeView({ csrf: s.csrfToken, message, passkey: block ?? undefined, code }), scripts: block ? passkeyScripts() : [] });
  };

  scope.post<{ Body: Form }>('/two-factor/passkey', hidden, async (request, reply) => {
    const s = request.consoleSession;
    if (!s) return reply.redirect('/console/sign-in', 303);
    return changeOutcome(heldOrCodePage(s))(request, reply, async () => {
      const renewed = await completePasskeySecondFactor(db, rpOrRefuse(), s, responseOf(request.body), request.ip, now());
      setSessionCookie(reply, renewed.cookie, deps);
      return new Redirect('/console/overview');
    });
  });

  const requiredPage = async (s: ConsoleSession, reply: FastifyReply, status: number, message?: Safe) =>
    sendPage(reply, status, requiredView({ session: s, block: s.passkey?.member ? await passkeySecondFactorBlock(s, deps, false) : null, message }));

  scope.get('/passkeys/required', hidden, async (request, reply) => {
    const s = request.consoleSession;
    if (!s) return reply.redirect('/console/sign-in', 303);
    if (s.stage !== 'passkey') return reply.redirect('/console/overview', 303);
    return requiredPage(s, reply, 200);
  });

  // Adding a passkey: from the Account page, or from the page of a session the requirement holds.
  const accountOrRequired = (s: ConsoleSession) => (_rq: FastifyRequest, reply: FastifyReply, status: number, message?: Safe) =>
    s.stage === 'passkey' ? requiredPage(s, reply, status, message) : sendAccountPage(deps, s, reply, status, message);
  const usable = (s: ConsoleSession | null): s is ConsoleSession => s !== null && (s.stage === 'active' || s.stage === 'passkey');

  // First the password again; the ceremony's form then waits, once, on the page the redirect leads to.
  scope.post<{ Body: Form }>('/account/passkeys', hidden, async (request, reply) => {
    const s = request.consoleSession;
    if (!usable(s)) return reply.redirect('/console/sign-in', 303);
    const back = s.stage === 'passkey' ? '/console/passkeys/required' : '/console/account';
    return changeOutcome(accountOrRequired(s), () => back)(request, reply, async () => {
      const started = await startPasskeyRegistration(db, rpOrRefuse(), s, registrationOf(request.body), memberActor(s.member, request.ip), now());
      return registrationBlock(s.csrfToken, started.name, started.options);
    });
  });

  scope.post<{ Body: Form }>('/account/passkeys/new', hidden, async (request, reply) => {
    const s = request.consoleSession;
    if (!usable(s)) return reply.redirect('/console/sign-in', 303);
    return changeOutcome(accountOrRequired(s), () => '/console/account')(request, reply, async () => {
      const { passkey, renewed } = await finishPasskeyRegistration(db, rpOrRefuse(), s, finishOf(request.body), memberActor(s.member, request.ip), now());
      const said = notice(W.added(passkey.name), 'ok');
      if (!renewed) return said;
      // The held session stepped up under a new id: the message waits with the new one.
      setSessionCookie(reply, renewed.cookie, deps);
      await saveFlashForCookie(db, renewed.orgId, renewed.cookie, said.text);
      return new Redirect('/console/account');
    });
  });
}

/** The member's own passkeys (rename, remove): member pages, behind the guard. The owner's setting is on the Members page (its handler). */
export function registerPasskeyMemberPages(scope: FastifyInstance, deps: Deps) {
  const { db, now } = deps;
  const account = changeOutcome((request, reply, status, message) => sendAccountPage(deps, request.member, reply, status, message));
  // One's own passkeys: every role's, a manager's too (the guard closes a route that names none).
  const own = { config: { roles: EVERY_MEMBER } };

  scope.post<{ Params: { passkeyId: string }; Body: Form }>('/account/passkeys/:passkeyId/rename', own, async (request, reply) =>
    account(request, reply, async () => {
      const p = await renamePasskey(db, request.member, request.params.passkeyId, nameOf(request.body), actorOf(request), now());
      return notice(W.renamed(p.name), 'ok');
    }),
  );

  scope.post<{ Params: { passkeyId: string } }>('/account/passkeys/:passkeyId/remove', own, async (request, reply) =>
    account(request, reply, async () => {
      const p = await removePasskey(db, request.member, request.params.passkeyId, actorOf(request), now());
      return notice(W.removed(p.name), 'ok');
    }),
  );
}
