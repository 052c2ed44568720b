import { sql, type Queryable } from '../executor.js';
import type { RespondentSource } from './checkins.js';
import { iso, isoOrNull } from './time.js';

/**
 * SCIM's tables (migration 0031, issue 56): the organization's bearer tokens, how its users find
 * their team, and the users it turned off. SCIM's Users are the `respondents` of the roster plus
 * those turned off; its Groups are the `teams` it has not removed.
 */

// ---- tokens ---------------------------------------------------------------------------------

export interface ScimTokenPrincipal {
  tokenId: string;
  prefix: string;
  orgId: string;
  /** Revoked or past its expiry (a roll): refused alike. */
  revoked: boolean;
  orgDeleted: boolean;
}

const tokenByHash = sql(
  'scim_tokens.by_hash',
  `SELECT k.id, k.prefix, k.org_id, (k.revoked_at IS NOT NULL OR k.expires_at <= now()) IS TRUE AS revoked, o.deleted_at IS NOT NULL AS org_deleted
     FROM scim_tokens k JOIN organizations o ON o.id = k.org_id
    WHERE k.token_hash = $1`,
);
export async function findScimTokenByHash(db: Queryable, hash: Buffer): Promise<ScimTokenPrincipal | null> {
  const [r] = await db.query<{ id: string; prefix: string; org_id: string; revoked: boolean; org_deleted: boolean }>(tokenByHash, [hash]);
  return r ? { tokenId: r.id, prefix: r.prefix, orgId: r.org_id, revoked: r.revoked, orgDeleted: r.org_deleted } : null;
}

const insertToken = sql(
  'scim_tokens.insert',
  `INSERT INTO scim_tokens (org_id, id, token_hash, prefix, name, created_at, created_by) VALUES ($1, $2, $3, $4, $5, $6, $7)`,
);
export async function insertScimToken(
  db: Queryable,
  orgId: string,
  t: { id: string; hash: Buffer; prefix: string; name: string | null; createdAt: Date; createdBy: string | null },
): Promise<void> {
  await db.query(insertToken, [orgId, t.id, t.hash, t.prefix, t.name, t.createdAt.toISOString(), t.createdBy]);
}

export interface ScimTokenListing {
  id: string;
  prefix: string;
  name: string | null;
  createdAt: string;
  createdBy: string | null;
  expiresAt: string | null;
  revokedAt: string | null;
}
type DbToken = {
  id: string;
  prefix: string;
  name: string | null;
  created_at: Date;
  created_by: string | null;
  expires_at: Date | null;
  revoked_at: Date | null;
};
const toToken = (r: DbToken): ScimTokenListing => ({
  id: r.id,
  prefix: r.prefix,
  name: r.name,
  createdAt: iso(r.created_at),
  createdBy: r.created_by,
  expiresAt: isoOrNull(r.expires_at),
  revokedAt: isoOrNull(r.revoked_at),
});

const listTokens = sql(
  'scim_tokens.list',
  `SELECT id, prefix, name, created_at, created_by, expires_at, revoked_at FROM scim_tokens WHERE org_id = $1 ORDER BY created_at DESC, id`,
);
export async function listScimTokens(db: Queryable, orgId: string): Promise<ScimTokenListing[]> {
  return (await db.query<DbToken>(listTokens, [orgId])).map(toToken);
}

const revokeToken = sql(
  'scim_tokens.revoke',
  `UPDATE scim_tokens SET revoked_at = COALESCE(revoked_at, $3) WHERE org_id = $1 AND id = $2
   RETURNING id, prefix, name, created_at, created_by, expires_at, revoked_at`,
);
export async function revokeScimTokenRow(db: Queryable, orgId: string, id: string, now: Date): Promise<ScimTokenListing | null> {
  const [r] = await db.query<DbToken>(revokeToken, [orgId, id, now.toISOString()]);
  return r ? toToken(r) : null;
}

const expireToken = sql(
  'scim_tokens.expire',
  `UPDATE scim_tokens SET expires_at = LEAST(COALESCE(expires_at, $3), $3) WHERE org_id = $1 AND id = $2
   RETURNING id, prefix, name, created_at, created_by, expires_at, revoked_at`,
);
export async function expireScimTokenRow(db: Queryable, orgId: string, id: string, at: Date): Promise<ScimTokenListing | null> {
  const [r] = await db.query<DbToken>(expireToken, [orgId, id, at.toISOString()]);
  return r ? toToken(r) : null;
}

// ---- settings -------------------------------------------------------------------------------

export type ScimTeamFrom = 'groups' | 'department';

