import { createHash, randomInt } from 'node:crypto';
import type { Queryable } from '../db/executor.js';
import { findKeyByHash, insertApiKey, type KeyPrincipal } from '../db/repositories/api-keys.js';

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

export function randomBase62(length: number): string {
  let out = '';
  for (let i = 0; i < length; i++) out += BASE62[randomInt(62)];
  return out;
}

/** Ids carry a type prefix: org_, team_, act_, key_. */
export const newId = (prefix: string) => `${prefix}_${randomBase62(16)}`;

export const hashKey = (secret: string): Buffer => createHash('sha256').update(secret, 'utf8').digest();

/** The short, non-secret start of a key, shown in listings and used to revoke it. */
export const displayPrefix = (secret: string): string => secret.slice(0, secret.startsWith('cp_live_') ? 14 : 12);

/** A new key: `cp_live_` + 40 base62 characters from a CSPRNG. Only its hash is stored. */
export async function createApiKey(
  db: Queryable,
  orgId: string,
  opts: { name?: string | null; secret?: string; createdAt?: Date; revoked?: boolean } = {},
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
