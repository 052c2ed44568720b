import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';
import { Secret, TOTP } from 'otpauth';
import type { DatabaseExecutor, Queryable } from './database.js';
import {
  countOwners, deleteMember, deletePendingInvitation, deletePendingInvitationsBy, lockOrganization, deleteMemberSessions, deleteSession, findInvitationByToken, findMember, findMemberByEmailInOrg, findMembersByEmail, findPasswordHashesByEmail, findSessionWithMember,
  insertInvitation, insertMember, insertSessionRow, listMemberRows, listPendingInvitations, markSignedIn,
  readPendingTotpSecret, readRequireTwoFactor, setPendingTotpSecret, setSessionFlashRow, takeInvitation, takeSessionFlashRow, touchSession, updateMemberPassword,
  updateMemberRole, updateMemberTotp, useRecoveryCode, useTotpStep, writeRequireTwoFactor,
  type InvitationRow, type MemberRole, type MemberRow, type SessionStage,
} from '../db/repositories/members.js';
import { ApiError, invalid } from '../contract/errors.js';
import { newId, randomBase62 } from './ids.js';
import { requireLiveOrg } from './orgs.js';
import { recordAudit, type Actor } from './audit.js';
import { checkPassword, hashPassword, matchPassword, MAX_PASSWORD, MIN_PASSWORD, SIGN_IN_LIMIT, SIGN_IN_WINDOW_MS, spendAttempt } from './passwords.js';

export { hashPassword, MAX_PASSWORD, MIN_PASSWORD, SIGN_IN_LIMIT, SIGN_IN_WINDOW_MS };

/**
 * The organization console's people (CONTRACT.md section 11): members by invitation, passwords,
 * two-factor codes, sessions and the limits on signing in. Every face (console, operator API, CLI)
 * calls these; none keeps a rule of its own.
 */

export type { MemberRole, SessionStage };
export const MEMBER_ROLES = ['owner', 'admin', 'viewer'] as const;

export const INVITATION_HOURS = 72;
export const SESSION_IDLE_MS = 12 * 3_600_000;
export const SESSION_MAX_MS = 7 * 24 * 3_600_000;
/** A session's last use is written at most this often (a console page is not a write per view). */
const TOUCH_EVERY_MS = 60_000;

/** One answer for every refused sign-in: it never says whether the email is a member's, or which check failed. */
export const SIGN_IN_REFUSED =
  'The email or password is not right, or too many attempts were made. After 10 failed attempts, signing in pauses for 15 minutes.';

/** The Account page's (and re-authentication's) one answer for every refused check of the current password. */
export const PASSWORD_REFUSED =
  'The current password is not right, or too many attempts were made. After 10 failed attempts, password checks pause for 15 minutes.';

const sha256 = (s: string | Buffer) => createHash('sha256').update(s).digest();

export function checkPasswordRule(password: unknown, field = 'password'): string {
  if (typeof password !== 'string' || [...password].length < MIN_PASSWORD) throw invalid(`The ${field} must be at least ${MIN_PASSWORD} characters long.`);
  if (password.length > MAX_PASSWORD) throw invalid(`The ${field} must be at most ${MAX_PASSWORD} characters long.`);
  return password;
}

