import { sql, type Queryable } from '../executor.js';
import { iso, isoOrNull } from './time.js';

export type MemberRole = 'owner' | 'admin' | 'viewer' | 'manager';
/**
 * 'passkey' is never stored: an owner's or admin's session without a passkey, while the organization
 * requires them, resolves to it (src/domain/sessions.ts) and is held until a passkey is proved.
 */
export type SessionStage = 'active' | 'totp' | 'enroll' | 'passkey';

export interface MemberRow {
  orgId: string;
  id: string;
  email: string;
  role: MemberRole;
  passwordHash: string;
  /** The TOTP secret as stored: sealed (src/domain/totp.ts), or in clear if written before migration 0025; null when not enrolled. */
  totpSecret: string | null;
  totpLastStep: number | null;
  recoveryCodes: Buffer[];
  createdAt: string;
  lastSignInAt: string | null;
  /** The console language the member chose (migration 0035); null or absent: their browser's. */
  language?: string | null;
}

interface RawMember {
  org_id: string;
  id: string;
  email: string;
  role: MemberRole;
  password_hash: string;
  totp_secret: string | null;
  totp_last_step: string | number | null;
  recovery_codes: Buffer[] | null;
  created_at: Date | string;
  last_sign_in_at: Date | string | null;
  language?: string | null;
}

const member = (r: RawMember): MemberRow => ({
  orgId: r.org_id,
  id: r.id,
  email: r.email,
  role: r.role,
  passwordHash: r.password_hash,
  totpSecret: r.totp_secret,
  totpLastStep: r.totp_last_step === null ? null : Number(r.totp_last_step),
  recoveryCodes: r.recovery_codes ?? [],
  createdAt: iso(r.created_at),
  lastSignInAt: isoOrNull(r.last_sign_in_at),
  language: r.language ?? null,
});

const COLUMNS = 'org_id, id, email, role, password_hash, totp_secret, totp_last_step, recovery_codes, created_at, last_sign_in_at, language';

/**
 * Every membership of an address in a live organization, oldest first (an address may be a member
 * of several), with its organization's name (what a member whose password opens several chooses from).
 */
const byEmail = sql(
  'members.by_email',
  `SELECT m.org_id, m.id, m.email, m.role, m.password_hash, m.totp_secret, m.totp_last_step, m.recovery_codes, m.created_at, m.last_sign_in_at,
          o.name AS org_name
     FROM members m JOIN organizations o ON o.id = m.org_id AND o.deleted_at IS NULL
    WHERE lower(m.email) = lower($1) ORDER BY m.created_at, m.org_id`,
);
export async function findMembersByEmail(db: Queryable, email: string): Promise<Array<MemberRow & { orgName: string }>> {
  return (await db.query<RawMember & { org_name: string }>(byEmail, [email])).map((r) => ({ ...member(r), orgName: r.org_name }));
}

/** The password hashes of every membership of an address, deleted organizations' too (they share one salt). */
const hashesByEmail = sql(
  'members.hashes_by_email',
  `SELECT org_id, id, password_hash FROM members WHERE lower(email) = lower($1) ORDER BY created_at, org_id`,
);
export async function findPasswordHashesByEmail(db: Queryable, email: string): Promise<{ orgId: string; id: string; passwordHash: string }[]> {
  return (await db.query<{ org_id: string; id: string; password_hash: string }>(hashesByEmail, [email])).map((r) => ({
    orgId: r.org_id,
    id: r.id,
    passwordHash: r.password_hash,
  }));
}

const byOrgEmail = sql('members.by_org_email', `SELECT ${COLUMNS} FROM members WHERE org_id = $1 AND lower(email) = lower($2)`);
export async function findMemberByEmailInOrg(db: Queryable, orgId: string, email: string): Promise<MemberRow | null> {
  const [r] = await db.query<RawMember>(byOrgEmail, [orgId, email]);
  return r ? member(r) : null;
}

const byId = sql('members.by_id', `SELECT ${COLUMNS} FROM members WHERE org_id = $1 AND id = $2`);
export async function findMember(db: Queryable, orgId: string, id: string): Promise<MemberRow | null> {
  const [r] = await db.query<RawMember>(byId, [orgId, id]);
  return r ? member(r) : null;
}

