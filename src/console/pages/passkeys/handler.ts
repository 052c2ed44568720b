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
import { inWords, readerOf } from '../../plugins/errors.js';
import { sendPage } from '../../views/layout.js';
import { getCheckinSettings } from '../../../domain/checkins/settings.js';
import { PLAIN, speakerFor, type Speaker } from '../../words.js';
import { accountView } from '../members/view.js';
import { codeView, signInView } from '../sign-in/view.js';
import { finishOf, nameOf, registrationOf, responseOf, tokenOf } from './form.js';
import { passkeyScripts, passkeysSection, registrationBlock, requiredView, requirementSetting, secondFactorBlock, signInBlock } from './view.js';

type Deps = ConsoleDeps & { db: DatabaseExecutor };
const hidden = { schema: { hide: true } };

/** The sign-in page's passkey entry, bound to the page's form token (null when passkeys cannot work here: an IP address). */
export async function passkeySignInBlock(csrf: string, deps: Deps, sp: Speaker = PLAIN): Promise<Safe | null> {
  const rp = relyingPartyOf(deps.baseUrl);
  if (!rp) return null;
  return signInBlock(csrf, await passkeySignInOptions(deps.db, rp, csrf, deps.now()), sp);
}

/** The second step's passkey (null when the member has none, or passkeys cannot work here). */
export async function passkeySecondFactorBlock(s: ConsoleSession, deps: Deps, orCode: boolean, sp: Speaker = PLAIN): Promise<Safe | null> {
  const rp = relyingPartyOf(deps.baseUrl);
  const options = rp ? await secondFactorOptions(deps.db, rp, s, deps.now()) : null;
  return options ? secondFactorBlock(s.csrfToken, options, orCode, sp) : null;
}

/**
 * The speaker of a session's page, the guard's or not (a session the requirement holds has no
 * `request.member`): the browser's language, and the organization's check-in time zone.
 */
async function speakerOfSession(db: Deps['db'], s: ConsoleSession, request: FastifyRequest): Promise<Speaker> {
  return speakerFor(request.headers['accept-language'], (await getCheckinSettings(db, s.orgId)).timeZone, s.member.language);
}

/** The Account page: the member's password, two-factor, and passkeys. */
export async function sendAccountPage(deps: Deps, s: ConsoleSession, reply: FastifyReply, status: number, message?: Safe) {
  const passkeys = await listPasskeys(deps.db, s.orgId, s.member.id);
  const available = relyingPartyOf(deps.baseUrl) !== null;
  const speaker = await speakerOfSession(deps.db, s, reply.request);
  const section = passkeysSection({ session: s, passkeys, available, speaker });
  return sendPage(reply, status, { ...accountView({ session: s, message, passkeys: section, speaker }), speaker, scripts: available ? passkeyScripts() : [] });
}

