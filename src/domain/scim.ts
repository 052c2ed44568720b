import { createHash } from 'node:crypto';
import type { DatabaseExecutor, Queryable } from '../db/executor.js';
import {
  expireScimTokenRow,
  findScimTokenByHash,
  insertScimToken,
  listScimTokens,
  readScimTeamFrom,
  revokeScimTokenRow,
  writeScimTeamFrom,
  type ScimTeamFrom,
  type ScimTokenListing,
  type ScimTokenPrincipal,
} from '../db/repositories/scim.js';
import { ApiError, invalid } from '../contract/errors.js';
import { actorLabel, recordAudit, type Actor } from './audit.js';
import { newId, randomBase62 } from './ids.js';
import { ROLL_DELAYS, checkKeyName, type RollDelay } from './keys.js';
import { requireLiveOrg } from './orgs.js';

export type { ScimTeamFrom, ScimTokenListing, ScimTokenPrincipal };

/**
 * The SCIM bearer tokens of an organization (issue 56), made like API keys (CONTRACT.md section
 * 7): `cp_scim_` + 40 base62 characters from a CSPRNG, only the SHA-256 kept, a display prefix of
 * 14 characters, shown once. Created, rolled (the old one expiring at a chosen time) and revoked
 * from the console, the operator API and the CLI, each audited.
 */
export const SCIM_TOKEN_START = 'cp_scim_';
export const hashScimToken = (secret: string): Buffer => createHash('sha256').update(secret, 'utf8').digest();
export const scimTokenPrefix = (secret: string): string => secret.slice(0, SCIM_TOKEN_START.length + 6);

export type ScimTokenState = 'active' | 'expiring' | 'expired' | 'revoked';

export interface ScimTokenView extends ScimTokenListing {
  state: ScimTokenState;
}

export interface CreatedScimToken {
  id: string;
  /** The secret: in this answer only, never stored. */
  token: string;
  prefix: string;
  name: string | null;
  createdAt: string;
}

function stateOf(t: ScimTokenListing, now: Date): ScimTokenState {
  if (t.revokedAt) return 'revoked';
  if (t.expiresAt) return Date.parse(t.expiresAt) <= now.getTime() ? 'expired' : 'expiring';
  return 'active';
}

async function mintToken(tx: Queryable, orgId: string, name: string | null, actor: Actor, now: Date): Promise<CreatedScimToken> {
  const token = `${SCIM_TOKEN_START}${randomBase62(40)}`;
  const id = newId('stk');
  const prefix = scimTokenPrefix(token);
  const createdAt = new Date(Math.floor(now.getTime()));
  await insertScimToken(tx, orgId, { id, hash: hashScimToken(token), prefix, name, createdAt, createdBy: actorLabel(actor) });
  return { id, token, prefix, name, createdAt: createdAt.toISOString() };
}

export async function createScimToken(db: DatabaseExecutor, orgId: string, opts: { name?: unknown }, actor: Actor, now: Date): Promise<CreatedScimToken> {
  const name = checkKeyName(opts.name);
  return db.transaction(async (tx) => {
    await requireLiveOrg(tx, orgId);
    const t = await mintToken(tx, orgId, name, actor, now);
    await recordAudit(tx, orgId, actor, { action: 'scim_token.created', target: { kind: 'scim_token', id: t.id }, details: { name, prefix: t.prefix } }, now);
    return t;
  });
}

export async function listOrgScimTokens(db: Queryable, orgId: string, now: Date): Promise<ScimTokenView[]> {
  await requireLiveOrg(db, orgId);
  return (await listScimTokens(db, orgId)).map((t) => ({ ...t, state: stateOf(t, now) }));
}

/** One token of the organization by its id or an unambiguous start of its prefix. */
async function matchToken(tx: Queryable, orgId: string, idOrPrefix: string): Promise<ScimTokenListing> {
  const all = await listScimTokens(tx, orgId);
  const exact = all.find((t) => t.id === idOrPrefix);
  if (exact) return exact;
  const matches = idOrPrefix.length >= 4 ? all.filter((t) => t.prefix.startsWith(idOrPrefix)) : [];
  if (matches.length === 0) throw new ApiError('not_found', `No SCIM token with id or prefix ${JSON.stringify(idOrPrefix)} in this organization.`);
  if (matches.length > 1)
    throw invalid(`${JSON.stringify(idOrPrefix)} matches ${matches.length} SCIM tokens: ${matches.map((t) => t.id).join(', ')}; give the token id.`);
  return matches[0];
}

