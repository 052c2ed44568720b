import { createHash } from 'node:crypto';
import type { DatabaseExecutor, Queryable } from '../db/executor.js';
import {
  expireApiKey,
  findKeyByHash,
  insertApiKey,
  listApiKeys,
  matchApiKeys,
  revokeApiKey,
  type KeyListing,
  type KeyPrincipal,
  type KeyScope,
} from '../db/repositories/api-keys.js';
import { ApiError, invalid } from '../contract/errors.js';
import { actorLabel, recordAudit, type Actor } from './audit.js';
import { newId, randomBase62 } from './ids.js';
import { requireLiveOrg } from './orgs.js';

export const hashKey = (secret: string): Buffer => createHash('sha256').update(secret, 'utf8').digest();

/** The short, non-secret start of a key, shown in listings and used to revoke it. */
export const displayPrefix = (secret: string): string => secret.slice(0, secret.startsWith('cp_live_') ? 14 : 12);

/**
 * A new key: `cp_live_` + 40 base62 characters from a CSPRNG. Only its hash is stored. A building
 * block, not an operation: it writes no audit row (createOrgKey does; the dataset loader is not audited).
 */
export async function createApiKey(
  db: Queryable,
  orgId: string,
  opts: {
    name?: string | null;
    secret?: string;
    createdAt?: Date;
    revoked?: boolean;
    scope?: KeyScope;
    expiresAt?: Date | null;
    createdBy?: string | null;
  } = {},
): Promise<{ id: string; secret: string; prefix: string }> {
  const secret = opts.secret ?? `cp_live_${randomBase62(40)}`;
  const id = newId('key');
  const prefix = displayPrefix(secret);
  const createdAt = opts.createdAt ?? new Date();
  await insertApiKey(db, orgId, {
    id,
    hash: hashKey(secret),
    prefix,
    name: opts.name ?? null,
    createdAt,
    revokedAt: opts.revoked ? createdAt : null,
    scope: opts.scope,
    expiresAt: opts.expiresAt ?? null,
    createdBy: opts.createdBy ?? null,
  });
  return { id, secret, prefix };
}

/**
 * Key lookups cached for at most `ttlMs` (<= 5 s), so a revoked key is refused by every
 * process within that bound without a database read on every request.
 */
export class KeyResolver {
  private readonly cache = new Map<string, { at: number; principal: KeyPrincipal | null }>();

  constructor(
    private readonly db: Queryable,
    private readonly ttlMs: number,
    private readonly maxEntries = 10_000,
  ) {}

  /** The cached answer for `secret` while it is fresh (null: known unknown); undefined when resolving would read the database. */
  peek(secret: string): KeyPrincipal | null | undefined {
    const hit = this.cache.get(hashKey(secret).toString('base64'));
    return hit && Date.now() - hit.at < this.ttlMs ? hit.principal : undefined;
  }

  async resolve(secret: string): Promise<KeyPrincipal | null> {
    const hash = hashKey(secret);
    const id = hash.toString('base64');
    const now = Date.now();
    const hit = this.cache.get(id);
    if (hit && now - hit.at < this.ttlMs) return hit.principal;
    const principal = await findKeyByHash(this.db, hash);
    if (this.ttlMs > 0) {
      if (this.cache.size >= this.maxEntries) this.cache.clear();
      this.cache.set(id, { at: now, principal });
    }
    return principal;
  }
}

export interface CreatedKey extends Omit<KeyListing, 'lastUsedAt' | 'revokedAt' | 'createdBy'> {
  /** The secret: in this answer only, never stored. */
  key: string;
}

/** A key's name: none, or 1-128 characters (as the API's body schema counts them). */
export function checkKeyName(name: unknown): string | null {
  if (name === undefined || name === null) return null;
  if (typeof name !== 'string' || [...name].length < 1 || [...name].length > 128) throw invalid('The name must be 1-128 characters.');
  return name;
}

/** A key's scope: read_write when not given. */
export function checkKeyScope(scope: unknown): KeyScope {
  if (scope === undefined) return 'read_write';
  if (scope !== 'read' && scope !== 'read_write') throw invalid('The scope must be read or read_write.');
  return scope;
}

