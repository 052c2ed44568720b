import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';
import type { DatabaseExecutor, Queryable } from './database.js';
import {
  deleteSession,
  findMemberByEmailInOrg,
  findMembersByEmail,
  findSessionWithMember,
  insertMember,
  insertSessionRow,
  lockOrganization,
  markSignedIn,
  readRequireTwoFactor,
  setSessionFlashRow,
  takeInvitation,
  takeSessionFlashRow,
  touchSession,
  type MemberRow,
  type SessionStage,
} from '../db/repositories/members.js';
import { ApiError, invalid } from '../contract/errors.js';
import { newId, randomBase62 } from './ids.js';
import { requireLiveOrg } from './orgs.js';
import { recordAudit, type Actor } from './audit.js';
import { deleteMemberSessionRows, listMemberSessionRows } from '../db/repositories/sessions.js';
import { countPasskeys } from '../db/repositories/passkeys.js';
import { checkPasswordMatches, checkPasswordRule, chooseMembershipPassword, deviceCookieAfterSignIn, MAX_PASSWORD } from './passwords.js';
import { INVITATION_UNUSABLE, memberActor, memberView, getInvitation, grantInvitationTeams, type MemberView } from './members.js';
import { linkSessionToIdp } from '../db/repositories/sso.js';
import { ssoPolicy, SSO_REQUIRED_FOR_PASSWORD } from './sso/settings.js';

/**
 * Console sessions (CONTRACT.md section 11): signing in (by password, or by accepting an
 * invitation), the session a cookie names, its message for the next page, and signing out. The
 * limits on password checks are passwords.ts's; the second factor is totp.ts's.
 */

export const SESSION_IDLE_MS = 12 * 3_600_000;
export const SESSION_MAX_MS = 7 * 24 * 3_600_000;
/** A session's last use is written at most this often (a console page is not a write per view). */
const TOUCH_EVERY_MS = 60_000;

/** One answer for every refused sign-in: it never says whether the email is a member's, or which check failed. */
export const SIGN_IN_REFUSED =
  'The email or password is not right, or too many attempts were made. After 10 failed attempts, signing in pauses for 15 minutes.';

const sha256 = (s: string | Buffer) => createHash('sha256').update(s).digest();

export interface NewSession {
  /** The cookie's value: in this answer only; the database keeps its SHA-256. */
  cookie: string;
  stage: SessionStage;
  orgId: string;
  memberId: string;
  /** The new session's form token. */
  csrfToken: string;
}

/** `passkey`: the member proved a passkey in this sign-in (passkeys.ts). */
export async function openSession(db: Queryable, m: MemberRow, stage: SessionStage, address: string | null, now: Date, passkey = false): Promise<NewSession> {
  const cookie = randomBytes(32).toString('base64url');
  const csrfToken = randomBase62(32);
  await insertSessionRow(db, { orgId: m.orgId, idHash: sha256(cookie), memberId: m.id, stage, csrfToken, address, at: now, passkey });
  return { cookie, stage, orgId: m.orgId, memberId: m.id, csrfToken };
}

/** The stage a member reaches with a right password: a second factor (a code or a passkey) when they have one. */
async function stageAfterPassword(db: Queryable, m: MemberRow): Promise<SessionStage> {
  if (m.totpSecret || (await countPasskeys(db, m.orgId, m.id)) > 0) return 'totp';
  return (await readRequireTwoFactor(db, m.orgId)) ? 'enroll' : 'active';
}

/** What an acceptance past the limits answers: its link is used up, as by any well-formed post. */
export const ACCEPTANCE_LIMITED =
  'Too many password attempts were made from this address or for this email, so this invitation link is now used up. Wait 15 minutes, then ask for a new one.';

/**
 * Opening an invitation: the person sets a password and is signed in. A well-formed post uses the
 * link up before anything else, whatever follows (a second post finds it used); a malformed form
 * (the password not text of 12 to 1024 characters, or a token that cannot be one) changes nothing
 * (docs/decisions.md, issue 52). The password is hashed in the password gate under the sign-in
 * limits, and never compared with the address's other memberships: the answer and the work (one
 * scrypt) are the same whether the address is a member elsewhere or not.
 */