export async function revokeScimToken(db: DatabaseExecutor, orgId: string, idOrPrefix: string, actor: Actor, now: Date): Promise<ScimTokenView> {
  return db.transaction(async (tx) => {
    await requireLiveOrg(tx, orgId);
    const t = await matchToken(tx, orgId, idOrPrefix);
    const revoked = (await revokeScimTokenRow(tx, orgId, t.id, now))!;
    await recordAudit(tx, orgId, actor, { action: 'scim_token.revoked', target: { kind: 'scim_token', id: t.id }, details: { prefix: t.prefix } }, now);
    return { ...revoked, state: stateOf(revoked, now) };
  });
}

/**
 * A new token with the same name, the old one expiring at the chosen time (now, 1 hour, 24 hours
 * or 7 days), in one transaction: the identity provider's setting is changed in the meantime.
 */
export async function rollScimToken(
  db: DatabaseExecutor,
  orgId: string,
  idOrPrefix: string,
  expiresIn: RollDelay,
  actor: Actor,
  now: Date,
): Promise<CreatedScimToken & { oldTokenId: string; oldExpiresAt: string }> {
  const delay = ROLL_DELAYS.find((d) => d.value === expiresIn);
  if (!delay) throw invalid("The old token's expiry must be one of now, 1h, 24h or 7d.");
  return db.transaction(async (tx) => {
    await requireLiveOrg(tx, orgId);
    const old = await matchToken(tx, orgId, idOrPrefix);
    const state = stateOf(old, now);
    if (state === 'revoked' || state === 'expired') throw new ApiError('not_found', `No active SCIM token ${JSON.stringify(idOrPrefix)} in this organization.`);
    const expired = (await expireScimTokenRow(tx, orgId, old.id, new Date(now.getTime() + delay.ms)))!;
    const t = await mintToken(tx, orgId, old.name, actor, now);
    await recordAudit(
      tx,
      orgId,
      actor,
      {
        action: 'scim_token.rolled',
        target: { kind: 'scim_token', id: old.id },
        details: { newId: t.id, newPrefix: t.prefix, oldExpiresAt: expired.expiresAt },
      },
      now,
    );
    return { ...t, oldTokenId: old.id, oldExpiresAt: expired.expiresAt! };
  });
}

/**
 * Token lookups cached for at most `ttlMs` (<= 5 s, as API keys' in section 7): a revoked or
 * rolled token is refused by every process within that bound.
 */
export class ScimTokenResolver {
  private readonly cache = new Map<string, { at: number; principal: ScimTokenPrincipal | null }>();
  constructor(
    private readonly db: Queryable,
    private readonly ttlMs = 5_000,
    private readonly maxEntries = 1_000,
  ) {}

  async resolve(secret: string): Promise<ScimTokenPrincipal | null> {
    if (!secret.startsWith(SCIM_TOKEN_START)) return null;
    const hash = hashScimToken(secret);
    const key = hash.toString('base64');
    const now = Date.now();
    const hit = this.cache.get(key);
    if (hit && now - hit.at < this.ttlMs) return hit.principal;
    const principal = await findScimTokenByHash(this.db, hash);
    if (this.ttlMs > 0) {
      if (this.cache.size >= this.maxEntries) this.cache.clear();
      this.cache.set(key, { at: now, principal });
    }
    return principal;
  }
}

export const SCIM_TEAM_FROM = ['groups', 'department'] as const;

export async function getScimTeamFrom(db: Queryable, orgId: string): Promise<ScimTeamFrom> {
  return readScimTeamFrom(db, orgId);
}

/** How SCIM's users find their team: their Groups memberships, or the enterprise extension's `department`. */
export async function setScimTeamFrom(db: DatabaseExecutor, orgId: string, teamFrom: unknown, actor: Actor, now: Date): Promise<ScimTeamFrom> {
  if (!SCIM_TEAM_FROM.includes(teamFrom as ScimTeamFrom)) throw invalid("'teamFrom' must be groups or department.");
  return db.transaction(async (tx) => {
    await requireLiveOrg(tx, orgId);
    await writeScimTeamFrom(tx, orgId, teamFrom as ScimTeamFrom, now);
    await recordAudit(tx, orgId, actor, { action: 'scim_settings.updated', target: { kind: 'scim_settings', id: null }, details: { teamFrom } }, now);
    return teamFrom as ScimTeamFrom;
  });
}