const list = sql('members.list', `SELECT ${COLUMNS} FROM members WHERE org_id = $1 ORDER BY created_at, id`);
export async function listMemberRows(db: Queryable, orgId: string): Promise<MemberRow[]> {
  return (await db.query<RawMember>(list, [orgId])).map(member);
}

const insert = sql(
  'members.insert',
  `INSERT INTO members (org_id, id, email, role, password_hash, created_at, last_sign_in_at) VALUES ($1, $2, $3, $4, $5, $6, $6)`,
);
export async function insertMember(db: Queryable, m: { orgId: string; id: string; email: string; role: MemberRole; passwordHash: string; at: Date }) {
  await db.query(insert, [m.orgId, m.id, m.email, m.role, m.passwordHash, m.at.toISOString()]);
}

const setRole = sql('members.set_role', `UPDATE members SET role = $3 WHERE org_id = $1 AND id = $2`);
export async function updateMemberRoleRow(db: Queryable, orgId: string, id: string, role: MemberRole) {
  await db.query(setRole, [orgId, id, role]);
}

const setPassword = sql('members.set_password', `UPDATE members SET password_hash = $3 WHERE org_id = $1 AND id = $2`);
export async function updateMemberPassword(db: Queryable, orgId: string, id: string, hash: string) {
  await db.query(setPassword, [orgId, id, hash]);
}

const setTotp = sql('members.set_totp', `UPDATE members SET totp_secret = $3, totp_last_step = $4, recovery_codes = $5 WHERE org_id = $1 AND id = $2`);
export async function updateMemberTotp(db: Queryable, orgId: string, id: string, secret: string | null, lastStep: number | null, codes: Buffer[]) {
  await db.query(setTotp, [orgId, id, secret, lastStep, codes]);
}

/**
 * Migration 0025's rows: members whose TOTP secret is still in clear (written before it, or by a
 * process of the previous version during a rolling restart), across organizations, as the
 * start-up sweep reads them (members is a reference table on Citus, like the sign-in's lookup).
 */
const clearTotp = sql(
  'members.clear_totp',
  `SELECT org_id, id, totp_secret FROM members WHERE totp_secret IS NOT NULL AND totp_secret NOT LIKE 'sealed:%' ORDER BY org_id, id LIMIT $1`,
);
export async function listClearTotpSecrets(db: Queryable, limit: number): Promise<{ orgId: string; id: string; secret: string }[]> {
  const rows = await db.query<{ org_id: string; id: string; totp_secret: string }>(clearTotp, [limit]);
  return rows.map((r) => ({ orgId: r.org_id, id: r.id, secret: r.totp_secret }));
}

/** Replaces a clear TOTP secret by its sealed form, only if the row still holds that clear one (a concurrent enrollment wins). */
const resealTotp = sql('members.reseal_totp', `UPDATE members SET totp_secret = $4 WHERE org_id = $1 AND id = $2 AND totp_secret = $3 RETURNING id`);
export async function replaceClearTotpSecret(db: Queryable, orgId: string, id: string, clear: string, sealed: string): Promise<boolean> {
  return (await db.query(resealTotp, [orgId, id, clear, sealed])).length === 1;
}

/** Takes a TOTP step only if it is later than the last one used: a code works once, also under concurrency. */
const useStep = sql(
  'members.use_totp_step',
  `UPDATE members SET totp_last_step = $3 WHERE org_id = $1 AND id = $2 AND (totp_last_step IS NULL OR totp_last_step < $3) RETURNING id`,
);
export async function useTotpStep(db: Queryable, orgId: string, id: string, step: number): Promise<boolean> {
  return (await db.query(useStep, [orgId, id, step])).length === 1;
}

/** Removes one recovery code, if it is still there: each works once. */
const useCode = sql(
  'members.use_recovery_code',
  `UPDATE members SET recovery_codes = array_remove(recovery_codes, $3) WHERE org_id = $1 AND id = $2 AND $3 = ANY (recovery_codes) RETURNING id`,
);
export async function useRecoveryCode(db: Queryable, orgId: string, id: string, digest: Buffer): Promise<boolean> {
  return (await db.query(useCode, [orgId, id, digest])).length === 1;
}

