import { sql, type Queryable } from '../executor.js';
import { iso, isoOrNull } from './time.js';

export type KeyScope = 'read_write' | 'read';

/** What authentication needs to know about a presented key, in one indexed lookup. */
export interface KeyPrincipal {
  keyId: string;
  /** The key's display prefix (not secret): how the audit log names a key (src/domain/audit.ts). */
  prefix: string;
  orgId: string;
  /** Revoked, or past its expiry: refused alike (CONTRACT.md section 7). */
  revoked: boolean;
  orgDeleted: boolean;
  restApi: boolean;
  rateLimitPerMinute: number;
  scope: KeyScope;
}

const byHash = sql(
  'api_keys.by_hash',
  `SELECT k.id, k.prefix, k.org_id, (k.revoked_at IS NOT NULL OR k.expires_at <= now()) IS TRUE AS revoked,
          o.deleted_at IS NOT NULL AS org_deleted, p.rest_api, p.rate_limit_per_minute, k.scope
     FROM api_keys k
     JOIN organizations o ON o.id = k.org_id
     JOIN plans p ON p.name = o.plan
    WHERE k.key_hash = $1`,
);

export async function findKeyByHash(db: Queryable, hash: Buffer): Promise<KeyPrincipal | null> {
  const [r] = await db.query<{
    id: string;
    prefix: string;
    org_id: string;
    revoked: boolean;
    org_deleted: boolean;
    rest_api: boolean;
    rate_limit_per_minute: number;
    scope: KeyScope;
  }>(byHash, [hash]);
  if (!r) return null;
  return {
    keyId: r.id,
    prefix: r.prefix,
    orgId: r.org_id,
    revoked: r.revoked,
    orgDeleted: r.org_deleted,
    restApi: r.rest_api,
    rateLimitPerMinute: r.rate_limit_per_minute,
    scope: r.scope,
  };
}

const insertKey = sql(
  'api_keys.insert',
  `INSERT INTO api_keys (org_id, id, key_hash, prefix, name, created_at, revoked_at, scope, expires_at, created_by)
   VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
);

export async function insertApiKey(
  db: Queryable,
  orgId: string,
  k: {
    id: string;
    hash: Buffer;
    prefix: string;
    name: string | null;
    createdAt: Date;
    revokedAt: Date | null;
    scope?: KeyScope;
    expiresAt?: Date | null;
    createdBy?: string | null;
  },
): Promise<void> {
  await db.query(insertKey, [
    orgId,
    k.id,
    k.hash,
    k.prefix,
    k.name,
    k.createdAt.toISOString(),
    k.revokedAt?.toISOString() ?? null,
    k.scope ?? 'read_write',
    k.expiresAt?.toISOString() ?? null,
    k.createdBy ?? null,
  ]);
}

export interface KeyListing {
  id: string;
  prefix: string;
  name: string | null;
  scope: KeyScope;
  createdAt: string;
  expiresAt: string | null;
  lastUsedAt: string | null;
  revokedAt: string | null;
  /** Who made it (the audit log's actor label); null for a dataset's keys and keys older than migration 0018. */
  createdBy: string | null;
}

type DbKey = {
  id: string;
  prefix: string;
  name: string | null;
  scope: KeyScope;
  created_at: Date;
  expires_at: Date | null;
  last_used_at: Date | null;
  revoked_at: Date | null;
  created_by: string | null;
};
const KEY_COLUMNS = 'id, prefix, name, scope, created_at, expires_at, last_used_at, revoked_at, created_by';
const toListing = (r: DbKey): KeyListing => ({
  id: r.id,
  prefix: r.prefix,
  name: r.name,
  scope: r.scope,
  createdAt: iso(r.created_at),
  expiresAt: isoOrNull(r.expires_at),
  lastUsedAt: isoOrNull(r.last_used_at),
  revokedAt: isoOrNull(r.revoked_at),
  createdBy: r.created_by,
});

const listKeys = sql('api_keys.list', `SELECT ${KEY_COLUMNS} FROM api_keys WHERE org_id = $1 ORDER BY created_at, id`);

export async function listApiKeys(db: Queryable, orgId: string): Promise<KeyListing[]> {
  return (await db.query<DbKey>(listKeys, [orgId])).map(toListing);
}

/** Keys of one organization named by their id, or whose display prefix starts with `text`. */
const matchKeys = sql(
  'api_keys.match',
  `SELECT ${KEY_COLUMNS} FROM api_keys
    WHERE org_id = $1 AND (id = $2 OR starts_with(prefix, $2))
    ORDER BY (id = $2) DESC, created_at, id`,
);

export async function matchApiKeys(db: Queryable, orgId: string, idOrPrefix: string): Promise<KeyListing[]> {
  return (await db.query<DbKey>(matchKeys, [orgId, idOrPrefix])).map(toListing);
}

/** The time is a parameter: Citus runs no stable function (now()) inside COALESCE in a write. */
const revokeKey = sql(
  'api_keys.revoke',
  `UPDATE api_keys SET revoked_at = COALESCE(revoked_at, $3::timestamptz) WHERE org_id = $1 AND id = $2 RETURNING ${KEY_COLUMNS}`,
);

/** Revokes one key of one organization (never another organization's). Revoking again keeps the first time. */
export async function revokeApiKey(db: Queryable, orgId: string, keyId: string, at: Date): Promise<KeyListing | null> {
  const [r] = await db.query<DbKey>(revokeKey, [orgId, keyId, at.toISOString()]);
  return r ? toListing(r) : null;
}

const touch = sql(
  'api_keys.touch',
  `UPDATE api_keys k SET last_used_at = GREATEST(k.last_used_at, u.used_at)
     FROM unnest($1::text[], $2::text[], $3::timestamptz[]) AS u(org_id, id, used_at)
    WHERE k.org_id = u.org_id AND k.id = u.id`,
);

/** Records last use for many keys in one statement (called in batches, never per request). */
export async function touchApiKeys(db: Queryable, uses: { orgId: string; keyId: string; at: Date }[]): Promise<void> {
  if (uses.length === 0) return;
  await db.query(touch, [uses.map((u) => u.orgId), uses.map((u) => u.keyId), uses.map((u) => u.at.toISOString())]);
}

/** Moves a live key's expiry earlier (a roll): never later than an expiry it already has. */
const expireKey = sql(
  'api_keys.expire',
  `UPDATE api_keys SET expires_at = LEAST(COALESCE(expires_at, $3::timestamptz), $3::timestamptz)
    WHERE org_id = $1 AND id = $2 AND revoked_at IS NULL
    RETURNING ${KEY_COLUMNS}`,
);
export async function expireApiKey(db: Queryable, orgId: string, keyId: string, at: Date): Promise<KeyListing | null> {
  const [r] = await db.query<DbKey>(expireKey, [orgId, keyId, at.toISOString()]);
  return r ? toListing(r) : null;
}