/** `POST .../keys` and `keys create`: a key of a live organization, optionally read-only and expiring. */
export async function createOrgKey(
  db: DatabaseExecutor,
  orgId: string,
  opts: { name?: unknown; scope?: unknown; expiresAt?: string | null },
  actor: Actor,
  now: Date,
): Promise<CreatedKey> {
  const name = checkKeyName(opts.name);
  const scope = checkKeyScope(opts.scope);
  const expiresAt = opts.expiresAt == null ? null : new Date(opts.expiresAt);
  if (expiresAt && expiresAt.getTime() <= now.getTime()) throw invalid("Body field 'expiresAt' must be in the future.");
  const createdAt = new Date(Math.floor(now.getTime()));
  return db.transaction(async (tx) => {
    await requireLiveOrg(tx, orgId);
    const k = await createApiKey(tx, orgId, { name, scope, expiresAt, createdAt, createdBy: actorLabel(actor) });
    const details = { name, scope, prefix: k.prefix, expiresAt: expiresAt?.toISOString() ?? null };
    await recordAudit(tx, orgId, actor, { action: 'key.created', target: { kind: 'key', id: k.id }, details }, now);
    return { id: k.id, key: k.secret, prefix: k.prefix, name, scope, createdAt: createdAt.toISOString(), expiresAt: expiresAt?.toISOString() ?? null };
  });
}

export async function listOrgKeys(db: Queryable, orgId: string): Promise<KeyListing[]> {
  await requireLiveOrg(db, orgId);
  return listApiKeys(db, orgId);
}

/**
 * Revokes one key of one organization, named by its id or by an unambiguous start of its
 * display prefix. Another organization's keys are never looked at (CONTRACT.md section 7); a
 * prefix matching several keys of the organization is refused, listing them.
 */
export async function revokeOrgKey(db: DatabaseExecutor, orgId: string, idOrPrefix: string, actor: Actor, now: Date): Promise<KeyListing> {
  return db.transaction(async (tx) => {
    await requireLiveOrg(tx, orgId);
    const matches = await matchApiKeys(tx, orgId, idOrPrefix);
    const exact = matches.find((k) => k.id === idOrPrefix);
    if (!exact && matches.length === 0) throw new ApiError('not_found', `no key with id or prefix ${JSON.stringify(idOrPrefix)} in ${orgId}`);
    if (!exact && matches.length > 1) {
      const list = matches.map((k) => `${k.id} (${k.prefix})`).join(', ');
      throw invalid(`${JSON.stringify(idOrPrefix)} matches ${matches.length} keys of ${orgId}: ${list}; give the key id`);
    }
    const revoked = (await revokeApiKey(tx, orgId, (exact ?? matches[0]).id, now))!;
    const details = { name: revoked.name, prefix: revoked.prefix, revokedAt: revoked.revokedAt };
    await recordAudit(tx, orgId, actor, { action: 'key.revoked', target: { kind: 'key', id: revoked.id }, details }, now);
    return revoked;
  });
}

/** When the old key of a roll stops working: at once, or after a grace for moving clients. */
export const ROLL_DELAYS = [
  { value: 'now', label: 'now', ms: 0 },
  { value: '1h', label: 'in 1 hour', ms: 3_600_000 },
  { value: '24h', label: 'in 24 hours', ms: 86_400_000 },
  { value: '7d', label: 'in 7 days', ms: 7 * 86_400_000 },
] as const;
export type RollDelay = (typeof ROLL_DELAYS)[number]['value'];

/**
 * Rolls a key: a new key with the same name and scope, and the old one expiring at the chosen
 * time (never later than an expiry it already has), in one transaction. Servers refuse the old
 * key within 5 seconds of that time, as for any expired key.
 */
export async function rollOrgKey(
  db: DatabaseExecutor,
  orgId: string,
  keyId: string,
  expiresIn: RollDelay,
  actor: Actor,
  now: Date,
): Promise<CreatedKey & { oldKeyId: string; oldExpiresAt: string }> {
  const delay = ROLL_DELAYS.find((d) => d.value === expiresIn);
  if (!delay) throw invalid("The old key's expiry must be one of now, 1h, 24h or 7d.");
  await requireLiveOrg(db, orgId);
  return db.transaction(async (tx) => {
    const old = (await listApiKeys(tx, orgId)).find((k) => k.id === keyId);
    const live = old && old.revokedAt === null && (old.expiresAt === null || Date.parse(old.expiresAt) > now.getTime());
    if (!old || !live) throw new ApiError('not_found', `No active key ${JSON.stringify(keyId)} in this organization.`);
    const expired = await expireApiKey(tx, orgId, keyId, new Date(now.getTime() + delay.ms));
    const createdAt = new Date(now.getTime());
    const k = await createApiKey(tx, orgId, { name: old.name, scope: old.scope, createdAt, createdBy: actorLabel(actor) });
    await recordAudit(
      tx,
      orgId,
      actor,
      {
        action: 'key.rolled',
        target: { kind: 'key', id: keyId },
        details: { newKey: k.id, newPrefix: k.prefix, oldExpiresAt: expired!.expiresAt, name: old.name, scope: old.scope },
      },
      now,
    );
    return {
      id: k.id,
      key: k.secret,
      prefix: k.prefix,
      name: old.name,
      scope: old.scope,
      createdAt: createdAt.toISOString(),
      expiresAt: null,
      oldKeyId: keyId,
      oldExpiresAt: expired!.expiresAt!,
    };
  });
}