export async function acceptInvitation(
  db: DatabaseExecutor,
  input: { token: string; password: unknown },
  address: string | null,
  now: Date,
  device?: string,
): Promise<NewSession & { member: MemberView } & DeviceCookie> {
  const password = checkPasswordRule(input.password);
  const inv = await getInvitation(db, input.token, now);
  if (!inv) throw invalid(INVITATION_UNUSABLE);
  const usable = await db.transaction(async (tx) => {
    await requireLiveOrg(tx, inv.orgId);
    if (!(await takeInvitation(tx, inv.orgId, inv.id, now))) return false;
    // A member of this organization already (invited twice, accepted once): the owner knows it.
    return (await findMemberByEmailInOrg(tx, inv.orgId, inv.email)) === null;
  });
  if (!usable) throw invalid(INVITATION_UNUSABLE);
  const passwordHash = await chooseMembershipPassword(db, { email: inv.email, address, password, exceptMemberId: null }, now);
  if (passwordHash === 'limited') throw new ApiError('unauthorized', ACCEPTANCE_LIMITED);
  const joined = await db.transaction(async (tx) => {
    await requireLiveOrg(tx, inv.orgId);
    // Two links of one address to one organization, accepted at once: the second finds the first's member.
    await lockOrganization(tx, inv.orgId);
    if (await findMemberByEmailInOrg(tx, inv.orgId, inv.email)) throw invalid(INVITATION_UNUSABLE);
    const m: MemberRow = {
      orgId: inv.orgId,
      id: newId('mem'),
      email: inv.email,
      role: inv.role,
      passwordHash,
      totpSecret: null,
      totpLastStep: null,
      recoveryCodes: [],
      createdAt: now.toISOString(),
      lastSignInAt: now.toISOString(),
    };
    await insertMember(tx, { orgId: m.orgId, id: m.id, email: m.email, role: m.role, passwordHash, at: now });
    if (m.role === 'manager') await grantInvitationTeams(tx, m.orgId, inv.id, m.id);
    const session = await openSession(tx, m, (await readRequireTwoFactor(tx, m.orgId)) ? 'enroll' : 'active', address, now);
    await recordAudit(
      tx,
      m.orgId,
      memberActor(m, address),
      { action: 'member.joined', target: { kind: 'member', id: m.id }, details: { email: m.email, role: m.role, invitation: inv.id } },
      now,
    );
    return { ...session, member: memberView(m) };
  });
  return { ...joined, device: await deviceCookieAfterSignIn(db, device, inv.email.trim().toLowerCase(), passwordHash) };
}

/**
 * A right password's device cookie (passwords.ts): the value the browser keeps from now on, with a
 * token for this account that puts its next sign-ins in the password gate's known lane.
 */
export interface DeviceCookie {
  device: string;
}

export type SignedIn = NewSession & { member: MemberView };

/** Several memberships of the email open with the password: the organizations to choose from, oldest membership first. */
export interface OrganizationChoice {
  choices: Array<{ orgId: string; name: string }>;
}

/** The answer when a password opens several memberships and none of them was chosen. */
/** The break-glass owner of an organization that requires SSO, with no passkey yet (said after a right password only). */
export const BREAK_GLASS_NEEDS_PASSKEY =
  'While your organization requires single sign-on, you sign in here with your password and a passkey, and you have no passkey yet. Sign in through your organization, add a passkey on your Account page, then use this way in.';

export const CHOOSE_ORGANIZATION = 'Your password opens the console of more than one organization. Choose one, and enter your password again.';