/** The owner's setting, for the Members page, in the words of that page's speaker. */
export async function passkeyRequirementBlock(deps: Deps, s: ConsoleSession, sp: Speaker = PLAIN): Promise<Safe> {
  return requirementSetting(s.csrfToken, await requiresPasskeys(deps.db, s.orgId), sp);
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
    const speaker = readerOf(request);
    const passkey = (await passkeySignInBlock(csrf, deps, speaker)) ?? undefined;
    return sendPage(reply, status, { ...signInView({ csrf, email: '', message, passkey, speaker }), scripts: passkey ? passkeyScripts() : [] });
  };

  scope.post<{ Body: Form }>('/sign-in/passkey', hidden, async (request, reply) =>
    changeOutcome(signInPage)(request, reply, () =>
      inWords(readerOf(request), async () => {
        const signedIn = await signInWithPasskey(db, rpOrRefuse(), tokenOf(request.body), responseOf(request.body), request.ip, now());
        setSessionCookie(reply, signedIn.cookie, deps);
        return new Redirect('/console/overview');
      }),
    ),
  );

  /** A session held by the requirement: its page; else the second step of signing in. */
  const heldOrCodePage = (s: ConsoleSession) => async (request: FastifyRequest, reply: FastifyReply, status: number, message?: Safe) => {
    if (s.stage === 'passkey') return requiredPage(s, reply, status, message);
    const code = s.member.twoFactor && !(await mustUsePasskey(db, { orgId: s.orgId, id: s.member.id, role: s.member.role }));
    const speaker = readerOf(request);
    const block = await passkeySecondFactorBlock(s, deps, code, speaker);
    return sendPage(reply, status, {
      ...codeView({ csrf: s.csrfToken, message, passkey: block ?? undefined, code, speaker }),
      scripts: block ? passkeyScripts() : [],
    });
  };

  scope.post<{ Body: Form }>('/two-factor/passkey', hidden, async (request, reply) => {
    const s = request.consoleSession;
    if (!s) return reply.redirect('/console/sign-in', 303);
    return changeOutcome(heldOrCodePage(s))(request, reply, () =>
      inWords(readerOf(request), async () => {
        const renewed = await completePasskeySecondFactor(db, rpOrRefuse(), s, responseOf(request.body), request.ip, now());
        setSessionCookie(reply, renewed.cookie, deps);
        return new Redirect('/console/overview');
      }),
    );
  });

  const requiredPage = async (s: ConsoleSession, reply: FastifyReply, status: number, message?: Safe) => {
    const speaker = readerOf(reply.request);
    const block = s.passkey?.member ? await passkeySecondFactorBlock(s, deps, false, speaker) : null;
    return sendPage(reply, status, requiredView({ session: s, block, message, speaker }));
  };

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
    const speaker = readerOf(request);
    return changeOutcome(accountOrRequired(s), () => back)(request, reply, () =>
      inWords(speaker, async () => {
        const started = await startPasskeyRegistration(db, rpOrRefuse(), s, registrationOf(request.body), memberActor(s.member, request.ip), now());
        return registrationBlock(s.csrfToken, started.name, started.options, speaker);
      }),
    );
  });

  scope.post<{ Body: Form }>('/account/passkeys/new', hidden, async (request, reply) => {
    const s = request.consoleSession;
    if (!usable(s)) return reply.redirect('/console/sign-in', 303);
    const speaker = readerOf(request);
    return changeOutcome(accountOrRequired(s), () => '/console/account')(request, reply, () =>
      inWords(speaker, async () => {
        const { passkey, renewed } = await finishPasskeyRegistration(db, rpOrRefuse(), s, finishOf(request.body), memberActor(s.member, request.ip), now());
        const said = notice(speaker.t('console.passkeys.added', { name: passkey.name }), 'ok');
        if (!renewed) return said;
        // The held session stepped up under a new id: the message waits with the new one.
        setSessionCookie(reply, renewed.cookie, deps);
        await saveFlashForCookie(db, renewed.orgId, renewed.cookie, said.text);
        return new Redirect('/console/account');
      }),
    );
  });
}

/** The member's own passkeys (rename, remove): member pages, behind the guard. The owner's setting is on the Members page (its handler). */
export function registerPasskeyMemberPages(scope: FastifyInstance, deps: Deps) {
  const { db, now } = deps;
  const account = changeOutcome((request, reply, status, message) => sendAccountPage(deps, request.member, reply, status, message));
  // One's own passkeys: every role's, a manager's too (the guard closes a route that names none).
  const own = { config: { roles: EVERY_MEMBER } };

  scope.post<{ Params: { passkeyId: string }; Body: Form }>('/account/passkeys/:passkeyId/rename', own, async (request, reply) =>
    account(request, reply, () =>
      inWords(readerOf(request), async () => {
        const p = await renamePasskey(db, request.member, request.params.passkeyId, nameOf(request.body), actorOf(request), now());
        return notice(readerOf(request).t('console.passkeys.renamed', { name: p.name }), 'ok');
      }),
    ),
  );

  scope.post<{ Params: { passkeyId: string } }>('/account/passkeys/:passkeyId/remove', own, async (request, reply) =>
    account(request, reply, () =>
      inWords(readerOf(request), async () => {
        const p = await removePasskey(db, request.member, request.params.passkeyId, actorOf(request), now());
        return notice(readerOf(request).t('console.passkeys.removed', { name: p.name }), 'ok');
      }),
    ),
  );
}
