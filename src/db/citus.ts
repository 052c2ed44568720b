import type { DatabaseExecutor, Queryable, Transaction } from './executor.js';
import { sql } from './executor.js';
import { PlainError } from '../contract/errors.js';

/**
 * The schema on a Citus cluster (docs/scaling.md): organization data sharded by org_id, all of it
 * colocated, so every request runs on the one shard group of its organization.
 */

/**
 * Replicated to every node. plans: no organization data; organizations: the root every table
 * refers to (it is keyed by its own id); api_keys: authentication finds a key by its hash before
 * it knows the organization; the console's members, invitations and sessions: found by an email,
 * an invitation's token or a session's cookie before the organization is known; passkeys, found by
 * their credential id before it is known; scim_tokens: an identity provider's token, found by its
 * hash as an API key is. All small.
 */
export const REFERENCE_TABLES = [
  'plans',
  'organizations',
  'api_keys',
  'members',
  'member_invitations',
  'console_sessions',
  'member_passkeys',
  'sso_domains',
  'scim_tokens',
] as const;
/** Service-wide, not organization data: left on the coordinator. */
export const COORDINATOR_TABLES = ['service_secrets', 'schema_migrations', 'console_sign_in_attempts', 'webauthn_challenges'] as const;
/** Every other table holds one organization's data in each row and is distributed by this column. */
export const DISTRIBUTION_COLUMN = 'org_id';

/**
 * For migrations applied to a distributed schema (src/db/migrate.ts) and for the distribution
 * itself, in their transaction (docs/scaling.md says why each):
 * - enable_unsafe_triggers: trigger DDL on a distributed table, and distributing a table with triggers;
 * - enable_local_reference_table_foreign_keys off: a table with a foreign key to a reference table
 *   stays a plain table (not a Citus local table), so that it can be distributed;
 * - multi_shard_modify_mode sequential: DDL on distributed tables and on functions or reference
 *   tables may then share one transaction (Citus refuses it after a parallel operation).
 */
export const CITUS_MIGRATION_SETTINGS = `SET LOCAL citus.enable_unsafe_triggers = on;
  SET LOCAL citus.enable_local_reference_table_foreign_keys = off;
  SET LOCAL citus.multi_shard_modify_mode = 'sequential'`;

export interface DistributionStep {
  table: string;
  role: 'reference' | 'distributed' | 'coordinator';
  /** 'made' by this run, or 'already' so from an earlier one. */
  state: 'made' | 'already';
}

const extension = sql('citus.version', `SELECT extversion FROM pg_extension WHERE extname = 'citus'`);

/** The installed citus extension's version in this database, or null without it. */
export async function citusVersion(db: Queryable): Promise<string | null> {
  const [r] = await db.query<{ extversion: string }>(extension);
  return r?.extversion ?? null;
}

const tablesQuery = sql(
  'citus.tables',
  `SELECT c.relname AS table,
          EXISTS (SELECT 1 FROM pg_attribute a WHERE a.attrelid = c.oid AND a.attname = $1 AND NOT a.attisdropped) AS has_org_id,
          p.partmethod AS method,
          p.repmodel AS replication,
          array(SELECT DISTINCT r.relname FROM pg_constraint f JOIN pg_class r ON r.oid = f.confrelid
                 WHERE f.conrelid = c.oid AND f.contype = 'f' AND f.confrelid <> c.oid) AS refers_to
     FROM pg_class c
     JOIN pg_namespace n ON n.oid = c.relnamespace
     LEFT JOIN pg_dist_partition p ON p.logicalrelid = c.oid
    WHERE n.nspname = current_schema() AND c.relkind IN ('r', 'p') AND NOT c.relispartition
    ORDER BY c.relname`,
);

type TableRow = { table: string; has_org_id: boolean; method: string | null; replication: string | null; refers_to: string[] | string };

export const asList = (v: string[] | string): string[] =>
  Array.isArray(v)
    ? v
    : v
        .replace(/^\{|\}$/g, '')
        .split(',')
        .filter(Boolean);