/**
 * Email and password. The check spends the account's and the address's limits (passwords.ts) and
 * runs through the process's gate; a refusal has one message whatever failed, takes the time of a
 * check either way, and writes nothing more for a member than for an unknown email (no audit row:
 * the limits' own counts are the record of failed attempts). Memberships of one address may share
 * a password: when it opens several, `organization` (an organization id) names the one to sign in
 * to, and without it the answer is the choice, offered only to whoever typed that password.
 * `device`: the device cookie the browser sent; a sign-in answers the cookie to keep, whose token
 * for this account puts its next sign-ins in the password gate's known lane (passwords.ts).
 */
export async function signInOrChoose(
  db: DatabaseExecutor,
  input: { email: unknown; password: unknown; organization?: unknown },
  address: string,
  now: Date,
  device?: string,
): Promise<(SignedIn & DeviceCookie) | OrganizationChoice> {
  const email = typeof input.email === 'string' ? input.email.trim().toLowerCase().slice(0, 254) : '';
  const password = typeof input.password === 'string' ? input.password.slice(0, MAX_PASSWORD) : '';
  // Every membership of the address in a live organization (one query, a member's or not), read in
  // the attempt's turn in the password gate.
  let found: Awaited<ReturnType<typeof findMembersByEmail>> = [];
  const stored = async () => {
    found = email ? await findMembersByEmail(db, email) : [];
    return found.map((x) => x.passwordHash);
  };
  const outcome = await checkPasswordMatches(db, { account: email, address, password, stored, device }, now);
  const opened = outcome === 'limited' ? [] : outcome.map((i) => found[i]);
  if (opened.length === 0) throw new ApiError('unauthorized', SIGN_IN_REFUSED);
  const m = opened.length === 1 ? opened[0] : opened.find((x) => x.orgId === input.organization);
  // The choice sets no device cookie: the sign-in to the organization chosen does.
  if (!m) return { choices: opened.map((x) => ({ orgId: x.orgId, name: x.orgName })) };
  // Enforced SSO (issue 55): said only to whoever typed the right password.
  const policy = await ssoPolicy(db, m.orgId);
  if (policy.required && policy.breakGlassMemberId !== m.id) throw new ApiError('unauthorized', SSO_REQUIRED_FOR_PASSWORD);
  // The break-glass owner's password leads to their passkey, never in alone nor with a code.
  if (policy.required && (await countPasskeys(db, m.orgId, m.id)) === 0) throw new ApiError('unauthorized', BREAK_GLASS_NEEDS_PASSKEY);
  const next = { device: await deviceCookieAfterSignIn(db, device, email, m.passwordHash) };
  const stage = await stageAfterPassword(db, m);
  return db.transaction(async (tx) => {
    if (stage !== 'totp') {
      await markSignedIn(tx, m.orgId, m.id, now);
      await recordAudit(
        tx,
        m.orgId,
        memberActor(m, address),
        {
          action: 'member.signed_in',
          target: { kind: 'member', id: m.id },
          // The break-glass owner's way in while SSO is required is marked as such (issue 55).
          details: policy.required ? { twoFactor: false, breakGlass: true } : { twoFactor: false },
        },
        now,
      );
    }
    return { ...(await openSession(tx, m, stage, address, now)), member: memberView(m), ...next };
  });
}

/** signInOrChoose for a caller with no way to offer the choice: a password that opens several memberships without `organization` is refused with CHOOSE_ORGANIZATION. */
export async function signIn(
  db: DatabaseExecutor,
  input: { email: unknown; password: unknown; organization?: unknown },
  address: string,
  now: Date,
  device?: string,
): Promise<SignedIn & DeviceCookie> {
  const done = await signInOrChoose(db, input, address, now, device);
  if ('choices' in done) throw invalid(CHOOSE_ORGANIZATION);
  return done;
}

export interface ConsoleSession {
  orgId: string;
  orgName: string;
  /** `language`: the console language the member chose (migration 0035); null or absent: their browser's. */
  member: MemberView & { language?: string | null };
  stage: SessionStage;
  csrfToken: string;
  /** The cookie's digest, the handle of the row. */
  idHash: Buffer;
  /** Whether a change's message waits for the next page (post, redirect, get). */
  hasFlash?: boolean;
  /** Passkeys: whether this session proved one, and whether the member has any. */
  passkey?: { session: boolean; member: boolean };
}

