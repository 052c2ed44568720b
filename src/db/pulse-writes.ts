import type { Queryable, Transaction } from './executor.js';
import { sql, type NamedQuery } from './executor.js';
import type { NewPulse } from './repositories/pulses.js';

export type { NewPulse };

/** What to do with a pulse whose id already exists in the organization. */
export type OnExisting = 'fail' | 'skip';

/**
 * The rollups kept exact by the door, as (key column, expression) and (measure column, aggregate)
 * over one of two pre-aggregations of the rows to fold: `by_minute` (minute, n, s), their count and
 * level sum per UTC minute, and `by_day` (day, subteam_id, clean, n, s), the same per UTC day, team
 * and CLEAN or not. Every rollup truncates its source's grain, so each aggregates a few hundred rows
 * instead of the batch. Every one is added to, never rewritten: one upsert per rollup and batch.
 */
interface Rollup {
  table: string;
  from: 'by_minute' | 'by_day';
  keys: [column: string, expr: string][];
  measures: [column: string, aggregate: string][];
  where?: string;
}
const COUNT_AND_SUM: Rollup['measures'] = [
  ['pulse_count', 'sum(n)'],
  ['level_sum', 'sum(s)'],
];
const utc = `minute AT TIME ZONE 'UTC'`;
const ROLLUPS: Rollup[] = [
  { table: 'pulse_totals', from: 'by_day', keys: [], measures: COUNT_AND_SUM },
  { table: 'pulse_day_stats', from: 'by_day', keys: [['day', 'day']], measures: COUNT_AND_SUM },
  {
    table: 'pulse_team_day_stats',
    from: 'by_day',
    keys: [
      ['subteam_id', 'subteam_id'],
      ['day', 'day'],
    ],
    measures: COUNT_AND_SUM,
    where: 'subteam_id IS NOT NULL',
  },
  { table: 'pulse_hour_stats', from: 'by_minute', keys: [['hour', `date_trunc('hour', ${utc}) AT TIME ZONE 'UTC'`]], measures: COUNT_AND_SUM },
  { table: 'pulse_minute_stats', from: 'by_minute', keys: [['minute', 'minute']], measures: COUNT_AND_SUM },
  // CLEAN pulses per ISO week (Monday to Sunday, UTC) and group (migration 0003, docs/privacy.md).
  {
    table: 'pulse_clean_week_stats',
    from: 'by_day',
    keys: [
      ['week', `date_trunc('week', day::timestamp)::date`],
      ['grp', `coalesce('team:' || subteam_id, 'none')`],
    ],
    measures: [['clean_count', 'sum(n)']],
    where: 'clean',
  },
];
export const ROLLUP_TABLES = ROLLUPS.map((r) => r.table);

/** One data-modifying CTE per rollup over `by_minute` and `by_day`, for organization $1. */
const FOLD_CTES = ROLLUPS.map(({ table, from, keys, measures, where }, i) => {
  const cols = ['org_id', ...keys.map(([c]) => c), ...measures.map(([c]) => c)].join(', ');
  const exprs = ['$1', ...keys.map(([, e]) => e), ...measures.map(([, e]) => e)].join(', ');
  // Sorted by key: concurrent batches of one organization (live ingestion) upsert shared rows in
  // one order, so they queue instead of deadlocking (hash order differs between batches).
  const positions = keys.map((_, k) => k + 2).join(', ');
  const group = keys.length ? `GROUP BY ${positions} ORDER BY ${positions}` : 'HAVING count(*) > 0';
  const add = measures.map(([c]) => `${c} = r.${c} + EXCLUDED.${c}`).join(', ');
  return `fold_${i} AS (
     INSERT INTO ${table} AS r (${cols})
     SELECT ${exprs} FROM ${from} ${where ? `WHERE ${where}` : ''} ${group}
     ON CONFLICT (${['org_id', ...keys.map(([c]) => c)].join(', ')}) DO UPDATE SET ${add})`;
}).join(',\n   ');

