import type { Queryable } from './executor.js';
import { sql, type NamedQuery } from './executor.js';
import type { NewPulse } from './repositories/pulses.js';

export type { NewPulse };

/** What to do with a pulse whose id already exists in the organization. */
export type OnExisting = 'fail' | 'skip';

/**
 * The rollups kept exact by the door, as (key column, expression over the inserted rows) and
 * (measure column, aggregate). Every one is added to, never rewritten: one upsert per rollup and batch.
 */
interface Rollup {
  table: string;
  keys: [column: string, expr: string][];
  measures: [column: string, aggregate: string][];
  where?: string;
}
const COUNT_AND_SUM: Rollup['measures'] = [
  ['pulse_count', 'count(*)'],
  ['level_sum', 'sum(level)'],
];
const utc = `created_at AT TIME ZONE 'UTC'`;
const ROLLUPS: Rollup[] = [
  { table: 'pulse_totals', keys: [], measures: COUNT_AND_SUM },
  { table: 'pulse_day_stats', keys: [['day', `(${utc})::date`]], measures: COUNT_AND_SUM },
  { table: 'pulse_team_day_stats', keys: [['subteam_id', 'subteam_id'], ['day', `(${utc})::date`]], measures: COUNT_AND_SUM, where: 'subteam_id IS NOT NULL' },
  { table: 'pulse_hour_stats', keys: [['hour', `date_trunc('hour', ${utc}) AT TIME ZONE 'UTC'`]], measures: COUNT_AND_SUM },
  { table: 'pulse_minute_stats', keys: [['minute', `date_trunc('minute', ${utc}) AT TIME ZONE 'UTC'`]], measures: COUNT_AND_SUM },
  // CLEAN pulses per ISO week and group (migration 0003, docs/privacy.md).
  {
    table: 'pulse_clean_week_stats',
    keys: [['week', `date_trunc('week', ${utc})::date`], ['grp', `coalesce('team:' || subteam_id, 'none')`]],
    measures: [['clean_count', 'count(*)']],
    where: `moderation_status = 'CLEAN'`,
  },
];
export const ROLLUP_TABLES = ROLLUPS.map((r) => r.table);

/** One data-modifying CTE per rollup, each reading `ins` (the rows this statement inserted) of organization $1. */
const FOLDS = ROLLUPS.map(({ table, keys, measures, where }, i) => {
  const cols = ['org_id', ...keys.map(([c]) => c), ...measures.map(([c]) => c)].join(', ');
  const exprs = ['$1', ...keys.map(([, e]) => e), ...measures.map(([, e]) => e)].join(', ');
  const group = keys.length ? `GROUP BY ${keys.map((_, k) => k + 2).join(', ')}` : 'HAVING count(*) > 0';
  const add = measures.map(([c]) => `${c} = r.${c} + EXCLUDED.${c}`).join(', ');
  return `fold_${i} AS (
     INSERT INTO ${table} AS r (${cols})
     SELECT ${exprs} FROM ins ${where ? `WHERE ${where}` : ''} ${group}
     ON CONFLICT (${['org_id', ...keys.map(([c]) => c)].join(', ')}) DO UPDATE SET ${add})`;
}).join(',\n   ');

const PULSE_COLUMNS = 'org_id, id, level, reason, comment, moderation_status, subteam_id, created_at';
const FOLDED_COLUMNS = 'level, moderation_status, subteam_id, created_at';

/** Inserts the rows of $2..$8 into organization $1 and folds exactly the inserted ones into every rollup. */
function insertAndFold(name: string, onConflict: string): NamedQuery {
  return sql(
    name,
    `WITH ins AS (
       INSERT INTO pulses (${PULSE_COLUMNS})
       SELECT $1, * FROM unnest($2::text[], $3::smallint[], $4::text[], $5::text[], $6::text[], $7::text[], $8::timestamptz[])
       ${onConflict}
       RETURNING ${FOLDED_COLUMNS}),
     ${FOLDS}
     SELECT count(*)::int AS n FROM ins`,
  );
}
const INSERT = {
  fail: insertAndFold('pulse_writes.insert', ''),
  skip: insertAndFold('pulse_writes.insert_skip', 'ON CONFLICT (org_id, id) DO NOTHING'),
};

async function insertBatch(tx: Queryable, orgId: string, pulses: NewPulse[], onExisting: OnExisting): Promise<number> {
  if (pulses.length === 0) return 0;
  const [r] = await tx.query<{ n: number }>(INSERT[onExisting], [
    orgId,
    pulses.map((p) => p.id),
    pulses.map((p) => p.level),
    pulses.map((p) => p.reason),
    pulses.map((p) => p.comment),
    pulses.map((p) => p.moderationStatus),
    pulses.map((p) => p.subteamId),
    pulses.map((p) => p.createdAt),
  ]);
  return r.n;
}

/**
 * The one door for pulse writes (dataset load, file import, live ingestion): inserts validated
 * pulses of one organization inside the caller's transaction and folds exactly the inserted rows
 * into every rollup in the same statement. Returns how many rows were inserted. A missing
 * organization or team fails the statement with 23503 (the rollups hold those references,
 * migration 0007); an existing id fails it with 23505 ('fail') or is skipped and not counted ('skip').
 */
export async function writePulses(tx: Queryable, orgId: string, pulses: NewPulse[], opts: { onExisting: OnExisting }): Promise<number> {
  return insertBatch(tx, orgId, pulses, opts.onExisting);
}

/**
 * The door for a stream of batches in one transaction (the file import): each batch is one
 * statement, sent while the caller reads and validates the next one.
 */
export class PulseWriter {
  private inFlight: Promise<unknown> = Promise.resolve();
  private written = 0;

  constructor(
    private readonly tx: Queryable,
    private readonly orgId: string,
    private readonly opts: { onExisting: OnExisting },
  ) {}

  /** Waits for the previous batch, then sends this one without waiting for it; rejects with a batch's failure. */
  async write(pulses: NewPulse[]): Promise<void> {
    await this.inFlight;
    const sending = insertBatch(this.tx, this.orgId, pulses, this.opts.onExisting).then((n) => (this.written += n));
    sending.catch(() => {}); // awaited by the next write or by finish()
    this.inFlight = sending;
  }

  /** Waits for the last batch; returns how many rows were inserted in all. */
  async finish(): Promise<number> {
    await this.inFlight;
    return this.written;
  }
}

/**
 * Recomputes every rollup of one organization from its pulses, in the caller's transaction: for
 * data written around the door in bulk (the benchmark's generators), and as a repair.
 */
export async function rebuildRollups(tx: Queryable, orgId: string): Promise<void> {
  for (const table of ROLLUP_TABLES) await tx.query(sql(`pulse_writes.clear.${table}`, `DELETE FROM ${table} WHERE org_id = $1`), [orgId]);
  await tx.query(
    sql('pulse_writes.rebuild', `WITH ins AS (SELECT ${FOLDED_COLUMNS} FROM pulses WHERE org_id = $1),\n     ${FOLDS}\n     SELECT 1`),
    [orgId],
  );
}