// Post, redirect, get: a change's message (a new secret included) waits with the session for the
// page the redirect leads to, sealed with a key derived from the cookie (the database has only the
// cookie's SHA-256, so it cannot read it), and is shown once.

const flashKey = (cookie: string) => createHash('sha256').update('climate-pulse console flash\0').update(cookie).digest();

export async function saveFlash(db: Queryable, session: Pick<ConsoleSession, 'orgId' | 'idHash'>, cookie: string, text: string): Promise<void> {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', flashKey(cookie), iv);
  const sealed = Buffer.concat([iv, cipher.update(text, 'utf8'), cipher.final()]);
  await setSessionFlashRow(db, session.orgId, session.idHash, Buffer.concat([sealed, cipher.getAuthTag()]));
}

/** The same, for a session known by its cookie only (one just opened). */
export const saveFlashForCookie = (db: Queryable, orgId: string, cookie: string, text: string) =>
  saveFlash(db, { orgId, idHash: sha256(cookie) }, cookie, text);

export async function takeFlash(db: Queryable, session: Pick<ConsoleSession, 'orgId' | 'idHash'>, cookie: string): Promise<string | null> {
  const sealed = await takeSessionFlashRow(db, session.orgId, session.idHash);
  if (!sealed || sealed.length < 28) return null;
  try {
    const decipher = createDecipheriv('aes-256-gcm', flashKey(cookie), sealed.subarray(0, 12));
    decipher.setAuthTag(sealed.subarray(sealed.length - 16));
    return Buffer.concat([decipher.update(sealed.subarray(12, sealed.length - 16)), decipher.final()]).toString('utf8');
  } catch {
    return null;
  }
}

/**
 * The session a cookie names, or null: unknown, ended, idle for 12 hours, 7 days old, its member
 * removed, or its organization deleted. A live one's last use is recorded.
 */
export async function resolveSession(db: Queryable, cookie: string | undefined, now: Date): Promise<ConsoleSession | null> {
  if (!cookie || cookie.length < 32 || cookie.length > 64) return null;
  const idHash = sha256(cookie);
  const found = await findSessionWithMember(db, idHash);
  if (!found) return null;
  const { session: s, member: m, orgName, requireTwoFactor, hasFlash, passkey } = found;
  const t = now.getTime();
  // A session opened through the IdP also ends at the IdP session's end or the organization's maximum (issue 55).
  if (t - Date.parse(s.lastSeenAt) >= SESSION_IDLE_MS || t - Date.parse(s.createdAt) >= SESSION_MAX_MS || (s.endsAt && t >= Date.parse(s.endsAt))) {
    await deleteSession(db, s.orgId, idHash);
    return null;
  }
  if (!m || orgName === null) return null;
  // Requiring SSO reaches open sessions at their next request too (issue 55): setSsoRequired ends
  // them, and one opened by password while it committed ends here. The break-glass owner keeps a
  // session that proved a passkey, and the one at its passkey step.
  if (!s.sso) {
    const policy = await ssoPolicy(db, s.orgId);
    if (policy.required && !(m.id === policy.breakGlassMemberId && (passkey.session || s.stage === 'totp'))) {
      await deleteSession(db, s.orgId, idHash);
      return null;
    }
  }
  if (t - Date.parse(s.lastSeenAt) >= TOUCH_EVERY_MS) await touchSession(db, s.orgId, idHash, now);
  // Requiring two-factor reaches open sessions at their next request: a member without it, signed
  // in before it was required, is held at enrollment like a new sign-in. A passkey is a second
  // factor too, and so is the IdP's for a session opened through it (issue 55). Requiring passkeys
  // of owners and admins holds a session of theirs that proved none until it does
  // (docs/decisions.md, "Passkeys required"); a session from the IdP is not held for it.
  let stage: SessionStage = s.stage;
  if (stage === 'active' && passkey.required && (m.role === 'owner' || m.role === 'admin') && !passkey.session && !s.sso) stage = 'passkey';
  else if (stage === 'active' && requireTwoFactor && m.totpSecret === null && !passkey.member && !s.sso) stage = 'enroll';
  return {
    orgId: s.orgId,
    orgName,
    member: { ...memberView(m), language: m.language ?? null },
    stage,
    csrfToken: s.csrfToken,
    idHash,
    hasFlash,
    passkey: { session: passkey.session, member: passkey.member },
  };
}