/** A member's console language (a locale of the catalogues), or null to follow their browser; false when there is no such member. */
const setLanguage = sql('members.set_language', `UPDATE members SET language = $3 WHERE org_id = $1 AND id = $2 RETURNING id`);
export async function updateMemberLanguage(db: Queryable, orgId: string, id: string, language: string | null): Promise<boolean> {
  return (await db.query(setLanguage, [orgId, id, language])).length === 1;
}

const signedIn = sql('members.signed_in', `UPDATE members SET last_sign_in_at = $3 WHERE org_id = $1 AND id = $2`);
export async function markSignedIn(db: Queryable, orgId: string, id: string, at: Date) {
  await db.query(signedIn, [orgId, id, at.toISOString()]);
}

const remove = sql('members.delete', `DELETE FROM members WHERE org_id = $1 AND id = $2`);
export async function deleteMemberRow(db: Queryable, orgId: string, id: string) {
  await db.query(remove, [orgId, id]);
}

/**
 * Locks the organization's row until the transaction ends: every change to who owns it takes this
 * lock first, so one change reads the owners only after another has committed (on any process).
 */
const lockOrg = sql('organizations.lock_for_members', `SELECT id FROM organizations WHERE id = $1 FOR UPDATE`);
export async function lockOrganization(db: Queryable, orgId: string): Promise<boolean> {
  return (await db.query(lockOrg, [orgId])).length === 1;
}

const owners = sql('members.owners', `SELECT count(*)::int AS n FROM members WHERE org_id = $1 AND role = 'owner'`);
export async function countOwners(db: Queryable, orgId: string): Promise<number> {
  const [r] = await db.query<{ n: number }>(owners, [orgId]);
  return r.n;
}

// Invitations.

export interface InvitationRow {
  orgId: string;
  id: string;
  email: string;
  role: MemberRole;
  createdAt: string;
  expiresAt: string;
  acceptedAt: string | null;
  /** The member who made it in the console; null: the operator. */
  invitedBy: string | null;
}
interface RawInvitation {
  org_id: string;
  id: string;
  email: string;
  role: MemberRole;
  created_at: Date | string;
  expires_at: Date | string;
  accepted_at: Date | string | null;
  invited_by: string | null;
}
const invitation = (r: RawInvitation): InvitationRow => ({
  orgId: r.org_id,
  id: r.id,
  email: r.email,
  role: r.role,
  createdAt: iso(r.created_at),
  expiresAt: iso(r.expires_at),
  acceptedAt: isoOrNull(r.accepted_at),
  invitedBy: r.invited_by,
});
const INV_COLUMNS = 'org_id, id, email, role, created_at, expires_at, accepted_at, invited_by';

