import { sql, type Queryable } from '../executor.js';
import { iso, isoOrNull } from './time.js';

/** What authentication needs to know about a presented key, in one indexed lookup. */
export interface KeyPrincipal {
  keyId: string;
  orgId: string;
  revoked: boolean;
  orgDeleted: boolean;
  restApi: boolean;
  rateLimitPerMinute: number;
}

const byHash = sql(
  'api_keys.by_hash',
  `SELECT k.id, k.org_id, k.revoked_at IS NOT NULL AS revoked, o.deleted_at IS NOT NULL AS org_deleted,
          p.rest_api, p.rate_limit_per_minute
     FROM api_keys k
     JOIN organizations o ON o.id = k.org_id
     JOIN plans p ON p.name = o.plan
    WHERE k.key_hash = $1`,
);

export async function findKeyByHash(db: Queryable, hash: Buffer): Promise<KeyPrincipal | null> {
  const [r] = await db.query<{
    id: string; org_id: string; revoked: boolean; org_deleted: boolean; rest_api: boolean; rate_limit_per_minute: number;
  }>(byHash, [hash]);
  if (!r) return null;
  return {
    keyId: r.id,
    orgId: r.org_id,
    revoked: r.revoked,
    orgDeleted: r.org_deleted,
    restApi: r.rest_api,
    rateLimitPerMinute: r.rate_limit_per_minute,
  };
}

const insertKey = sql(
  'api_keys.insert',
  `INSERT INTO api_keys (org_id, id, key_hash, prefix, name, created_at, revoked_at)
   VALUES ($1, $2, $3, $4, $5, $6, $7)`,
);

export async function insertApiKey(
  db: Queryable,
  orgId: string,
  k: { id: string; hash: Buffer; prefix: string; name: string | null; createdAt: Date; revokedAt: Date | null },
): Promise<void> {
  await db.query(insertKey, [orgId, k.id, k.hash, k.prefix, k.name, k.createdAt.toISOString(), k.revokedAt?.toISOString() ?? null]);
}

export interface KeyListing {
  id: string;
  prefix: string;
  name: string | null;
  createdAt: string;
  lastUsedAt: string | null;
  revokedAt: string | null;
}

const listKeys = sql(
  'api_keys.list',
  `SELECT id, prefix, name, created_at, last_used_at, revoked_at FROM api_keys WHERE org_id = $1 ORDER BY created_at, id`,
);

export async function listApiKeys(db: Queryable, orgId: string): Promise<KeyListing[]> {
  const rows = await db.query<{
    id: string; prefix: string; name: string | null; created_at: Date; last_used_at: Date | null; revoked_at: Date | null;
  }>(listKeys, [orgId]);
  return rows.map((r) => ({
    id: r.id,
    prefix: r.prefix,
    name: r.name,
    createdAt: iso(r.created_at),
    lastUsedAt: isoOrNull(r.last_used_at),
    revokedAt: isoOrNull(r.revoked_at),
  }));
}

const revokeByPrefix = sql(
  'api_keys.revoke_by_prefix',
  `UPDATE api_keys SET revoked_at = COALESCE(revoked_at, now()) WHERE prefix = $1 RETURNING org_id, id`,
);

export async function revokeApiKeysByPrefix(db: Queryable, prefix: string): Promise<{ orgId: string; id: string }[]> {
  const rows = await db.query<{ org_id: string; id: string }>(revokeByPrefix, [prefix]);
  return rows.map((r) => ({ orgId: r.org_id, id: r.id }));
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
