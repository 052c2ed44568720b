import { sql, type Queryable } from '../executor.js';
import { iso, isoOrNull } from './time.js';

/** A member's passkey (migration 0030): a WebAuthn credential and what the console shows of it. */
export interface PasskeyRow {
  orgId: string;
  id: string;
  memberId: string;
  credentialId: Buffer;
  publicKey: Buffer;
  signCount: number;
  transports: string[];
  name: string;
  backedUp: boolean;
  createdAt: string;
  lastUsedAt: string | null;
}

interface RawPasskey {
  org_id: string;
  id: string;
  member_id: string;
  credential_id: Buffer | Uint8Array;
  public_key: Buffer | Uint8Array;
  sign_count: string | number;
  transports: string[] | null;
  name: string;
  backed_up: boolean;
  created_at: Date | string;
  last_used_at: Date | string | null;
}

const passkey = (r: RawPasskey): PasskeyRow => ({
  orgId: r.org_id,
  id: r.id,
  memberId: r.member_id,
  credentialId: Buffer.from(r.credential_id),
  publicKey: Buffer.from(r.public_key),
  signCount: Number(r.sign_count),
  transports: r.transports ?? [],
  name: r.name,
  backedUp: r.backed_up,
  createdAt: iso(r.created_at),
  lastUsedAt: isoOrNull(r.last_used_at),
});

const COLUMNS = 'org_id, id, member_id, credential_id, public_key, sign_count, transports, name, backed_up, created_at, last_used_at';

const insert = sql(
  'member_passkeys.insert',
  `INSERT INTO member_passkeys (org_id, id, member_id, credential_id, public_key, sign_count, transports, name, backed_up, created_at)
   VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)
   ON CONFLICT (credential_id) DO NOTHING RETURNING id`,
);
/** false: the credential is registered already (to this member or another). */
export async function insertPasskey(db: Queryable, p: Omit<PasskeyRow, 'lastUsedAt'>): Promise<boolean> {
  const rows = await db.query(insert, [p.orgId, p.id, p.memberId, p.credentialId, p.publicKey, p.signCount, p.transports, p.name, p.backedUp, p.createdAt]);
  return rows.length === 1;
}

const byMember = sql('member_passkeys.by_member', `SELECT ${COLUMNS} FROM member_passkeys WHERE org_id = $1 AND member_id = $2 ORDER BY created_at, id`);
export async function listPasskeyRows(db: Queryable, orgId: string, memberId: string): Promise<PasskeyRow[]> {
  return (await db.query<RawPasskey>(byMember, [orgId, memberId])).map(passkey);
}

/**
 * A credential as a passkey sign-in finds it, before the organization is known, with whether its
 * organization is live (not deleted).
 */
const byCredential = sql(
  'member_passkeys.by_credential',
  `SELECT p.org_id, p.id, p.member_id, p.credential_id, p.public_key, p.sign_count, p.transports, p.name, p.backed_up, p.created_at, p.last_used_at
     FROM member_passkeys p JOIN organizations o ON o.id = p.org_id AND o.deleted_at IS NULL
    WHERE p.credential_id = $1`,
);
export async function findPasskeyByCredential(db: Queryable, credentialId: Buffer): Promise<PasskeyRow | null> {
  const [r] = await db.query<RawPasskey>(byCredential, [credentialId]);
  return r ? passkey(r) : null;
}

const rename = sql('member_passkeys.rename', `UPDATE member_passkeys SET name = $4 WHERE org_id = $1 AND member_id = $2 AND id = $3 RETURNING ${COLUMNS}`);
export async function renamePasskeyRow(db: Queryable, orgId: string, memberId: string, id: string, name: string): Promise<PasskeyRow | null> {
  const [r] = await db.query<RawPasskey>(rename, [orgId, memberId, id, name]);
  return r ? passkey(r) : null;
}