const readSettings = sql('scim_settings.read', `SELECT team_from FROM scim_settings WHERE org_id = $1`);
export async function readScimTeamFrom(db: Queryable, orgId: string): Promise<ScimTeamFrom> {
  const [r] = await db.query<{ team_from: ScimTeamFrom }>(readSettings, [orgId]);
  return r?.team_from ?? 'groups';
}

const writeSettings = sql(
  'scim_settings.write',
  `INSERT INTO scim_settings (org_id, team_from, updated_at) VALUES ($1, $2, $3)
   ON CONFLICT (org_id) DO UPDATE SET team_from = $2, updated_at = $3`,
);
export async function writeScimTeamFrom(db: Queryable, orgId: string, teamFrom: ScimTeamFrom, now: Date): Promise<void> {
  await db.query(writeSettings, [orgId, teamFrom, now.toISOString()]);
}

// ---- users ----------------------------------------------------------------------------------

export interface ScimUserRow {
  id: string;
  email: string;
  /** The identity provider's userName when it differs from the address, else null. */
  userName: string | null;
  externalId: string | null;
  active: boolean;
  teamId: string | null;
  teamName: string | null;
  source: RespondentSource;
  /** The roster's language (migration 0034): null for the organization's default, and for a user turned off. */
  language: string | null;
  createdAt: string;
  modifiedAt: string;
}
type DbUser = {
  id: string;
  email: string;
  user_name: string | null;
  external_id: string | null;
  active: boolean;
  team_id: string | null;
  team_name: string | null;
  source: RespondentSource;
  language: string | null;
  created_at: Date;
  modified_at: Date;
};
const toUser = (r: DbUser): ScimUserRow => ({
  id: r.id,
  email: r.email,
  userName: r.user_name,
  externalId: r.external_id,
  active: r.active,
  teamId: r.team_id,
  teamName: r.team_name,
  source: r.source,
  language: r.language,
  createdAt: iso(r.created_at),
  modifiedAt: iso(r.modified_at),
});

/** Everyone SCIM can read: the roster, then the users it turned off. `$1` is the organization. */
const USERS = `
  SELECT r.id, r.email, r.scim_user_name AS user_name, r.scim_external_id AS external_id, true AS active, r.team_id, t.name AS team_name,
         r.source, r.language, r.created_at, GREATEST(r.created_at, r.team_since, COALESCE(r.scim_modified_at, r.created_at)) AS modified_at
    FROM respondents r LEFT JOIN teams t ON t.org_id = r.org_id AND t.id = r.team_id
   WHERE r.org_id = $1
  UNION ALL
  SELECT i.id, i.email, i.user_name, i.external_id, false AS active, i.team_id, t.name AS team_name,
         'scim' AS source, i.language, i.created_at, i.modified_at
    FROM scim_inactive_users i LEFT JOIN teams t ON t.org_id = i.org_id AND t.id = i.team_id
   WHERE i.org_id = $1`;

const userById = sql('scim_users.by_id', `SELECT * FROM (${USERS}) u WHERE u.id = $2`);
export async function findScimUser(db: Queryable, orgId: string, id: string): Promise<ScimUserRow | null> {
  const [r] = await db.query<DbUser>(userById, [orgId, id]);
  return r ? toUser(r) : null;
}

/** By userName (the address when none), case-insensitively, as RFC 7643 makes userName. */
// The first condition finds the rows by the address's and the userName's indexes (pushed into both arms).
const userByName = sql(
  'scim_users.by_user_name',
  `SELECT * FROM (${USERS}) u
    WHERE (lower(u.email) = lower($2) OR lower(u.user_name) = lower($2)) AND lower(COALESCE(u.user_name, u.email)) = lower($2)
    ORDER BY u.id`,
);
export async function findScimUsersByUserName(db: Queryable, orgId: string, userName: string): Promise<ScimUserRow[]> {
  return (await db.query<DbUser>(userByName, [orgId, userName])).map(toUser);
}

const userByEmail = sql('scim_users.by_email', `SELECT * FROM (${USERS}) u WHERE lower(u.email) = lower($2) ORDER BY u.id`);
export async function findScimUsersByEmail(db: Queryable, orgId: string, email: string): Promise<ScimUserRow[]> {
  return (await db.query<DbUser>(userByEmail, [orgId, email])).map(toUser);
}

const userByExternalId = sql('scim_users.by_external_id', `SELECT * FROM (${USERS}) u WHERE u.external_id = $2 ORDER BY u.id`);
export async function findScimUsersByExternalId(db: Queryable, orgId: string, externalId: string): Promise<ScimUserRow[]> {
  return (await db.query<DbUser>(userByExternalId, [orgId, externalId])).map(toUser);
}