/** `by_minute` and `by_day` over `ins` (the rows to fold, of organization $1), then one data-modifying CTE per rollup. */
const FOLDS = `by_minute AS (
     SELECT date_trunc('minute', created_at AT TIME ZONE 'UTC') AT TIME ZONE 'UTC' AS minute, count(*) AS n, sum(level) AS s
       FROM ins GROUP BY 1),
   by_day AS (
     SELECT (created_at AT TIME ZONE 'UTC')::date AS day, subteam_id, moderation_status = 'CLEAN' AS clean, count(*) AS n, sum(level) AS s
       FROM ins GROUP BY 1, 2, 3),
   ${FOLD_CTES}`;

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
  // In id order: two batches sharing ids (a re-send beside a new batch) wait on each other in one order.
  skip: insertAndFold('pulse_writes.insert_skip', 'ORDER BY 2 ON CONFLICT (org_id, id) DO NOTHING'),
};

/**
 * A PostgreSQL array literal: every element quoted (backslash and double quote escaped), null as
 * NULL. pg's own serializer escapes each element by regular expressions: 40 ms for a batch of
 * 5,000 pulses (8 µs a pulse, about half of what the database spends inserting one), against 2.5 ms.
 */
export function arrayLiteral(values: readonly (string | number | null)[]): string {
  let out = '{';
  for (let i = 0; i < values.length; i++) {
    const v = values[i];
    if (i > 0) out += ',';
    if (v === null) out += 'NULL';
    else if (typeof v === 'number') out += v;
    else out += `"${v.includes('"') || v.includes('\\') ? v.replace(/["\\]/g, '\\$&') : v}"`;
  }
  return `${out}}`;
}

/** The statement's parameters for one batch, serialized here so that it can happen while the previous batch runs. */
function batchParams(orgId: string, pulses: NewPulse[]): string[] {
  const column = (pick: (p: NewPulse) => string | number | null) => arrayLiteral(pulses.map(pick));
  return [
    orgId,
    column((p) => p.id),
    column((p) => p.level),
    column((p) => p.reason),
    column((p) => p.comment),
    column((p) => p.moderationStatus),
    column((p) => p.subteamId),
    column((p) => p.createdAt),
  ];
}