const insertInv = sql(
  'member_invitations.insert',
  `INSERT INTO member_invitations (org_id, id, email, role, token_hash, created_at, expires_at, invited_by) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
);
export async function insertInvitation(
  db: Queryable,
  i: { orgId: string; id: string; email: string; role: MemberRole; tokenHash: Buffer; createdAt: Date; expiresAt: Date; invitedBy: string | null },
) {
  await db.query(insertInv, [i.orgId, i.id, i.email, i.role, i.tokenHash, i.createdAt.toISOString(), i.expiresAt.toISOString(), i.invitedBy]);
}

/** Deletes a pending invitation (its link then opens nothing); null when there is none (accepted, or unknown). */
const revokeInv = sql(
  'member_invitations.revoke',
  `DELETE FROM member_invitations WHERE org_id = $1 AND id = $2 AND accepted_at IS NULL RETURNING ${INV_COLUMNS}`,
);
export async function deletePendingInvitation(db: Queryable, orgId: string, id: string): Promise<InvitationRow | null> {
  const [r] = await db.query<RawInvitation>(revokeInv, [orgId, id]);
  return r ? invitation(r) : null;
}

/** Deletes every pending invitation a member made: they die with the member's removal or demotion. */
const revokeBy = sql(
  'member_invitations.revoke_by_inviter',
  `DELETE FROM member_invitations WHERE org_id = $1 AND invited_by = $2 AND accepted_at IS NULL RETURNING ${INV_COLUMNS}`,
);
export async function deletePendingInvitationsBy(db: Queryable, orgId: string, memberId: string): Promise<InvitationRow[]> {
  return (await db.query<RawInvitation>(revokeBy, [orgId, memberId])).map(invitation);
}

const invByToken = sql('member_invitations.by_token', `SELECT ${INV_COLUMNS} FROM member_invitations WHERE token_hash = $1`);
export async function findInvitationByToken(db: Queryable, tokenHash: Buffer): Promise<InvitationRow | null> {
  const [r] = await db.query<RawInvitation>(invByToken, [tokenHash]);
  return r ? invitation(r) : null;
}

/** Marks an invitation used, once: a second acceptance (also a concurrent one) finds it taken. */
const acceptInv = sql(
  'member_invitations.accept',
  `UPDATE member_invitations SET accepted_at = $3 WHERE org_id = $1 AND id = $2 AND accepted_at IS NULL AND expires_at > $3 RETURNING id`,
);
export async function takeInvitation(db: Queryable, orgId: string, id: string, at: Date): Promise<boolean> {
  return (await db.query(acceptInv, [orgId, id, at.toISOString()])).length === 1;
}

const pendingInv = sql(
  'member_invitations.pending',
  `SELECT ${INV_COLUMNS} FROM member_invitations
    WHERE org_id = $1 AND accepted_at IS NULL AND expires_at > $2 ORDER BY created_at DESC, id DESC`,
);
export async function listPendingInvitations(db: Queryable, orgId: string, now: Date): Promise<InvitationRow[]> {
  return (await db.query<RawInvitation>(pendingInv, [orgId, now.toISOString()])).map(invitation);
}

// Sessions.

export interface SessionRow {
  orgId: string;
  memberId: string;
  stage: SessionStage;
  csrfToken: string;
  createdAt: string;
  lastSeenAt: string;
  /** Sessions opened through the IdP (migration 0029): when they end at the latest, and by which protocol. */
  endsAt?: string | null;
  sso?: 'oidc' | 'saml' | null;
}

const insertSession = sql(
  'console_sessions.insert',
  `INSERT INTO console_sessions (org_id, id_hash, member_id, stage, csrf_token, address, created_at, last_seen_at, passkey) VALUES ($1, $2, $3, $4, $5, $6, $7, $7, $8)`,
);
export async function insertSessionRow(
  db: Queryable,
  s: { orgId: string; idHash: Buffer; memberId: string; stage: SessionStage; csrfToken: string; address: string | null; at: Date; passkey?: boolean },
) {
  await db.query(insertSession, [s.orgId, s.idHash, s.memberId, s.stage, s.csrfToken, s.address, s.at.toISOString(), s.passkey === true]);
}

/**
 * A session with its member and its organization's name (null when the organization is deleted),
 * in one statement: the console resolves it on every request.
 */
const sessionWithMember = sql(
  'console_sessions.by_id_with_member',
  `SELECT s.org_id, s.member_id, s.stage, s.csrf_token, s.created_at AS session_created_at, s.last_seen_at, o.name AS org_name,
          o.require_two_factor, s.flash IS NOT NULL AS has_flash, s.passkey, o.require_passkeys, s.ends_at, s.sso_protocol,
          EXISTS (SELECT 1 FROM member_passkeys p WHERE p.org_id = s.org_id AND p.member_id = s.member_id) AS has_passkey,
          m.id, m.email, m.role, m.password_hash, m.totp_secret, m.totp_last_step, m.recovery_codes, m.created_at, m.last_sign_in_at,
          m.language
     FROM console_sessions s
     LEFT JOIN members m ON m.org_id = s.org_id AND m.id = s.member_id
     LEFT JOIN organizations o ON o.id = s.org_id AND o.deleted_at IS NULL
    WHERE s.id_hash = $1`,
);
export async function findSessionWithMember(
  db: Queryable,
  idHash: Buffer,
): Promise<{
  session: SessionRow;
  member: MemberRow | null;
  orgName: string | null;
  requireTwoFactor: boolean;
  hasFlash: boolean;
  /** Passkeys (migration 0030): the session proved one; the organization requires them; the member has one. */
  passkey: { session: boolean; required: boolean; member: boolean };
} | null> {
  const [r] = await db.query<
    RawMember & {
      member_id: string;
      stage: SessionStage;
      csrf_token: string;
      session_created_at: Date | string;
      last_seen_at: Date | string;
      org_name: string | null;
      require_two_factor: boolean | null;
      has_flash: boolean;
      passkey: boolean;
      require_passkeys: boolean | null;
      has_passkey: boolean;
      ends_at: Date | string | null;
      sso_protocol: 'oidc' | 'saml' | null;
    }
  >(sessionWithMember, [idHash]);
  if (!r) return null;
  return {
    session: {
      orgId: r.org_id,
      memberId: r.member_id,
      stage: r.stage,
      csrfToken: r.csrf_token,
      createdAt: iso(r.session_created_at),
      lastSeenAt: iso(r.last_seen_at),
      endsAt: isoOrNull(r.ends_at),
      sso: r.sso_protocol,
    },
    member: r.id === null ? null : member(r),
    orgName: r.org_name,
    requireTwoFactor: r.require_two_factor === true,
    hasFlash: r.has_flash === true,
    passkey: { session: r.passkey === true, required: r.require_passkeys === true, member: r.has_passkey === true },
  };
}

const touch = sql('console_sessions.touch', `UPDATE console_sessions SET last_seen_at = $3 WHERE org_id = $1 AND id_hash = $2`);
export async function touchSession(db: Queryable, orgId: string, idHash: Buffer, at: Date) {
  await db.query(touch, [orgId, idHash, at.toISOString()]);
}

const setStage = sql('console_sessions.stage', `UPDATE console_sessions SET stage = $3 WHERE org_id = $1 AND id_hash = $2`);
export async function setSessionStage(db: Queryable, orgId: string, idHash: Buffer, stage: SessionStage) {
  await db.query(setStage, [orgId, idHash, stage]);
}

const setPending = sql('console_sessions.set_pending_totp', `UPDATE console_sessions SET pending_totp_secret = $3 WHERE org_id = $1 AND id_hash = $2`);
export async function setPendingTotpSecret(db: Queryable, orgId: string, idHash: Buffer, secret: string | null) {
  await db.query(setPending, [orgId, idHash, secret]);
}
const getPending = sql('console_sessions.pending_totp', `SELECT pending_totp_secret FROM console_sessions WHERE org_id = $1 AND id_hash = $2`);
export async function readPendingTotpSecret(db: Queryable, orgId: string, idHash: Buffer): Promise<string | null> {
  const [r] = await db.query<{ pending_totp_secret: string | null }>(getPending, [orgId, idHash]);
  return r?.pending_totp_secret ?? null;
}

const putFlash = sql('console_sessions.set_flash', `UPDATE console_sessions SET flash = $3 WHERE org_id = $1 AND id_hash = $2`);
export async function setSessionFlashRow(db: Queryable, orgId: string, idHash: Buffer, sealed: Buffer | null) {
  await db.query(putFlash, [orgId, idHash, sealed]);
}
/** Takes the session's flash once: of two concurrent page views, one gets it. */
const takeFlash = sql(
  'console_sessions.take_flash',
  `WITH old AS (SELECT flash FROM console_sessions WHERE org_id = $1 AND id_hash = $2 AND flash IS NOT NULL FOR UPDATE)
   UPDATE console_sessions s SET flash = NULL FROM old WHERE s.org_id = $1 AND s.id_hash = $2 RETURNING old.flash`,
);
export async function takeSessionFlashRow(db: Queryable, orgId: string, idHash: Buffer): Promise<Buffer | null> {
  const [r] = await db.query<{ flash: Buffer }>(takeFlash, [orgId, idHash]);
  return r?.flash ?? null;
}

const endOne = sql('console_sessions.end', `DELETE FROM console_sessions WHERE org_id = $1 AND id_hash = $2`);
export async function deleteSession(db: Queryable, orgId: string, idHash: Buffer) {
  await db.query(endOne, [orgId, idHash]);
}

const endMember = sql('console_sessions.end_member', `DELETE FROM console_sessions WHERE org_id = $1 AND member_id = $2`);
export async function deleteMemberSessions(db: Queryable, orgId: string, memberId: string) {
  await db.query(endMember, [orgId, memberId]);
}

// Password-check limits: one row per (scope, key, instant) with a count; a sliding window sums the
// rows of the last 15 minutes. A refund takes one back (and drops the row when it reaches 0).

/** What an attempt is counted against: the account (the email typed), the address key, a device token (migration 0033). */
export type AttemptScope = 'account' | 'address' | 'device';

const record = sql(
  'console_sign_in_attempts.record',
  `INSERT INTO console_sign_in_attempts (scope, key, window_start, count) VALUES ($1, $2, $3, 1)
   ON CONFLICT (scope, key, window_start) DO UPDATE SET count = console_sign_in_attempts.count + 1`,
);
export async function recordAttempt(db: Queryable, scope: AttemptScope, key: string, at: Date) {
  await db.query(record, [scope, key, at.toISOString()]);
}

const count = sql(
  'console_sign_in_attempts.count',
  `SELECT GREATEST(
     COALESCE((SELECT sum(count) FROM console_sign_in_attempts WHERE scope = 'account' AND key = $1 AND window_start > $3), 0),
     COALESCE((SELECT sum(count) FROM console_sign_in_attempts WHERE scope = 'address' AND key = $2 AND window_start > $3), 0)
   )::int AS n`,
);
/** The larger of the account's and the address's failed checks since `since`. */
export async function countAttempts(db: Queryable, account: string, address: string, since: Date): Promise<number> {
  const [r] = await db.query<{ n: number }>(count, [account, address, since.toISOString()]);
  return r.n;
}

const countDevice = sql(
  'console_sign_in_attempts.count_device',
  `SELECT COALESCE(sum(count), 0)::int AS n FROM console_sign_in_attempts WHERE scope = 'device' AND key = $1 AND window_start > $2`,
);
/** A device token's failed checks since `since` (its key: the token's nonce). */
export async function countDeviceAttempts(db: Queryable, nonce: string, since: Date): Promise<number> {
  const [r] = await db.query<{ n: number }>(countDevice, [nonce, since.toISOString()]);
  return r.n;
}

const refund = sql(
  'console_sign_in_attempts.refund',
  `UPDATE console_sign_in_attempts SET count = count - 1 WHERE scope = $1 AND key = $2 AND window_start = $3 AND count > 0`,
);
const dropEmpty = sql(
  'console_sign_in_attempts.drop_empty',
  `DELETE FROM console_sign_in_attempts WHERE scope = $1 AND key = $2 AND window_start = $3 AND count <= 0`,
);
export async function refundAttempt(db: Queryable, scope: AttemptScope, key: string, at: Date) {
  await db.query(refund, [scope, key, at.toISOString()]);
  await db.query(dropEmpty, [scope, key, at.toISOString()]);
}

const purge = sql('console_sign_in_attempts.purge', `DELETE FROM console_sign_in_attempts WHERE window_start < $1`);
export async function purgeAttempts(db: Queryable, before: Date) {
  await db.query(purge, [before.toISOString()]);
}

// The organization's setting.

const requireTwoFactor = sql('organizations.require_two_factor', `SELECT require_two_factor FROM organizations WHERE id = $1`);
export async function readRequireTwoFactor(db: Queryable, orgId: string): Promise<boolean> {
  const [r] = await db.query<{ require_two_factor: boolean }>(requireTwoFactor, [orgId]);
  return r?.require_two_factor ?? false;
}

const updateRequireTwoFactor = sql('organizations.set_require_two_factor', `UPDATE organizations SET require_two_factor = $2 WHERE id = $1`);
export async function writeRequireTwoFactor(db: Queryable, orgId: string, on: boolean) {
  await db.query(updateRequireTwoFactor, [orgId, on]);
}
