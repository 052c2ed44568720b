import { createHash } from 'node:crypto';
import { PlainError } from '../contract/errors.js';
import { asList, citusVersion, referencedFirst } from './citus.js';
import { sql, type DatabaseExecutor, type Queryable, type Transaction } from './executor.js';

/**
 * `climate-pulse db copy --to URL` (docs/scaling.md, "Moving up"): every table of the migrated
 * schema, copied from the database the service runs on (the embedded one, usually) into a
 * migrated, empty PostgreSQL or Citus database, in one transaction on the target. Each table's
 * rows and a checksum of them are compared on both sides before that transaction commits; a
 * difference rolls it back.
 *
 * What moves: every row, the service's secrets (cursors, the comment order and webhook secrets
 * stay valid), the comment release state (cells, frozen groups, members) and the rollups as they
 * are. Pulses are inserted as rows, not through the pulse door, so nothing is folded twice; the
 * one trigger on `pulses` guards updates and deletes only.
 */

/** Tables a freshly migrated database fills itself: replaced by the source's rows, never a reason to refuse. */
export const REPLACED_TABLES = ['plans', 'service_secrets'] as const;
/** The migrations ledger: compared (same versions and checksums), never copied. */
export const LEDGER_TABLE = 'schema_migrations';
/** Rows per statement: a batch is one JSON parameter. */
const BATCH_ROWS = 2_000;

/** The copy cannot go ahead (the target holds data, another schema version) or its checks failed; nothing was written. */
export class CopyRefusedError extends PlainError {}

export interface TableCopy {
  table: string;
  rows: number;
  /** A digest of the table's rows that does not depend on their order (see checksumOf). */
  checksum: string;
}

interface TableInfo {
  table: string;
  /** Columns in name order (the order the checksum reads them in). */
  columns: string[];
  primaryKey: string[];
  refersTo: string[];
}

const ident = (name: string) => `"${name.replace(/"/g, '""')}"`;

const tablesQuery = sql(
  'copy.tables',
  `SELECT c.relname AS table,
          array(SELECT a.attname::text FROM pg_attribute a
                 WHERE a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped AND a.attgenerated = ''
                 ORDER BY a.attname) AS columns,
          array(SELECT a.attname::text FROM pg_index i JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = ANY (i.indkey)
                 WHERE i.indrelid = c.oid AND i.indisprimary
                 ORDER BY array_position(i.indkey::int2[], a.attnum)) AS primary_key,
          array(SELECT DISTINCT r.relname::text FROM pg_constraint f JOIN pg_class r ON r.oid = f.confrelid
                 WHERE f.conrelid = c.oid AND f.contype = 'f' AND f.confrelid <> c.oid) AS refers_to
     FROM pg_class c
     JOIN pg_namespace n ON n.oid = c.relnamespace
    WHERE n.nspname = current_schema() AND c.relkind IN ('r', 'p') AND NOT c.relispartition
    ORDER BY c.relname`,
);

async function tablesOf(db: Queryable): Promise<TableInfo[]> {
  const rows = await db.query<{ table: string; columns: string[] | string; primary_key: string[] | string; refers_to: string[] | string }>(tablesQuery);
  return rows.map((r) => ({ table: r.table, columns: asList(r.columns), primaryKey: asList(r.primary_key), refersTo: asList(r.refers_to) }));
}

const ledgerExists = sql('copy.ledger_exists', `SELECT to_regclass('schema_migrations') IS NOT NULL AS present`);
const ledgerQuery = sql('copy.ledger', `SELECT version, checksum FROM schema_migrations ORDER BY version`);

/** The applied migrations as `version:checksum` lines, empty when the database was never migrated. */
export async function migrationLedger(db: Queryable): Promise<string[]> {
  const [r] = await db.query<{ present: boolean }>(ledgerExists);
  if (!r?.present) return [];
  return (await db.query<{ version: number; checksum: string }>(ledgerQuery)).map((m) => `${m.version}:${m.checksum}`);
}

/**
 * The tables of the target that hold rows, among those a copy fills (every table but the replaced
 * ones and the ledger). Tables the target does not have yet (not migrated) are skipped.
 */