const remove = sql('member_passkeys.delete', `DELETE FROM member_passkeys WHERE org_id = $1 AND member_id = $2 AND id = $3 RETURNING ${COLUMNS}`);
export async function deletePasskeyRow(db: Queryable, orgId: string, memberId: string, id: string): Promise<PasskeyRow | null> {
  const [r] = await db.query<RawPasskey>(remove, [orgId, memberId, id]);
  return r ? passkey(r) : null;
}

/** Locks the member's passkeys (a removal and a count in one transaction: the last one under the requirement stays). */
const lockMember = sql('member_passkeys.lock_member', `SELECT id FROM members WHERE org_id = $1 AND id = $2 FOR UPDATE`);
export async function lockMemberForPasskeys(db: Queryable, orgId: string, memberId: string): Promise<void> {
  await db.query(lockMember, [orgId, memberId]);
}

const count = sql('member_passkeys.count', `SELECT count(*)::int AS n FROM member_passkeys WHERE org_id = $1 AND member_id = $2`);
export async function countPasskeys(db: Queryable, orgId: string, memberId: string): Promise<number> {
  const [r] = await db.query<{ n: number }>(count, [orgId, memberId]);
  return r?.n ?? 0;
}

/**
 * A use's counter, written only when it moves forward (or both stay 0, as synced passkeys report):
 * the database decides, so two uses of one counter value (a clone, or one answer posted twice at
 * once) cannot both pass. false: refused.
 */
const use = sql(
  'member_passkeys.use',
  `UPDATE member_passkeys SET sign_count = $3, last_used_at = $4
    WHERE org_id = $1 AND id = $2 AND (sign_count < $3 OR ($3 = 0 AND sign_count = 0))
    RETURNING id`,
);
export async function usePasskeyCounter(db: Queryable, orgId: string, id: string, counter: number, at: Date): Promise<boolean> {
  return (await db.query(use, [orgId, id, counter, at.toISOString()])).length === 1;
}

// One-time challenges: a digest let in once.

const consume = sql(
  'webauthn_challenges.consume',
  `INSERT INTO webauthn_challenges (digest, expires_at) VALUES ($1, $2) ON CONFLICT (digest) DO NOTHING RETURNING digest`,
);
/** true the first time a challenge's digest is used; false ever after (until its row is purged, after its expiry). */
export async function consumeChallenge(db: Queryable, digest: Buffer, expiresAt: Date): Promise<boolean> {
  return (await db.query(consume, [digest, expiresAt.toISOString()])).length === 1;
}

const purge = sql('webauthn_challenges.purge', `DELETE FROM webauthn_challenges WHERE expires_at < $1`);
export async function purgeChallenges(db: Queryable, before: Date): Promise<void> {
  await db.query(purge, [before.toISOString()]);
}

// The organization's requirement.

const readRequired = sql('organizations.require_passkeys', `SELECT require_passkeys FROM organizations WHERE id = $1`);
export async function readRequirePasskeys(db: Queryable, orgId: string): Promise<boolean> {
  const [r] = await db.query<{ require_passkeys: boolean }>(readRequired, [orgId]);
  return r?.require_passkeys === true;
}

const setRequired = sql(
  'organizations.set_require_passkeys',
  `UPDATE organizations SET require_passkeys = $2 WHERE id = $1 AND deleted_at IS NULL RETURNING id`,
);
export async function setRequirePasskeys(db: Queryable, orgId: string, on: boolean): Promise<boolean> {
  return (await db.query(setRequired, [orgId, on])).length === 1;
}

/** The session proved a passkey (sign-in by passkey, or one registered in it). */
const markSession = sql('console_sessions.passkey', `UPDATE console_sessions SET passkey = true WHERE org_id = $1 AND id_hash = $2`);
export async function markSessionPasskey(db: Queryable, orgId: string, idHash: Buffer): Promise<void> {
  await db.query(markSession, [orgId, idHash]);
}
