import { sql, type Queryable } from '../executor.js';
import { iso } from './time.js';

export interface TeamRow {
  id: string;
  name: string;
  createdAt: string;
}

const listQuery = sql('teams.list', `SELECT id, name, created_at FROM teams WHERE org_id = $1 ORDER BY lower(name), id`);

export async function listTeams(db: Queryable, orgId: string): Promise<TeamRow[]> {
  const rows = await db.query<{ id: string; name: string; created_at: Date }>(listQuery, [orgId]);
  return rows.map((r) => ({ id: r.id, name: r.name, createdAt: iso(r.created_at) }));
}

const idsQuery = sql('teams.ids', `SELECT id FROM teams WHERE org_id = $1`);

export async function listTeamIds(db: Queryable, orgId: string): Promise<Set<string>> {
  return new Set((await db.query<{ id: string }>(idsQuery, [orgId])).map((r) => r.id));
}

const namesQuery = sql('teams.names', `SELECT id, name FROM teams WHERE org_id = $1 AND id = ANY($2::text[])`);

/** The names of those of `ids` that are teams of the organization. */
export async function listTeamNames(db: Queryable, orgId: string, ids: string[]): Promise<{ id: string; name: string }[]> {
  return db.query<{ id: string; name: string }>(namesQuery, [orgId, ids]);
}

const existsQuery = sql('teams.exists', `SELECT 1 AS ok FROM teams WHERE org_id = $1 AND id = $2`);

export async function teamExists(db: Queryable, orgId: string, teamId: string): Promise<boolean> {
  return (await db.query(existsQuery, [orgId, teamId])).length > 0;
}

/**
 * Many teams (the dataset loader). RETURNING, counted in a CTE: Citus then inserts the pulled rows
 * with one INSERT on the shard instead of a COPY, and a duplicate keeps its SQLSTATE (23505).
 */
const insertQuery = sql(
  'teams.insert',
  `WITH ins AS (
     INSERT INTO teams (org_id, id, name, created_at)
     SELECT $1, * FROM unnest($2::text[], $3::text[], $4::timestamptz[])
     RETURNING 1)
   SELECT count(*)::int AS n FROM ins`,
);

export async function insertTeams(db: Queryable, orgId: string, teams: { id: string; name: string; createdAt: string }[]): Promise<void> {
  if (teams.length === 0) return;
  await db.query(insertQuery, [orgId, teams.map((t) => t.id), teams.map((t) => t.name), teams.map((t) => t.createdAt)]);
}

/**
 * One team: VALUES, so that Citus routes it to the organization's shard in one round trip. (A plain
 * INSERT ... SELECT over unnest() is pulled to the coordinator and copied into the shard, and Citus
 * reports a unique violation found by that copy as XX000, not 23505: a name taken by a concurrent
 * request was a 500 instead of team_name_taken.)
 */
const insertOneQuery = sql('teams.insert_one', `INSERT INTO teams (org_id, id, name, created_at) VALUES ($1, $2, $3, $4)`);

export async function insertTeam(db: Queryable, orgId: string, team: { id: string; name: string; createdAt: string }): Promise<void> {
  await db.query(insertOneQuery, [orgId, team.id, team.name, team.createdAt]);
}

const byNameQuery = sql('teams.by_name', `SELECT id, name, created_at FROM teams WHERE org_id = $1 AND lower(btrim(name)) = lower(btrim($2))`);

export async function findTeamByName(db: Queryable, orgId: string, name: string): Promise<TeamRow | null> {
  const [r] = await db.query<{ id: string; name: string; created_at: Date }>(byNameQuery, [orgId, name]);
  return r ? { id: r.id, name: r.name, createdAt: iso(r.created_at) } : null;
}