export async function tablesHoldingData(db: Queryable): Promise<string[]> {
  const skip = new Set<string>([...REPLACED_TABLES, LEDGER_TABLE]);
  const out: string[] = [];
  for (const { table } of await tablesOf(db)) {
    if (skip.has(table)) continue;
    const [r] = await db.query<{ any: boolean }>(sql(`copy.any.${table}`, `SELECT EXISTS (SELECT 1 FROM ${ident(table)}) AS any`));
    if (r?.any) out.push(table);
  }
  return out;
}

/**
 * Settings under which a row's text is the same on PGlite, PostgreSQL and every Citus worker (a
 * timestamptz is written in the session's time zone). On Citus, SET LOCAL reaches the workers'
 * connections of the transaction only with propagate_set_commands = 'local'.
 */
async function stableText(tx: Transaction, citus: boolean) {
  if (citus) {
    await tx.exec(`SET LOCAL citus.propagate_set_commands = 'local'`);
    // Reference tables are written before the distributed tables that refer to them, in one transaction.
    await tx.exec(`SET LOCAL citus.multi_shard_modify_mode = 'sequential'`);
  }
  for (const s of [
    `SET LOCAL TimeZone = 'UTC'`,
    `SET LOCAL DateStyle = 'ISO, MDY'`,
    `SET LOCAL IntervalStyle = 'postgres'`,
    `SET LOCAL bytea_output = 'hex'`,
    `SET LOCAL extra_float_digits = 1`,
    `SET LOCAL statement_timeout = 0`,
  ]) {
    await tx.exec(s);
  }
}

/**
 * Row count and checksum of a table: two sums, over its rows, of 60-bit slices of the md5 of the
 * row's text (its columns in name order). A sum does not depend on the order rows are read in,
 * so it is the same on PGlite, on PostgreSQL (whatever its collation) and on Citus, where each
 * worker sums its shards.
 */
async function checksumOf(tx: Queryable, t: TableInfo): Promise<TableCopy> {
  const row = `md5(ROW(${t.columns.map(ident).join(', ')})::text)`;
  const slice = (from: number) => `coalesce(sum(('x' || substr(${row}, ${from}, 15))::bit(60)::bigint), 0)::text`;
  const [r] = await tx.query<{ n: string | number; a: string; b: string }>(
    sql(`copy.checksum.${t.table}`, `SELECT count(*)::text AS n, ${slice(1)} AS a, ${slice(16)} AS b FROM ${ident(t.table)}`),
  );
  const rows = Number(r.n);
  return { table: t.table, rows, checksum: createHash('sha256').update(`${t.table}:${rows}:${r.a}:${r.b}`).digest('hex').slice(0, 16) };
}

const sequencesQuery = sql(
  'copy.sequences',
  `SELECT sequencename AS name, last_value::text AS last_value FROM pg_sequences WHERE schemaname = current_schema() ORDER BY 1`,
);

export interface CopyOutcome {
  tables: TableCopy[];
  /** Sequences whose position was carried over. */
  sequences: number;
}

/**
 * Checks the target: migrated to exactly the source's migrations, nothing in it but what a
 * migration makes. The caller migrates an empty target first (`migrate`), then calls this.
 */
export async function checkCopyTarget(source: Queryable, target: Queryable): Promise<void> {
  const [from, to] = [await migrationLedger(source), await migrationLedger(target)];
  if (from.join('\n') !== to.join('\n')) {
    throw new CopyRefusedError(
      `the target database is at migration ${to.length ? to[to.length - 1].split(':')[0] : 'none'}${to.length && from.length && to.length === from.length ? ' with other checksums' : ''}, the source at ${from.length ? from[from.length - 1].split(':')[0] : 'none'}: both must have the same migrations; nothing was copied`,
    );
  }
  const holding = await tablesHoldingData(target);
  if (holding.length) {
    throw new CopyRefusedError(
      `the target database already holds data (${holding.slice(0, 4).join(', ')}${holding.length > 4 ? ', ...' : ''}): db copy fills only a migrated, empty database; nothing was copied`,
    );
  }
}

/**
 * Copies every table of the source's schema into the target, in one transaction on the target
 * (and one REPEATABLE READ snapshot of the source), then compares each table's rows and checksum
 * on both sides inside that transaction: a difference rolls it back.
 */