const EMAIL = /^[^\s@<>"',;:\\()[\]]{1,64}@[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)+$/;
export function checkEmail(email: unknown): string {
  const e = typeof email === 'string' ? email.trim() : '';
  if (e.length < 3 || e.length > 254 || !EMAIL.test(e)) throw invalid("The email must be an address like 'name@example.com'.");
  return e;
}

function checkRole(role: unknown): MemberRole {
  if (!MEMBER_ROLES.includes(role as MemberRole)) throw invalid("The role must be 'owner', 'admin' or 'viewer'.");
  return role as MemberRole;
}

// Members and invitations.

export interface MemberView {
  id: string;
  email: string;
  role: MemberRole;
  twoFactor: boolean;
  createdAt: string;
  lastSignInAt: string | null;
}

const memberView = (m: MemberRow): MemberView => ({
  id: m.id, email: m.email, role: m.role, twoFactor: m.totpSecret !== null, createdAt: m.createdAt, lastSignInAt: m.lastSignInAt,
});

/** A member as the actor of a change (the console's face). */
export const memberActor = (m: { id: string; email: string }, address: string | null): Actor => ({ kind: 'member', memberId: m.id, email: m.email, address });

export interface CreatedInvitation {
  id: string;
  email: string;
  role: MemberRole;
  /** The link's secret part: in this answer only; the database keeps its SHA-256. */
  token: string;
  expiresAt: string;
}

/** An invitation to the organization's console, valid 72 hours, used once. */
export async function inviteMember(db: DatabaseExecutor, orgId: string, input: { email: unknown; role: unknown }, actor: Actor, now: Date): Promise<CreatedInvitation> {
  await requireLiveOrg(db, orgId);
  const email = checkEmail(input.email);
  const role = checkRole(input.role);
  if (await findMemberByEmailInOrg(db, orgId, email)) throw invalid(`${email} is already a member of this organization.`);
  const token = randomBytes(24).toString('base64url'); // 192 bits
  const id = newId('inv');
  const createdAt = new Date(now.getTime());
  const expiresAt = new Date(now.getTime() + INVITATION_HOURS * 3_600_000);
  const invitedBy = actor.kind === 'member' ? actor.memberId : null;
  await db.transaction(async (tx) => {
    // Under the lock of role changes and removals: an owner removed or demoted meanwhile makes none.
    await lockOrganization(tx, orgId);
    if (invitedBy !== null && (await findMember(tx, orgId, invitedBy))?.role !== 'owner') {
      throw new ApiError('insufficient_scope', 'Only an owner of the organization can invite members.');
    }
    await insertInvitation(tx, { orgId, id, email, role, tokenHash: sha256(token), createdAt, expiresAt, invitedBy });
    await recordAudit(tx, orgId, actor, { action: 'member.invited', target: { kind: 'invitation', id }, details: { email, role } }, now);
  });
  return { id, email, role, token, expiresAt: expiresAt.toISOString() };
}

/** What the invitation page shows before the password is set (nothing when the link is not usable). */
export async function readInvitation(db: Queryable, token: string, now: Date): Promise<InvitationRow | null> {
  if (typeof token !== 'string' || token.length < 16 || token.length > 128) return null;
  const inv = await findInvitationByToken(db, sha256(token));
  if (!inv || inv.acceptedAt !== null || Date.parse(inv.expiresAt) <= now.getTime()) return null;
  return inv;
}

export const INVITATION_UNUSABLE = 'This invitation link is not valid: it was used already, it expired (after 72 hours), or it was mistyped. Ask for a new one.';

export async function listMembers(db: Queryable, orgId: string): Promise<MemberView[]> {
  await requireLiveOrg(db, orgId);
  return (await listMemberRows(db, orgId)).map(memberView);
}

export interface InvitationView {
  id: string;
  email: string;
  role: MemberRole;
  /** The member who made it in the console; null: the operator. */
  invitedBy: string | null;
  createdAt: string;
  expiresAt: string;
}
const invitationView = ({ id, email, role, invitedBy, createdAt, expiresAt }: InvitationRow): InvitationView => ({ id, email, role, invitedBy, createdAt, expiresAt });

/** Invitations not yet accepted and not expired, newest first. */
export async function listInvitations(db: Queryable, orgId: string, now: Date): Promise<InvitationView[]> {
  await requireLiveOrg(db, orgId);
  return (await listPendingInvitations(db, orgId, now)).map(invitationView);
}

/** Revokes an invitation not yet accepted: its link opens nothing from now on. */
export async function revokeInvitation(db: DatabaseExecutor, orgId: string, invitationId: string, actor: Actor, now: Date): Promise<InvitationView> {
  await requireLiveOrg(db, orgId);
  return db.transaction(async (tx) => {
    const inv = await deletePendingInvitation(tx, orgId, invitationId);
    if (!inv) throw new ApiError('not_found', `No pending invitation ${JSON.stringify(invitationId)} in this organization (accepted ones are members now).`);
    await recordAudit(tx, orgId, actor, { action: 'member.invitation_revoked', target: { kind: 'invitation', id: inv.id }, details: { email: inv.email, role: inv.role } }, now);
    return invitationView(inv);
  });
}

/** The pending invitations a member made die with their removal or demotion below owner (in the change's transaction). */
async function revokeInvitationsBy(tx: Queryable, orgId: string, memberId: string, reason: 'inviter_removed' | 'inviter_demoted', actor: Actor, now: Date) {
  for (const inv of await deletePendingInvitationsBy(tx, orgId, memberId)) {
    await recordAudit(tx, orgId, actor, { action: 'member.invitation_revoked', target: { kind: 'invitation', id: inv.id }, details: { email: inv.email, role: inv.role, reason } }, now);
  }
}

async function memberOf(db: Queryable, orgId: string, memberId: string): Promise<MemberRow> {
  const m = await findMember(db, orgId, memberId);
  if (!m) throw new ApiError('not_found', `No member ${JSON.stringify(memberId)} in this organization.`);
  return m;
}

/** Removes a member and ends their sessions at once. The last owner cannot be removed. */
export async function removeMember(db: DatabaseExecutor, orgId: string, memberId: string, actor: Actor, now: Date): Promise<MemberView> {
  await requireLiveOrg(db, orgId);
  return db.transaction(async (tx) => {
    // The organization's row is locked before the owners are counted: of two concurrent changes
    // (on any process) the second counts after the first has committed.
    await lockOrganization(tx, orgId);
    const m = await memberOf(tx, orgId, memberId);
    if (m.role === 'owner' && (await countOwners(tx, orgId)) <= 1) throw invalid('The last owner of an organization cannot be removed; make another member owner first.');
    await deleteMemberSessions(tx, orgId, memberId);
    await revokeInvitationsBy(tx, orgId, memberId, 'inviter_removed', actor, now);
    await deleteMember(tx, orgId, memberId);
    await recordAudit(tx, orgId, actor, { action: 'member.removed', target: { kind: 'member', id: memberId }, details: { email: m.email, role: m.role } }, now);
    return memberView(m);
  });
}

/** Changes a member's role. The last owner cannot be demoted. */
export async function changeMemberRole(db: DatabaseExecutor, orgId: string, memberId: string, role: unknown, actor: Actor, now: Date): Promise<MemberView> {
  const next = checkRole(role);
  await requireLiveOrg(db, orgId);
  return db.transaction(async (tx) => {
    await lockOrganization(tx, orgId);
    const m = await memberOf(tx, orgId, memberId);
    if (m.role === 'owner' && next !== 'owner' && (await countOwners(tx, orgId)) <= 1) {
      throw invalid('The last owner of an organization cannot be demoted; make another member owner first.');
    }
    await updateMemberRole(tx, orgId, memberId, next);
    if (m.role === 'owner' && next !== 'owner') await revokeInvitationsBy(tx, orgId, memberId, 'inviter_demoted', actor, now);
    await recordAudit(tx, orgId, actor, { action: 'member.role_changed', target: { kind: 'member', id: memberId }, details: { email: m.email, from: m.role, to: next } }, now);
    return memberView({ ...m, role: next });
  });
}

export async function setRequireTwoFactor(db: DatabaseExecutor, orgId: string, on: boolean, actor: Actor, now: Date): Promise<void> {
  await requireLiveOrg(db, orgId);
  await db.transaction(async (tx) => {
    await writeRequireTwoFactor(tx, orgId, on);
    await recordAudit(tx, orgId, actor, { action: 'organization.two_factor_required', target: { kind: 'organization', id: orgId }, details: { required: on } }, now);
  });
}

export const requiresTwoFactor = (db: Queryable, orgId: string) => readRequireTwoFactor(db, orgId);

// Sessions.

export interface NewSession {
  /** The cookie's value: in this answer only; the database keeps its SHA-256. */
  cookie: string;
  stage: SessionStage;
  orgId: string;
  memberId: string;
  /** The new session's form token. */
  csrfToken: string;
}

async function openSession(db: Queryable, m: MemberRow, stage: SessionStage, address: string | null, now: Date): Promise<NewSession> {
  const cookie = randomBytes(32).toString('base64url');
  const csrfToken = randomBase62(32);
  await insertSessionRow(db, { orgId: m.orgId, idHash: sha256(cookie), memberId: m.id, stage, csrfToken, address, at: now });
  return { cookie, stage, orgId: m.orgId, memberId: m.id, csrfToken };
}

/** The stage a member reaches with a right password. */
async function stageAfterPassword(db: Queryable, m: MemberRow): Promise<SessionStage> {
  if (m.totpSecret) return 'totp';
  return (await readRequireTwoFactor(db, m.orgId)) ? 'enroll' : 'active';
}

/** Opening an invitation: the person sets a password and is signed in. */
export async function acceptInvitation(
  db: DatabaseExecutor,
  input: { token: string; password: unknown },
  address: string | null,
  now: Date,
): Promise<NewSession & { member: MemberView }> {
  const password = checkPasswordRule(input.password);
  const inv = await readInvitation(db, input.token, now);
  if (!inv) throw invalid(INVITATION_UNUSABLE);
  const passwordHash = await newPasswordHash(db, inv.email, password, null);
  return db.transaction(async (tx) => {
    await requireLiveOrg(tx, inv.orgId);
    if (!(await takeInvitation(tx, inv.orgId, inv.id, now))) throw invalid(INVITATION_UNUSABLE);
    // A member of this organization already (invited twice, accepted once): the owner knows it.
    if (await findMemberByEmailInOrg(tx, inv.orgId, inv.email)) throw invalid(INVITATION_UNUSABLE);
    const m: MemberRow = {
      orgId: inv.orgId, id: newId('mem'), email: inv.email, role: inv.role, passwordHash, totpSecret: null, totpLastStep: null,
      recoveryCodes: [], createdAt: now.toISOString(), lastSignInAt: now.toISOString(),
    };
    await insertMember(tx, { orgId: m.orgId, id: m.id, email: m.email, role: m.role, passwordHash, at: now });
    const session = await openSession(tx, m, (await readRequireTwoFactor(tx, m.orgId)) ? 'enroll' : 'active', address, now);
    await recordAudit(tx, m.orgId, memberActor(m, address), { action: 'member.joined', target: { kind: 'member', id: m.id }, details: { email: m.email, role: m.role, invitation: inv.id } }, now);
    return { ...session, member: memberView(m) };
  });
}

/**
 * A password's hash for a membership of `email`: with the salt its other memberships share (one
 * scrypt signs in whichever matches), and never the password of another of them (a sign-in must
 * name one membership). Telling that reaches only someone who knows that other password.
 */
async function newPasswordHash(db: Queryable, email: string, password: string, exceptMemberId: string | null): Promise<string> {
  const others = (await findPasswordHashesByEmail(db, email)).filter((h) => h.id !== exceptMemberId).map((h) => h.passwordHash);
  const hash = await hashPassword(password, others[0]);
  if (others.length > 0 && (await matchPassword(password, others)) >= 0) {
    throw invalid('Choose a password that you do not use for your membership of another organization on this service.');
  }
  return hash;
}

/**
 * Email and password. The check spends the account's and the address's limits (passwords.ts) and
 * runs through the process's gate; a refusal has one message whatever failed, takes the time of a
 * check either way, and writes nothing more for a member than for an unknown email (no audit row:
 * the limits' own counts are the record of failed attempts).
 */
export async function signIn(
  db: DatabaseExecutor,
  input: { email: unknown; password: unknown },
  address: string,
  now: Date,
): Promise<NewSession & { member: MemberView }> {
  const email = typeof input.email === 'string' ? input.email.trim().toLowerCase().slice(0, 254) : '';
  const password = typeof input.password === 'string' ? input.password.slice(0, MAX_PASSWORD) : '';
  // Every membership of the address in a live organization (one query, a member's or not).
  const found = email ? await findMembersByEmail(db, email) : [];
  const outcome = await checkPassword(db, { account: email, address, password, stored: found.map((x) => x.passwordHash) }, now);
  const m = typeof outcome === 'number' ? found[outcome] : undefined;
  if (!m) throw new ApiError('unauthorized', SIGN_IN_REFUSED);
  const stage = await stageAfterPassword(db, m);
  return db.transaction(async (tx) => {
    if (stage !== 'totp') {
      await markSignedIn(tx, m.orgId, m.id, now);
      await recordAudit(tx, m.orgId, memberActor(m, address), { action: 'member.signed_in', target: { kind: 'member', id: m.id }, details: { twoFactor: false } }, now);
    }
    return { ...(await openSession(tx, m, stage, address, now)), member: memberView(m) };
  });
}


export interface ConsoleSession {
  orgId: string;
  orgName: string;
  member: MemberView;
  stage: SessionStage;
  csrfToken: string;
  /** The cookie's digest, the handle of the row. */
  idHash: Buffer;
  /** Whether a change's message waits for the next page (post, redirect, get). */
  hasFlash?: boolean;
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
export const saveFlashForCookie = (db: Queryable, orgId: string, cookie: string, text: string) => saveFlash(db, { orgId, idHash: sha256(cookie) }, cookie, text);

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
  const { session: s, member: m, orgName, requireTwoFactor, hasFlash } = found;
  const t = now.getTime();
  if (t - Date.parse(s.lastSeenAt) >= SESSION_IDLE_MS || t - Date.parse(s.createdAt) >= SESSION_MAX_MS) {
    await deleteSession(db, s.orgId, idHash);
    return null;
  }
  if (!m || orgName === null) return null;
  if (t - Date.parse(s.lastSeenAt) >= TOUCH_EVERY_MS) await touchSession(db, s.orgId, idHash, now);
  // Requiring two-factor reaches open sessions at their next request: a member without it, signed
  // in before it was required, is held at enrollment like a new sign-in.
  const stage: SessionStage = s.stage === 'active' && requireTwoFactor && m.totpSecret === null ? 'enroll' : s.stage;
  return { orgId: s.orgId, orgName, member: memberView(m), stage, csrfToken: s.csrfToken, idHash, hasFlash };
}

export async function endSession(db: Queryable, session: Pick<ConsoleSession, 'orgId' | 'idHash'>): Promise<void> {
  await deleteSession(db, session.orgId, session.idHash);
}

// Two-factor (TOTP, RFC 6238: SHA-1, 6 digits, 30 s) and recovery codes.

const totp = (secret: string, label = 'Climate Pulse') => new TOTP({ issuer: 'Climate Pulse', label, algorithm: 'SHA1', digits: 6, period: 30, secret: Secret.fromBase32(secret) });

/** A new secret to enroll (not stored until a code from it is confirmed) and its otpauth:// URI. */
export function newTotpSecret(email: string): { secret: string; uri: string } {
  const secret = new Secret({ size: 20 }).base32;
  return { secret, uri: totp(secret, email).toString() };
}

/** A code as typed: apps show "123 456", people paste "123-456" or add spaces around a recovery code. */
export function normalizeCode(code: unknown): string {
  if (typeof code !== 'string') return '';
  const t = code.trim().slice(0, 64);
  const digits = t.replace(/[\s-]/g, '');
  return /^\d{6}$/.test(digits) ? digits : t.replace(/\s+/g, '');
}

/** The time step a six-digit code matches (the current one, or one either side), or null. */
function matchStep(secret: string, code: string, now: Date): number | null {
  if (!/^\d{6}$/.test(code)) return null;
  const delta = totp(secret).validate({ token: code, timestamp: now.getTime(), window: 1 });
  return delta === null ? null : Math.floor(now.getTime() / 30_000) + delta;
}

const RECOVERY_ALPHABET = 'abcdefghjkmnpqrstuvwxyz23456789';
function recoveryCode(): string {
  const bytes = randomBytes(10);
  const chars = [...bytes].map((b) => RECOVERY_ALPHABET[b % RECOVERY_ALPHABET.length]).join('');
  return `${chars.slice(0, 5)}-${chars.slice(5)}`;
}
const codeDigest = (code: string) => sha256(code.trim().toLowerCase());

/**
 * A new secret for the session to enroll, made here and kept with the session (the form carries
 * only the code): each call replaces the last, so a secret is shown once.
 */
export async function startTotpEnrollment(db: Queryable, session: ConsoleSession): Promise<{ secret: string; uri: string }> {
  const made = newTotpSecret(session.member.email);
  await setPendingTotpSecret(db, session.orgId, session.idHash, made.secret);
  return made;
}

export const REPLACE_FACTOR_REFUSED = 'Enter your current password to replace your authenticator app (or too many attempts were made: password checks pause for 15 minutes after 10).';

/**
 * Confirms enrollment with a code from the session's new secret; answers the ten recovery codes,
 * shown once. Replacing a second factor already on asks for the password again (checked under the
 * sign-in limits). A session held at enrollment steps up to active under a new id (its cookie).
 */
export async function enrollTotp(
  db: DatabaseExecutor,
  session: ConsoleSession,
  input: { code: unknown; password?: unknown },
  actor: Actor,
  now: Date,
): Promise<{ recoveryCodes: string[]; renewed: NewSession | null }> {
  const m = await memberOf(db, session.orgId, session.member.id);
  if (m.totpSecret !== null) {
    const password = typeof input.password === 'string' ? input.password : '';
    const outcome = await checkPassword(db, { account: m.email.toLowerCase(), address: actor.address ?? '', password, stored: [m.passwordHash] }, now);
    if (outcome !== 0) throw new ApiError('unauthorized', REPLACE_FACTOR_REFUSED);
  }
  const secret = await readPendingTotpSecret(db, session.orgId, session.idHash);
  const step = secret ? matchStep(secret, normalizeCode(input.code), now) : null;
  if (!secret || step === null) throw invalid('The code does not match; enter the six digits your authenticator app shows now.');
  const codes = Array.from({ length: 10 }, recoveryCode);
  const renewed = await db.transaction(async (tx) => {
    await updateMemberTotp(tx, session.orgId, session.member.id, secret, step, codes.map(codeDigest));
    await setPendingTotpSecret(tx, session.orgId, session.idHash, null);
    await markSignedIn(tx, session.orgId, session.member.id, now);
    await recordAudit(tx, session.orgId, actor, { action: 'member.two_factor_enabled', target: { kind: 'member', id: session.member.id }, details: { replaced: m.totpSecret !== null } }, now);
    if (session.stage !== 'enroll') return null;
    await deleteSession(tx, session.orgId, session.idHash);
    return openSession(tx, m, 'active', actor.address ?? null, now);
  });
  return { recoveryCodes: codes, renewed };
}

/** The second step of signing in: a code from the app (each once) or a recovery code (each once). */
export async function completeTwoFactor(db: DatabaseExecutor, session: ConsoleSession, code: unknown, address: string, now: Date): Promise<NewSession> {
  if (session.stage !== 'totp') throw new ApiError('unauthorized', TWO_FACTOR_REFUSED);
  const m = await findMember(db, session.orgId, session.member.id);
  const text = normalizeCode(code);
  const spent = await spendAttempt(db, m?.email.toLowerCase() ?? '', address, now);
  if (!spent) throw new ApiError('unauthorized', TWO_FACTOR_REFUSED);
  let ok = false;
  if (m?.totpSecret) {
    const step = matchStep(m.totpSecret, text, now);
    ok = step !== null ? await useTotpStep(db, m.orgId, m.id, step) : /^[a-z2-9]{5}-[a-z2-9]{5}$/i.test(text) && (await useRecoveryCode(db, m.orgId, m.id, codeDigest(text)));
  }
  if (!m || !ok) {
    if (m) await recordAudit(db, m.orgId, memberActor(m, address), { action: 'member.sign_in_failed', target: { kind: 'member', id: m.id }, details: { step: 'code' } }, now);
    throw new ApiError('unauthorized', TWO_FACTOR_REFUSED);
  }
  await spent.giveBack();
  // The step up renews the session's id: the cookie of the half-signed-in session opens nothing more.
  return db.transaction(async (tx) => {
    await deleteSession(tx, session.orgId, session.idHash);
    await markSignedIn(tx, m.orgId, m.id, now);
    await recordAudit(tx, m.orgId, memberActor(m, address), { action: 'member.signed_in', target: { kind: 'member', id: m.id }, details: { twoFactor: true } }, now);
    return openSession(tx, m, 'active', address, now);
  });
}

export const TWO_FACTOR_REFUSED = 'The code is not right, or was used already, or too many attempts were made. Enter the six digits your app shows now, or a recovery code.';

/** A password change ends every session of the member, the current one included (sign in again). */
export async function changePassword(
  db: DatabaseExecutor,
  session: ConsoleSession,
  input: { current: unknown; next: unknown },
  actor: Actor,
  now: Date,
): Promise<void> {
  const next = checkPasswordRule(input.next, 'new password');
  const m = await memberOf(db, session.orgId, session.member.id);
  const current = typeof input.current === 'string' ? input.current : '';
  // The same limits and gate as signing in: a session is not a way around them.
  const outcome = await checkPassword(db, { account: m.email.toLowerCase(), address: actor.address ?? '', password: current, stored: [m.passwordHash] }, now);
  if (outcome !== 0) throw new ApiError('unauthorized', PASSWORD_REFUSED);
  const hash = await newPasswordHash(db, m.email, next, m.id);
  await db.transaction(async (tx) => {
    await updateMemberPassword(tx, m.orgId, m.id, hash);
    await deleteMemberSessions(tx, m.orgId, m.id);
    await recordAudit(tx, m.orgId, actor, { action: 'member.password_changed', target: { kind: 'member', id: m.id }, details: {} }, now);
  });
}