const usersPage = sql('scim_users.page', `SELECT * FROM (${USERS}) u ORDER BY u.id LIMIT $2 OFFSET $3`);
const usersCount = sql(
  'scim_users.count',
  `SELECT (SELECT count(*) FROM respondents WHERE org_id = $1)::int + (SELECT count(*) FROM scim_inactive_users WHERE org_id = $1)::int AS n`,
);
/** A page of every user by id, with how many there are. */
export async function scimUserPage(db: Queryable, orgId: string, offset: number, limit: number): Promise<{ total: number; rows: ScimUserRow[] }> {
  const [c] = await db.query<{ n: number }>(usersCount, [orgId]);
  const rows = limit > 0 ? await db.query<DbUser>(usersPage, [orgId, limit, offset]) : [];
  return { total: c?.n ?? 0, rows: rows.map(toUser) };
}

const allUsers = sql('scim_users.all', `SELECT * FROM (${USERS}) u ORDER BY u.id`);
export async function listScimUsers(db: Queryable, orgId: string): Promise<ScimUserRow[]> {
  return (await db.query<DbUser>(allUsers, [orgId])).map(toUser);
}

const markScim = sql(
  'respondents.scim_mark',
  `UPDATE respondents SET source = 'scim', scim_user_name = $3, scim_external_id = $4, scim_modified_at = $5 WHERE org_id = $1 AND id = $2`,
);
/** SCIM owns the person from now on, with its userName (null: the address) and externalId. */
export async function markRespondentScim(
  db: Queryable,
  orgId: string,
  id: string,
  v: { userName: string | null; externalId: string | null; modifiedAt: Date },
): Promise<void> {
  await db.query(markScim, [orgId, id, v.userName, v.externalId, v.modifiedAt.toISOString()]);
}

const touchScim = sql('respondents.scim_touch', `UPDATE respondents SET source = 'scim', scim_modified_at = $3 WHERE org_id = $1 AND id = ANY($2::text[])`);
/** People whom a group's membership moved: SCIM's from now on. */
export async function touchRespondentsScim(db: Queryable, orgId: string, ids: string[], now: Date): Promise<void> {
  if (ids.length > 0) await db.query(touchScim, [orgId, ids, now.toISOString()]);
}

const readdress = sql('respondents.readdress', `UPDATE respondents SET email = $3 WHERE org_id = $1 AND id = $2 RETURNING id`);
export async function setRespondentEmail(db: Queryable, orgId: string, id: string, email: string): Promise<boolean> {
  return (await db.query(readdress, [orgId, id, email])).length > 0;
}

const insertInactive = sql(
  'scim_inactive_users.insert',
  `INSERT INTO scim_inactive_users (org_id, id, email, user_name, external_id, team_id, created_at, modified_at, language)
   VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
   ON CONFLICT (org_id, id) DO UPDATE SET email = $3, user_name = $4, external_id = $5, team_id = $6, modified_at = $8, language = $9`,
);
/** A user SCIM turned off (or made off): written, or changed. */
export async function writeInactiveUser(
  db: Queryable,
  orgId: string,
  u: {
    id: string;
    email: string;
    userName: string | null;
    externalId: string | null;
    teamId: string | null;
    language: string | null;
    createdAt: Date;
    modifiedAt: Date;
  },
): Promise<void> {
  await db.query(insertInactive, [orgId, u.id, u.email, u.userName, u.externalId, u.teamId, u.createdAt.toISOString(), u.modifiedAt.toISOString(), u.language]);
}

const deleteInactive = sql('scim_inactive_users.delete', `DELETE FROM scim_inactive_users WHERE org_id = $1 AND id = $2 RETURNING id`);
export async function deleteInactiveUser(db: Queryable, orgId: string, id: string): Promise<boolean> {
  return (await db.query(deleteInactive, [orgId, id])).length > 0;
}

// ---- groups ---------------------------------------------------------------------------------

export interface ScimGroupRow {
  id: string;
  name: string;
  externalId: string | null;
  createdAt: string;
  modifiedAt: string;
}
type DbGroup = { id: string; name: string; external_id: string | null; created_at: Date; modified_at: Date };
const toGroup = (r: DbGroup): ScimGroupRow => ({
  id: r.id,
  name: r.name,
  externalId: r.external_id,
  createdAt: iso(r.created_at),
  modifiedAt: iso(r.modified_at),
});

const GROUPS = `
  SELECT t.id, t.name, t.scim_external_id AS external_id, t.created_at, GREATEST(t.created_at, COALESCE(t.scim_modified_at, t.created_at)) AS modified_at,
         t.scim_removed
    FROM teams t WHERE t.org_id = $1`;