export async function copyDatabase(source: DatabaseExecutor, target: DatabaseExecutor, opts: { onTable?: (t: TableCopy) => void } = {}): Promise<CopyOutcome> {
  await checkCopyTarget(source, target);
  const citus = (await citusVersion(target)) !== null;
  return source.transaction(async (src) => {
    await src.exec('SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY');
    await stableText(src, false);
    const tables = (await tablesOf(src)).filter((t) => t.table !== LEDGER_TABLE);
    const byName = new Map(tables.map((t) => [t.table, t]));
    const order = referencedFirst(new Map(tables.map((t) => [t.table, t.refersTo])));
    return target.transaction(async (dst) => {
      await stableText(dst, citus);
      // Checked again in the transaction that writes: nothing arrived since the first look.
      await checkCopyTarget(src, dst);
      const targetTables = new Map((await tablesOf(dst)).map((t) => [t.table, t]));
      for (const t of tables) {
        const other = targetTables.get(t.table);
        if (!other || other.columns.join(',') !== t.columns.join(',')) {
          throw new CopyRefusedError(`table ${t.table} has other columns in the target than in the source; nothing was copied`);
        }
      }
      // The target's own plans and secrets give way to the source's (children first, then parents).
      for (const table of [...order].reverse()) {
        if ((REPLACED_TABLES as readonly string[]).includes(table)) await dst.query(sql(`copy.clear.${table}`, `DELETE FROM ${ident(table)}`));
      }
      for (const table of order) await copyTable(src, dst, byName.get(table)!);
      let sequences = 0;
      for (const s of await src.query<{ name: string; last_value: string | null }>(sequencesQuery)) {
        if (s.last_value === null) continue;
        await dst.query(sql('copy.setval', `SELECT setval($1::regclass, $2::bigint, true)`), [ident(s.name), s.last_value]);
        sequences++;
      }
      const out: TableCopy[] = [];
      for (const table of order) {
        const t = byName.get(table)!;
        const [a, b] = [await checksumOf(src, t), await checksumOf(dst, t)];
        if (a.rows !== b.rows || a.checksum !== b.checksum) {
          throw new CopyRefusedError(
            `table ${table} differs after the copy (source ${a.rows} rows, checksum ${a.checksum}; target ${b.rows} rows, checksum ${b.checksum}); rolled back, nothing was copied`,
          );
        }
        out.push(a);
        opts.onTable?.(a);
      }
      return { tables: out, sequences };
    });
  });
}

/** One table, BATCH_ROWS rows a statement, read in primary-key order (keyset pages) as JSON and inserted from it. */
async function copyTable(src: Transaction, dst: Transaction, t: TableInfo): Promise<number> {
  if (t.primaryKey.length === 0) throw new CopyRefusedError(`table ${t.table} has no primary key; db copy reads tables in key order`);
  const cols = t.columns.map(ident).join(', ');
  const key = t.primaryKey.map(ident).join(', ');
  const keyText = t.primaryKey.map((k, i) => `${ident(k)}::text AS k${i}`).join(', ');
  const params = t.primaryKey.map((_, i) => `$${i + 1}`).join(', ');
  const first = sql(
    `copy.read_first.${t.table}`,
    `SELECT row_to_json(x)::text AS j, ${keyText} FROM (SELECT ${cols} FROM ${ident(t.table)}) x ORDER BY ${key} LIMIT ${BATCH_ROWS}`,
  );
  const next = sql(
    `copy.read_next.${t.table}`,
    `SELECT row_to_json(x)::text AS j, ${keyText} FROM (SELECT ${cols} FROM ${ident(t.table)}) x WHERE (${key}) > (${params}) ORDER BY ${key} LIMIT ${BATCH_ROWS}`,
  );
  const insert = sql(
    `copy.write.${t.table}`,
    `INSERT INTO ${ident(t.table)} (${cols}) SELECT ${cols} FROM json_populate_recordset(NULL::${ident(t.table)}, $1::json)`,
  );
  let copied = 0;
  let after: string[] | null = null;
  for (;;) {
    const rows: Record<string, string>[] = after ? await src.query(next, after) : await src.query(first);
    if (rows.length === 0) break;
    await dst.query(insert, [`[${rows.map((r) => r.j).join(',')}]`]);
    copied += rows.length;
    if (rows.length < BATCH_ROWS) break;
    const last = rows[rows.length - 1];
    after = t.primaryKey.map((_, i) => last[`k${i}`]);
  }
  return copied;
}