async function insertBatch(tx: Queryable, params: string[], onExisting: OnExisting): Promise<number> {
  const [r] = await tx.query<{ n: number }>(INSERT[onExisting], params);
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
  if (pulses.length === 0) return 0;
  return insertBatch(tx, batchParams(orgId, pulses), opts.onExisting);
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

  /**
   * Serializes this batch while the previous one runs, waits for that one, then sends this one
   * without waiting for it; rejects with a batch's failure.
   */
  async write(pulses: NewPulse[]): Promise<void> {
    if (pulses.length === 0) return;
    const params = batchParams(this.orgId, pulses);
    await this.inFlight;
    const sending = insertBatch(this.tx, params, this.opts.onExisting).then((n) => (this.written += n));
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
 * The file import's staging tables (issue 29), in the import's transaction: TEMP tables (no WAL,
 * nothing left after a crash, dropped at the end of the transaction; under Citus they live on the
 * coordinator, where the import's statements run). Rows wait in `pulse_import_rows` in the order
 * they came, without an index; once the file is read, one sort copies them into
 * `pulse_import_ordered`, so that its heap is in (created_at, id) order as well as its index, and
 * the moves read it page after page. When every statement must stay short (PGlite runs each on the
 * event loop), there is no sort: rows go straight into `pulse_import_ordered`, whose index is kept
 * as they arrive, and the moves read its heap in index order.
 */
const STAGED_COLUMNS = 'id, level, reason, comment, moderation_status, subteam_id, created_at';
const STAGED_TABLE = `(id text NOT NULL, level smallint NOT NULL, reason text, comment text,
       moderation_status text NOT NULL, subteam_id text, created_at timestamptz NOT NULL) ON COMMIT DROP`;
const stageInsert = (table: string) =>
  sql(
    `pulse_writes.stage_into_${table}`,
    `INSERT INTO ${table} (${STAGED_COLUMNS})
     SELECT * FROM unnest($1::text[], $2::smallint[], $3::text[], $4::text[], $5::text[], $6::text[], $7::timestamptz[])`,
  );
const STAGE = {
  rows: {
    create: [sql('pulse_writes.stage_rows', `CREATE TEMP TABLE pulse_import_rows ${STAGED_TABLE}`)],
    insert: stageInsert('pulse_import_rows'),
    order: [
      sql('pulse_writes.stage_sort', `CREATE TEMP TABLE pulse_import_ordered ON COMMIT DROP AS SELECT * FROM pulse_import_rows ORDER BY created_at, id`),
      sql('pulse_writes.stage_index', `CREATE INDEX ON pulse_import_ordered (created_at, id)`),
      sql('pulse_writes.stage_drop_rows', `DROP TABLE pulse_import_rows`),
    ],
  },
  ordered: {
    create: [
      sql('pulse_writes.stage_ordered', `CREATE TEMP TABLE pulse_import_ordered ${STAGED_TABLE}`),
      sql('pulse_writes.stage_index', `CREATE INDEX ON pulse_import_ordered (created_at, id)`),
    ],
    insert: stageInsert('pulse_import_ordered'),
    order: [],
  },
};

/**
 * Moves the next $4 staged rows after ($2, $3) in (created_at, id) order into organization $1 and
 * folds exactly the inserted ones into every rollup in the same statement, as insertAndFold does.
 * Answers how many were inserted and the chunk's last key (no row once nothing is left).
 */
function moveAndFold(name: string, onConflict: string): NamedQuery {
  return sql(
    name,
    `WITH chunk AS (
       SELECT ${STAGED_COLUMNS} FROM pulse_import_ordered
        WHERE (created_at, id) > ($2::timestamptz, $3::text)
        ORDER BY created_at, id LIMIT $4),
     ins AS (
       INSERT INTO pulses (${PULSE_COLUMNS})
       SELECT $1, * FROM chunk
       ${onConflict}
       RETURNING ${FOLDED_COLUMNS}),
     ${FOLDS}
     SELECT (SELECT count(*)::int FROM ins) AS n, created_at::text AS last_at, id AS last_id
       FROM chunk ORDER BY created_at DESC, id DESC LIMIT 1`,
  );
}
const MOVE = {
  fail: moveAndFold('pulse_writes.move', ''),
  skip: moveAndFold('pulse_writes.move_skip', 'ORDER BY 2 ON CONFLICT (org_id, id) DO NOTHING'),
};

/**
 * Abort mode on a server (not PGlite): a row that cannot be written fails the whole import, so
 * every row sent is a row inserted. Each batch, sorted by (createdAt, id), goes into pulses by COPY
 * (text format) while the next one is read; its rows are counted and summed here into the rows of
 * `by_minute` and `by_day` above, and those sums are folded into every rollup by one set-based
 * statement in the import's transaction: at the end, or earlier whenever more than HELD_SUMS_MAX
 * sums are held, so the importer's memory stays bounded whatever the file's period. INSERT ...
 * SELECT FROM unnest(...) RETURNING cost the database about twice what COPY does, and folding
 * batch by batch rewrote rollup rows all over the period in every batch of an unordered file
 * (docs/decisions.md, issue 29).
 */
const COPY_PULSES = `COPY pulses (${PULSE_COLUMNS}) FROM STDIN`;
const FOLD_SUMS = sql(
  'pulse_writes.fold_sums',
  `WITH by_minute AS (SELECT * FROM unnest($2::timestamptz[], $3::bigint[], $4::bigint[]) AS m(minute, n, s)),
   by_day AS (SELECT * FROM unnest($5::date[], $6::text[], $7::boolean[], $8::bigint[], $9::bigint[]) AS d(day, subteam_id, clean, n, s)),
   ${FOLD_CTES}
   SELECT 1`,
);
/** Sums held before they are folded (about 100 bytes each): a file spanning years of busy minutes folds on the way. */
const HELD_SUMS_MAX = 200_000;

/** `by_minute`'s and `by_day`'s rows, kept by the COPY path. */
interface Sum {
  n: number;
  s: number;
}
interface DaySum extends Sum {
  day: string;
  subteamId: string | null;
  clean: boolean;
}

const COPY_ESCAPES: Record<string, string> = { '\\': '\\\\', '\n': '\\n', '\r': '\\r', '\t': '\\t' };
const COPY_SPECIAL = /[\\\n\r\t]/;
const COPY_SPECIALS = /[\\\n\r\t]/g;
/** A value in COPY's text format: NULL as \N; backslash, newline, carriage return and tab escaped. */
export function copyValue(v: string | number | null): string {
  if (v === null) return '\\N';
  if (typeof v === 'number') return String(v);
  return COPY_SPECIAL.test(v) ? v.replace(COPY_SPECIALS, (c) => COPY_ESCAPES[c]) : v;
}

/**
 * The door for a file (the import, issue 29), whatever the order of its rows. Written in file
 * order, a shuffled file made every batch touch index pages and rollup rows scattered over its
 * whole period, each rollup row rewritten by nearly every batch of one long transaction: five
 * times as long as the same rows in time order. Here a row later than every row written so far
 * goes straight in with its batch (insertAndFold, sent while the caller reads the next batch, as
 * PulseWriter does), so a file in time order is written as it is read; any other row is staged,
 * and `finish` moves the staged rows in (created_at, id) order, a chunk a statement, so each chunk
 * inserts neighbouring rows and folds them into neighbouring rollup rows. All in the caller's
 * transaction; every row inserted is folded in the statement that inserts it. That is the path on
 * PGlite and in skip mode; in abort mode on a server, batches go in sorted by COPY and are folded
 * from sums kept here (COPY_PULSES above).
 */
export class PulseImport {
  private inFlight: Promise<unknown> = Promise.resolve();
  private written = 0;
  private staged = 0;
  private stageReady = false;
  /** The greatest (createdAt, id) sent straight in: a row after it keeps the writes in order. */
  private last = '';
  private readonly stage: (typeof STAGE)['rows'];
  /** The COPY path's sums not yet folded: `by_minute`'s rows by minute, `by_day`'s by day, CLEAN or not, and team. */
  private readonly minuteSums = new Map<string, Sum>();
  private readonly daySums = new Map<string, DaySum>();

  /**
   * `shortStatements` (PGlite): no statement over the whole file; the staging table keeps its
   * index as rows arrive instead of being sorted once at the end.
   */
  constructor(
    private readonly tx: Queryable & Pick<Transaction, 'copyFrom'>,
    private readonly orgId: string,
    private readonly opts: { onExisting: OnExisting; shortStatements: boolean },
  ) {
    this.stage = opts.shortStatements ? STAGE.ordered : STAGE.rows;
  }

  /**
   * Serializes this batch while the previous one runs, waits for that one, then sends this one
   * without waiting for it; rejects with a batch's failure.
   */
  async write(pulses: NewPulse[]): Promise<void> {
    if (this.copied) return this.writeCopy(pulses);
    const inOrder: NewPulse[] = [];
    const late: NewPulse[] = [];
    for (const p of pulses) {
      // createdAt is canonical (UTC, milliseconds), so text order is time order; ids never hold NUL.
      const key = `${p.createdAt}\u0000${p.id}`;
      if (key > this.last) {
        this.last = key;
        inOrder.push(p);
      } else late.push(p);
    }
    const direct = inOrder.length ? batchParams(this.orgId, inOrder) : undefined;
    const staging = late.length ? batchParams(this.orgId, late).slice(1) : undefined;
    await this.inFlight;
    const sending = (async () => {
      if (direct) this.written += await insertBatch(this.tx, direct, this.opts.onExisting);
      if (staging) {
        if (!this.stageReady) {
          for (const q of this.stage.create) await this.tx.query(q);
          this.stageReady = true;
        }
        await this.tx.query(this.stage.insert, staging);
        this.staged += late.length;
      }
    })();
    sending.catch(() => {}); // awaited by the next write or by finish()
    this.inFlight = sending;
  }

  /** Abort mode on a server: batches go in by COPY and are folded from the sums kept here (COPY_PULSES above). */
  private get copied(): boolean {
    return this.opts.onExisting === 'fail' && !this.opts.shortStatements && this.tx.copyFrom !== undefined;
  }

  /**
   * A batch in (createdAt, id) order, written by COPY: its inserts sweep the indexes once instead
   * of landing all over them. Its rows are added to the sums folded later.
   */
  private async writeCopy(batch: NewPulse[]): Promise<void> {
    if (batch.length === 0) return;
    const pulses = [...batch].sort((a, b) => (a.createdAt < b.createdAt ? -1 : a.createdAt > b.createdAt ? 1 : a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
    const org = copyValue(this.orgId);
    let data = '';
    for (const p of pulses) {
      data += `${org}\t${copyValue(p.id)}\t${p.level}\t${copyValue(p.reason)}\t${copyValue(p.comment)}\t${p.moderationStatus}\t${copyValue(p.subteamId)}\t${p.createdAt}\n`;
    }
    this.addToSums(pulses);
    const fold = this.minuteSums.size + this.daySums.size >= HELD_SUMS_MAX ? this.takeSums() : undefined;
    await this.inFlight;
    const sending = (async () => {
      this.written += await this.tx.copyFrom!(COPY_PULSES, data);
      if (fold) await this.tx.query(FOLD_SUMS, fold);
    })();
    sending.catch(() => {}); // awaited by the next write or by finish()
    this.inFlight = sending;
  }

  /**
   * Adds a batch in time order to `by_minute` and `by_day`. createdAt is canonical (UTC,
   * milliseconds), so it starts with its UTC minute and day; in time order, the rows of one minute
   * (and of one day) are consecutive, so the held sums are looked up once per minute and per day
   * and team, not once per row.
   */
  private addToSums(sorted: NewPulse[]): void {
    let i = 0;
    while (i < sorted.length) {
      const day = sorted[i].createdAt.slice(0, 10);
      // Per team (null for none), CLEAN and not, over this day's rows.
      const clean = new Map<string | null, Sum>();
      const flagged = new Map<string | null, Sum>();
      while (i < sorted.length && sorted[i].createdAt.startsWith(day)) {
        const minute = sorted[i].createdAt.slice(0, 16);
        let n = 0;
        let sum = 0;
        for (; i < sorted.length && sorted[i].createdAt.startsWith(minute); i++) {
          const p = sorted[i];
          n++;
          sum += p.level;
          const teams = p.moderationStatus === 'CLEAN' ? clean : flagged;
          const t = teams.get(p.subteamId);
          if (t) {
            t.n++;
            t.s += p.level;
          } else teams.set(p.subteamId, { n: 1, s: p.level });
        }
        const m = this.minuteSums.get(minute);
        if (m) {
          m.n += n;
          m.s += sum;
        } else this.minuteSums.set(minute, { n, s: sum });
      }
      for (const [teams, isClean] of [
        [clean, true],
        [flagged, false],
      ] as const) {
        for (const [subteamId, t] of teams) {
          const key = `${day}${isClean ? 'c' : 'f'}${subteamId === null ? '' : `:${subteamId}`}`;
          const d = this.daySums.get(key);
          if (d) {
            d.n += t.n;
            d.s += t.s;
          } else this.daySums.set(key, { day, subteamId, clean: isClean, n: t.n, s: t.s });
        }
      }
    }
  }

  /** FOLD_SUMS's parameters for the sums held so far, which are then forgotten. */
  private takeSums(): string[] {
    const minutes = [...this.minuteSums];
    const days = [...this.daySums.values()];
    this.minuteSums.clear();
    this.daySums.clear();
    return [
      this.orgId,
      arrayLiteral(minutes.map(([m]) => `${m}:00Z`)),
      arrayLiteral(minutes.map(([, v]) => v.n)),
      arrayLiteral(minutes.map(([, v]) => v.s)),
      arrayLiteral(days.map((d) => d.day)),
      arrayLiteral(days.map((d) => d.subteamId)),
      arrayLiteral(days.map((d) => (d.clean ? 't' : 'f'))),
      arrayLiteral(days.map((d) => d.n)),
      arrayLiteral(days.map((d) => d.s)),
    ];
  }

  /**
   * Waits for the last batch, then moves the staged rows, `chunkSize` a statement, awaiting
   * `afterChunk` (which may throw to stop) after each (or, in abort mode on a server, folds every
   * row in one statement). Returns how many rows were inserted in all.
   */
  async finish(chunkSize: number, afterChunk?: (moved: number, staged: number) => Promise<void> | void): Promise<number> {
    await this.inFlight;
    if (this.copied) {
      if (this.minuteSums.size) await this.tx.query(FOLD_SUMS, this.takeSums());
      return this.written;
    }
    if (this.staged === 0) return this.written;
    for (const q of this.stage.order) await this.tx.query(q);
    let after = ['-infinity', ''];
    for (let moved = 0; moved < this.staged; ) {
      const [r] = await this.tx.query<{ n: number; last_at: string; last_id: string }>(MOVE[this.opts.onExisting], [this.orgId, ...after, chunkSize]);
      if (!r) break;
      this.written += r.n;
      moved = Math.min(this.staged, moved + chunkSize);
      after = [r.last_at, r.last_id];
      await afterChunk?.(moved, this.staged);
    }
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
    // The CLEAN rollup counts pulses as answers show them (migration 0021): the shown status where one is kept.
    sql(
      'pulse_writes.rebuild',
      `WITH ins AS (SELECT level, coalesce(shown_status, moderation_status) AS moderation_status, subteam_id, created_at FROM pulses WHERE org_id = $1),\n     ${FOLDS}\n     SELECT 1`,
    ),
    [orgId],
  );
}