const groupById = sql('scim_groups.by_id', `SELECT * FROM (${GROUPS}) g WHERE g.id = $2`);
/** A team by id, with whether SCIM removed it. */
export async function findScimGroup(db: Queryable, orgId: string, id: string): Promise<(ScimGroupRow & { removed: boolean }) | null> {
  const [r] = await db.query<DbGroup & { scim_removed: boolean }>(groupById, [orgId, id]);
  return r ? { ...toGroup(r), removed: r.scim_removed } : null;
}

const groupByName = sql('scim_groups.by_name', `SELECT * FROM (${GROUPS}) g WHERE lower(btrim(g.name)) = lower(btrim($2))`);
export async function findScimGroupByName(db: Queryable, orgId: string, name: string): Promise<(ScimGroupRow & { removed: boolean }) | null> {
  const [r] = await db.query<DbGroup & { scim_removed: boolean }>(groupByName, [orgId, name]);
  return r ? { ...toGroup(r), removed: r.scim_removed } : null;
}

const groupsAll = sql('scim_groups.all', `SELECT * FROM (${GROUPS}) g WHERE NOT g.scim_removed ORDER BY g.id`);
export async function listScimGroups(db: Queryable, orgId: string): Promise<ScimGroupRow[]> {
  return (await db.query<DbGroup>(groupsAll, [orgId])).map(toGroup);
}

const groupsPage = sql('scim_groups.page', `SELECT * FROM (${GROUPS}) g WHERE NOT g.scim_removed ORDER BY g.id LIMIT $2 OFFSET $3`);
const groupsCount = sql('scim_groups.count', `SELECT count(*)::int AS n FROM teams WHERE org_id = $1 AND NOT scim_removed`);
export async function scimGroupPage(db: Queryable, orgId: string, offset: number, limit: number): Promise<{ total: number; rows: ScimGroupRow[] }> {
  const [c] = await db.query<{ n: number }>(groupsCount, [orgId]);
  const rows = limit > 0 ? await db.query<DbGroup>(groupsPage, [orgId, limit, offset]) : [];
  return { total: c?.n ?? 0, rows: rows.map(toGroup) };
}

const members = sql(
  'scim_groups.members',
  `SELECT r.team_id, r.id, COALESCE(r.scim_user_name, r.email) AS user_name FROM respondents r
    WHERE r.org_id = $1 AND r.team_id = ANY($2::text[]) ORDER BY r.team_id, r.id`,
);
/** The people on the roster of each of these teams (SCIM's group members), by id. */
export async function scimGroupMembers(db: Queryable, orgId: string, teamIds: string[]): Promise<Map<string, { id: string; userName: string }[]>> {
  const out = new Map<string, { id: string; userName: string }[]>(teamIds.map((t) => [t, []]));
  if (teamIds.length === 0) return out;
  for (const r of await db.query<{ team_id: string; id: string; user_name: string }>(members, [orgId, teamIds])) {
    out.get(r.team_id)?.push({ id: r.id, userName: r.user_name });
  }
  return out;
}

const setTeamScim = sql(
  'teams.scim_set',
  `UPDATE teams SET name = $3, scim_external_id = $4, scim_modified_at = $5, scim_removed = $6 WHERE org_id = $1 AND id = $2 RETURNING id`,
);
/** A team's name, externalId and removal as SCIM sets them. */
export async function setTeamScimFields(
  db: Queryable,
  orgId: string,
  id: string,
  v: { name: string; externalId: string | null; modifiedAt: Date; removed: boolean },
): Promise<boolean> {
  return (await db.query(setTeamScim, [orgId, id, v.name, v.externalId, v.modifiedAt.toISOString(), v.removed])).length > 0;
}

const lockRespondent = sql('respondents.scim_lock', `SELECT id FROM respondents WHERE org_id = $1 AND id = $2 FOR UPDATE`);
const lockInactive = sql('scim_inactive_users.lock', `SELECT id FROM scim_inactive_users WHERE org_id = $1 AND id = $2 FOR UPDATE`);
/** Holds a user's row until the transaction ends: an If-Match is checked, and a change made, on the version no one else changes meanwhile. */
export async function lockScimUser(db: Queryable, orgId: string, id: string): Promise<void> {
  await db.query(lockRespondent, [orgId, id]);
  await db.query(lockInactive, [orgId, id]);
}

const lockTeam = sql('teams.scim_lock', `SELECT id FROM teams WHERE org_id = $1 AND id = $2 FOR UPDATE`);
/** Holds a team's row: two membership PATCHes of one group run one after the other, each on the members the other left. */
export async function lockScimGroup(db: Queryable, orgId: string, id: string): Promise<void> {
  await db.query(lockTeam, [orgId, id]);
}