export async function endSession(db: Queryable, session: Pick<ConsoleSession, 'orgId' | 'idHash'>): Promise<void> {
  await deleteSession(db, session.orgId, session.idHash);
}

/** One of a member's own sessions, as their sessions page shows it. */
export interface MemberSession {
  createdAt: string;
  lastSeenAt: string;
  /** The address it was opened from (as TRUST_PROXY decides); the user agent is not kept. */
  address: string | null;
  stage: SessionStage;
  /** The session this request is made with. */
  current: boolean;
}

const isLive = (s: { createdAt: string; lastSeenAt: string }, now: Date) =>
  now.getTime() - Date.parse(s.lastSeenAt) < SESSION_IDLE_MS && now.getTime() - Date.parse(s.createdAt) < SESSION_MAX_MS;

/**
 * The signed-in member's own sessions that are still alive (not idle for 12 hours, not 7 days old),
 * the most recently used first, the current one marked. Only the member's own: never another's.
 */
export async function listMemberSessions(db: Queryable, session: Pick<ConsoleSession, 'orgId' | 'idHash' | 'member'>, now: Date): Promise<MemberSession[]> {
  const rows = await listMemberSessionRows(db, session.orgId, session.member.id);
  return rows
    .filter((r) => isLive(r, now))
    .map((r) => ({ createdAt: r.createdAt, lastSeenAt: r.lastSeenAt, address: r.address, stage: r.stage, current: r.idHash.equals(session.idHash) }));
}

/**
 * "Sign out everywhere" (docs/decisions.md, "A member's own sessions"): ends every session of the
 * signed-in member but the current one, or, with `includeCurrent`, every one (the member is then
 * signed out here too). One transaction with its audit row (`member.sessions_ended`, how many).
 */
export async function signOutEverywhere(
  db: DatabaseExecutor,
  session: Pick<ConsoleSession, 'orgId' | 'idHash' | 'member'>,
  opts: { includeCurrent: boolean },
  actor: Actor,
  now: Date,
): Promise<{ ended: number }> {
  return db.transaction(async (tx) => {
    const ended = await deleteMemberSessionRows(tx, session.orgId, session.member.id, opts.includeCurrent ? null : session.idHash);
    await recordAudit(
      tx,
      session.orgId,
      actor,
      { action: 'member.sessions_ended', target: { kind: 'member', id: session.member.id }, details: { ended, includingCurrent: opts.includeCurrent } },
      now,
    );
    return { ended };
  });
}

/**
 * A session for a member signed in by the organization's IdP (issue 55), without a password: the
 * same row, cookie, form token and limits as any session, at the `active` stage (the IdP did the
 * authentication, its second factor included), linked to the IdP session it came from so that the
 * IdP's logout ends it and it never outlives `endsAt` (the IdP session's end or the organization's
 * maximum, whichever comes first). In the caller's transaction.
 */
export async function openIdpSession(
  tx: Queryable,
  m: MemberRow,
  link: { protocol: 'oidc' | 'saml'; subject: string; session: string | null; endsAt: Date },
  address: string | null,
  now: Date,
): Promise<SignedIn> {
  const s = await openSession(tx, m, 'active', address, now);
  await linkSessionToIdp(tx, m.orgId, sha256(s.cookie), link);
  return { ...s, member: memberView(m) };
}