/** Tables in an order where every table comes after the tables it refers to (foreign keys). */
export function referencedFirst(tables: Map<string, string[]>): string[] {
  const out: string[] = [];
  const seen = new Set<string>();
  const visit = (t: string, path: string[]) => {
    if (seen.has(t)) return;
    if (path.includes(t)) throw new Error(`foreign keys form a cycle: ${[...path, t].join(' -> ')}`);
    for (const r of tables.get(t) ?? []) if (tables.has(r)) visit(r, [...path, t]);
    seen.add(t);
    out.push(t);
  };
  for (const t of [...tables.keys()].sort()) visit(t, []);
  return out;
}

/**
 * Makes the reference tables, then distributes every organization table by org_id, colocated,
 * each after the tables its foreign keys point to; tables already so are left alone, so it runs
 * again after a migration that adds a table. One transaction: all or nothing.
 *
 * Settings, for this transaction only (CITUS_MIGRATION_SETTINGS; docs/scaling.md says why):
 * without enable_local_reference_table_foreign_keys off, making `plans` a reference table turns
 * every table linked to it by foreign keys into a Citus local table, which then cannot be
 * distributed; `pulses` has row triggers (enable_unsafe_triggers); tables with foreign keys to
 * reference tables are distributed in the transaction that made them (sequential mode).
 * citus.shard_count: shards per distributed table (Citus's default, 32, unless given).
 */
export async function distributeOnCitus(db: DatabaseExecutor, opts: { shardCount?: number } = {}): Promise<DistributionStep[]> {
  if (!(await citusVersion(db))) throw new CitusMissingError();
  return db.transaction(async (tx) => {
    await tx.exec(CITUS_MIGRATION_SETTINGS);
    if (opts.shardCount) await tx.exec(`SET LOCAL citus.shard_count = ${Math.trunc(opts.shardCount)}`);
    const rows = await tx.query<TableRow>(tablesQuery, [DISTRIBUTION_COLUMN]);
    const byName = new Map(rows.map((r) => [r.table, r]));
    const steps: DistributionStep[] = [];
    const reference = new Set<string>(REFERENCE_TABLES);
    const coordinator = new Set<string>(COORDINATOR_TABLES);
    for (const r of rows) {
      if (!reference.has(r.table) && !coordinator.has(r.table) && !r.has_org_id) {
        throw new Error(
          `table ${r.table} has no ${DISTRIBUTION_COLUMN} and no role under Citus: add it to REFERENCE_TABLES or COORDINATOR_TABLES in src/db/citus.ts`,
        );
      }
    }
    for (const table of REFERENCE_TABLES) {
      const r = byName.get(table);
      if (!r) throw new Error(`table ${table} is missing: run migrate first`);
      steps.push({ table, role: 'reference', state: await make(tx, r, 'reference') });
    }
    const distributed = new Map(rows.filter((r) => !reference.has(r.table) && !coordinator.has(r.table)).map((r) => [r.table, asList(r.refers_to)]));
    let colocateWith: string | null = null;
    for (const table of referencedFirst(distributed)) {
      steps.push({ table, role: 'distributed', state: await make(tx, byName.get(table)!, 'distributed', colocateWith) });
      colocateWith ??= table;
    }
    for (const table of COORDINATOR_TABLES) if (byName.has(table)) steps.push({ table, role: 'coordinator', state: 'already' });
    return steps;
  });
}

const makeReference = sql('citus.create_reference_table', `SELECT create_reference_table($1::regclass)`);
const makeDistributed = sql('citus.create_distributed_table', `SELECT create_distributed_table($1::regclass, $2, colocate_with => $3)`);

async function make(tx: Transaction, r: TableRow, role: 'reference' | 'distributed', colocateWith: string | null = null): Promise<'made' | 'already'> {
  // pg_dist_partition: 'h' = hash-distributed; 'n' with replication 't' = reference; 'n' with 's' = a Citus local table.
  const is = r.method === 'h' ? 'distributed' : r.method === 'n' && r.replication === 't' ? 'reference' : r.method ? 'a Citus local table' : null;
  if (is === role) return 'already';
  if (is) throw new Error(`table ${r.table} is ${is}, not ${role}: undistribute it first (undistribute_table)`);
  if (role === 'reference') await tx.query(makeReference, [r.table]);
  else await tx.query(makeDistributed, [r.table, DISTRIBUTION_COLUMN, colocateWith ?? 'default']);
  return 'made';
}

export class CitusMissingError extends PlainError {
  constructor() {
    super('the citus extension is not installed in this database (CREATE EXTENSION citus on the coordinator, with the workers added)');
  }
}
