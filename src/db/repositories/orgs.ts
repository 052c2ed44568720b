import { sql, type Queryable, type Transaction } from '../executor.js';
import { iso } from './time.js';

export interface OrgRow {
  id: string;
  name: string;
  memberCount: number;
  createdAt: string;
}

const getOrgQuery = sql('orgs.get', `SELECT id, name, member_count, created_at FROM organizations WHERE id = $1 AND deleted_at IS NULL`);

export async function getOrg(db: Queryable, orgId: string): Promise<OrgRow | null> {
  const [r] = await db.query<{ id: string; name: string; member_count: number; created_at: Date }>(getOrgQuery, [orgId]);
  return r ? { id: r.id, name: r.name, memberCount: r.member_count, createdAt: iso(r.created_at) } : null;
}

const countOrgsQuery = sql('orgs.count', `SELECT count(*)::int AS n FROM organizations`);

export async function countOrgs(db: Queryable): Promise<number> {
  const [r] = await db.query<{ n: number }>(countOrgsQuery);
  return r.n;
}

/** The operator's view of an organization: deleted ones too, with the plan and the deletion time. */
export interface OrgRecord extends OrgRow {
  plan: string;
  deletedAt: string | null;
}

type DbOrg = { id: string; name: string; plan: string; member_count: number; created_at: Date; deleted_at: Date | null };
const ORG_COLUMNS = 'id, name, plan, member_count, created_at, deleted_at';
const toRecord = (r: DbOrg): OrgRecord => ({
  id: r.id,
  name: r.name,
  plan: r.plan,
  memberCount: r.member_count,
  createdAt: iso(r.created_at),
  deletedAt: r.deleted_at === null ? null : iso(r.deleted_at),
});

const getRecordQuery = sql('orgs.get_record', `SELECT ${ORG_COLUMNS} FROM organizations WHERE id = $1`);

export async function getOrgRecord(db: Queryable, orgId: string): Promise<OrgRecord | null> {
  const [r] = await db.query<DbOrg>(getRecordQuery, [orgId]);
  return r ? toRecord(r) : null;
}

const insertOrgQuery = sql(
  'orgs.insert',
  `INSERT INTO organizations (id, name, plan, member_count, created_at) VALUES ($1, $2, $3, $4, $5)
   ON CONFLICT (id) DO NOTHING
   RETURNING ${ORG_COLUMNS}`,
);

/** Null when the id is taken. */
export async function insertOrg(
  db: Queryable,
  orgId: string,
  o: { name: string; plan: string; memberCount: number; createdAt: Date },
): Promise<OrgRecord | null> {
  const [r] = await db.query<DbOrg>(insertOrgQuery, [orgId, o.name, o.plan, o.memberCount, o.createdAt.toISOString()]);
  return r ? toRecord(r) : null;
}

const updateOrgQuery = sql(
  'orgs.update',
  `UPDATE organizations SET name = COALESCE($2, name), plan = COALESCE($3, plan), member_count = COALESCE($4, member_count)
    WHERE id = $1
   RETURNING ${ORG_COLUMNS}`,
);

export async function updateOrg(db: Queryable, orgId: string, patch: { name?: string; plan?: string; memberCount?: number }): Promise<OrgRecord | null> {
  const [r] = await db.query<DbOrg>(updateOrgQuery, [orgId, patch.name ?? null, patch.plan ?? null, patch.memberCount ?? null]);
  return r ? toRecord(r) : null;
}

const softDeleteQuery = sql('orgs.soft_delete', `UPDATE organizations SET deleted_at = COALESCE(deleted_at, $2) WHERE id = $1 RETURNING ${ORG_COLUMNS}`);

/** Marks the organization deleted (the first time is kept). */
export async function softDeleteOrg(db: Queryable, orgId: string, at: Date): Promise<OrgRecord | null> {
  const [r] = await db.query<DbOrg>(softDeleteQuery, [orgId, at.toISOString()]);
  return r ? toRecord(r) : null;
}

/**
 * Every table of the schema with an `org_id` column, and which of them each one references,
 * read from the catalog: a table added by any later migration is erased too.
 */
const orgTablesQuery = sql(
  'orgs.erase.tables',
  `SELECT c.relname AS name,
          array(SELECT DISTINCT r.relname::text
                  FROM pg_constraint con JOIN pg_class r ON r.oid = con.confrelid
                 WHERE con.conrelid = c.oid AND con.contype = 'f' AND r.oid <> c.oid) AS refs
     FROM pg_class c
     JOIN pg_namespace n ON n.oid = c.relnamespace
    WHERE n.nspname = current_schema() AND c.relkind IN ('r', 'p')
      AND EXISTS (SELECT 1 FROM pg_attribute a WHERE a.attrelid = c.oid AND a.attname = 'org_id' AND NOT a.attisdropped)
    ORDER BY c.relname`,
);
/**
 * Names the organization whose pulses may be deleted (pulses_refuse_rollup_changes reads it), for
 * this transaction only. A SET LOCAL statement, not set_config(): on Citus the trigger fires on the
 * workers, and Citus carries SET LOCAL (never set_config) to their connections of the transaction
 * under citus.propagate_set_commands = 'local'; elsewhere that setting is an unused placeholder.
 */
const allowPulseErase = sql(
  'orgs.erase.allow',
  `SELECT format('SET LOCAL citus.propagate_set_commands = %L; SET LOCAL climate_pulse.erase_org = %L', 'local', $1::text) AS script`,
);
const deleteOrgRow = sql('orgs.erase.organization', `DELETE FROM organizations WHERE id = $1`);

const names = (v: unknown): string[] =>
  Array.isArray(v)
    ? v.map(String)
    : String(v)
        .replace(/^\{|\}$/g, '')
        .split(',')
        .filter(Boolean);
const quoteIdent = (name: string) => `"${name.replace(/"/g, '""')}"`;

/**
 * Removes every row of the organization from every table, in the caller's transaction:
 * referencing tables before the ones they reference, the organization last. Returns the
 * rows removed per table.
 */
export async function eraseOrgRows(tx: Transaction, orgId: string): Promise<Record<string, number>> {
  const tables = (await tx.query<{ name: string; refs: unknown }>(orgTablesQuery)).map((t) => ({ name: t.name, refs: names(t.refs) }));
  const pending = new Map(tables.map((t) => [t.name, new Set(t.refs.filter((r) => r !== 'organizations'))]));
  const order: string[] = [];
  while (pending.size > 0) {
    // A table can go once no remaining table references it.
    const referenced = new Set([...pending.values()].flatMap((refs) => [...refs]));
    const free = [...pending.keys()].filter((t) => !referenced.has(t));
    const next = free.length > 0 ? free : [...pending.keys()]; // a cycle: plain order, the database will say
    for (const t of next) {
      order.push(t);
      pending.delete(t);
    }
  }
  const [allow] = await tx.query<{ script: string }>(allowPulseErase, [orgId]);
  await tx.exec(allow.script);
  const removed: Record<string, number> = {};
  for (const table of order) {
    const rows = await tx.query<{ n: number }>(
      sql(`orgs.erase.${table}`, `WITH d AS (DELETE FROM ${quoteIdent(table)} WHERE org_id = $1 RETURNING 1) SELECT count(*)::int AS n FROM d`),
      [orgId],
    );
    removed[table] = rows[0].n;
  }
  await tx.query(deleteOrgRow, [orgId]);
  removed.organizations = 1;
  return removed;
}

const listQuery = sql(
  'orgs.list',
  `SELECT ${ORG_COLUMNS} FROM organizations
    WHERE ($2::timestamptz IS NULL OR (created_at, id) < ($2::timestamptz, $3::text))
    ORDER BY created_at DESC, id DESC
    LIMIT $1`,
);

/** Every organization, deleted ones too, newest first by (created_at, id), after a position. */
export async function listOrgRecords(db: Queryable, limit: number, after: { createdAt: string; id: string } | null): Promise<OrgRecord[]> {
  return (await db.query<DbOrg>(listQuery, [limit, after?.createdAt ?? null, after?.id ?? null])).map(toRecord);
}
