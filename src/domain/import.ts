import { createReadStream, statSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { parse as parseCsv } from 'csv-parse';
import { Type } from 'typebox';
import { Compile } from 'typebox/compile';
import { from as copyFrom } from 'pg-copy-streams';
import type { DatabaseExecutor } from '../db/executor.js';
import { sql } from '../db/executor.js';
import { PgExecutor } from '../db/pg.js';
import { insertPulses, type NewPulse } from '../db/repositories/pulses.js';
import { getOrg } from '../db/repositories/orgs.js';
import { listTeamIds } from '../db/repositories/teams.js';
import { FrozenWeekTally } from './comments.js';

const RowSchema = Type.Object(
  {
    id: Type.String({ minLength: 1, maxLength: 128 }),
    level: Type.Integer({ minimum: 1, maximum: 5 }),
    reason: Type.Optional(Type.Union([Type.String({ maxLength: 500 }), Type.Null()])),
    comment: Type.Optional(Type.Union([Type.String({ maxLength: 10_000 }), Type.Null()])),
    moderationStatus: Type.Union([Type.Literal('CLEAN'), Type.Literal('FLAGGED')]),
    subteamId: Type.Optional(Type.Union([Type.String({ minLength: 1, maxLength: 128 }), Type.Null()])),
    createdAt: Type.String({ format: 'date-time' }),
  },
  { additionalProperties: false },
);
const checkRow = Compile(RowSchema);
export const CSV_COLUMNS = ['id', 'level', 'reason', 'comment', 'moderationStatus', 'subteamId', 'createdAt'] as const;

export type OnError = 'abort' | 'skip';

export interface ImportProblem {
  line: number;
  message: string;
}

export interface ImportSummary {
  imported: number;
  skipped: number;
  rows: number;
  problems: ImportProblem[];
  /** True when nothing was written because of a bad row (abort mode). */
  aborted: boolean;
  seconds: number;
  rowsPerSecond: number;
  peakRssMb: number;
  /**
   * Where the time went, in seconds: reading, parsing and validating rows in this process; waiting
   * for the database while rows stream (it writes them as they come, indexes included); and the
   * end of the write (the last rows, the rollup statement trigger, and in skip mode the move
   * from the staging table), then the commit.
   */
  phases: { parseValidate: number; streamWait: number; finish: number; commit: number };
  /**
   * Imported rows whose ISO week had already released its comments: they are never released
   * (docs/privacy.md). In skip mode, rows whose id already existed are counted too.
   */
  pulsesInFrozenWeeks: number;
}

export interface ImportOptions {
  orgId: string;
  file: string;
  format?: 'ndjson' | 'csv';
  onError: OnError;
  batchSize?: number;
  /** Called with (bytes read, total bytes, rows) as the file is read. */
  progress?: (bytes: number, total: number, rows: number) => void;
  maxReportedProblems?: number;
}

/** Reads rows one at a time, with their line numbers, in bounded memory. */
async function* readRows(file: string, format: 'ndjson' | 'csv', onBytes: (n: number) => void): AsyncGenerator<{ line: number; row: unknown; error?: string }> {
  const stream = createReadStream(file);
  stream.on('data', (chunk) => onBytes(chunk.length));
  if (format === 'ndjson') {
    let line = 0;
    for await (const text of createInterface({ input: stream, crlfDelay: Infinity })) {
      line++;
      if (text.trim() === '') continue;
      try {
        yield { line, row: JSON.parse(text) };
      } catch {
        yield { line, row: null, error: 'not valid JSON' };
      }
    }
    return;
  }
  const parser = stream.pipe(parseCsv({ columns: true, relax_column_count: false, skip_empty_lines: true, info: true }));
  try {
    for await (const rec of parser as AsyncIterable<{ record: Record<string, string>; info: { lines: number } }>) {
      const r = rec.record;
      const unknown = Object.keys(r).filter((k) => !(CSV_COLUMNS as readonly string[]).includes(k));
      if (unknown.length) {
        yield { line: rec.info.lines, row: null, error: `unknown column ${JSON.stringify(unknown[0])}` };
        continue;
      }
      const level = /^\d+$/.test(r.level ?? '') ? Number(r.level) : r.level;
      const blank = (v: string | undefined) => (v === undefined || v === '' ? null : v);
      yield {
        line: rec.info.lines,
        row: { id: r.id, level, reason: blank(r.reason), comment: blank(r.comment), moderationStatus: r.moderationStatus, subteamId: blank(r.subteamId), createdAt: r.createdAt },
      };
    }
  } catch (err) {
    yield { line: 0, row: null, error: `CSV: ${(err as Error).message}` };
  }
}

export function validate(row: unknown, teams: Set<string>, seen: Set<string>): NewPulse | string {
  if (!checkRow.Check(row)) {
    const [e] = checkRow.Errors(row);
    const field = (e as { instancePath: string }).instancePath.replace(/^\//, '') || 'row';
    return `${field}: ${(e as { message: string }).message}`;
  }
  const r = row as { id: string; level: number; reason?: string | null; comment?: string | null; moderationStatus: 'CLEAN' | 'FLAGGED'; subteamId?: string | null; createdAt: string };
  const t = Date.parse(r.createdAt);
  if (Number.isNaN(t) || !/(Z|[+-]\d\d:\d\d)$/i.test(r.createdAt)) return 'createdAt: must be an RFC 3339 date-time with an offset or Z';
  if (r.subteamId != null && !teams.has(r.subteamId)) return `subteamId: unknown team ${JSON.stringify(r.subteamId)}`;
  if (seen.has(r.id)) return `id: duplicate id ${JSON.stringify(r.id)} in this file`;
  if (/\u0000/.test(`${r.id}${r.reason ?? ''}${r.comment ?? ''}${r.subteamId ?? ''}`)) return 'a value contains NUL';
  seen.add(r.id);
  return {
    id: r.id, level: r.level, reason: r.reason ?? null, comment: r.comment ?? null, moderationStatus: r.moderationStatus,
    subteamId: r.subteamId ?? null, createdAt: new Date(t).toISOString(),
  };
}

/** A writer of validated pulses inside one transaction: COPY on PostgreSQL, batched inserts on PGlite. */
interface Sink {
  write(rows: NewPulse[]): Promise<void>;
  /** Ends the writes; returns how many rows were inserted (existing ids are skipped in skip mode). */
  finish(): Promise<number>;
}

const csvField = (v: string | number | null) => (v === null ? '' : `"${String(v).replace(/"/g, '""')}"`);
const csvRow = (p: NewPulse) => [p.id, p.level, p.reason, p.comment, p.moderationStatus, p.subteamId, p.createdAt].map(csvField).join(',') + '\n';

/**
 * PostgreSQL: one COPY in one transaction. In abort mode straight into pulses (an id already in
 * the database fails the COPY, which is the abort wanted); in skip mode into a temporary table
 * first, then one INSERT ... ON CONFLICT DO NOTHING. Either way the rollup trigger is a
 * statement trigger, so it folds the whole import in once, at the end.
 */
async function withPgSink<T>(db: PgExecutor, orgId: string, onError: OnError, fn: (sink: Sink) => Promise<T>): Promise<T> {
  const direct = onError === 'abort';
  const client = await db.pool.connect();
  let copying: ReturnType<typeof copyFrom> | undefined;
  let done: Promise<void> | undefined;
  let copyError: Error | undefined; // the server failed the COPY (a duplicate id): nothing more may be written
  const guarded = (f: () => boolean | void) => {
    if (copyError) throw copyError;
    try {
      return f();
    } catch (err) {
      throw copyError ?? err;
    }
  };
  try {
    await client.query('BEGIN');
    await client.query('SET LOCAL statement_timeout = 0');
    let copySql: string;
    let prefix = '';
    if (direct) {
      copySql = `COPY pulses (org_id, id, level, reason, comment, moderation_status, subteam_id, created_at) FROM STDIN WITH (FORMAT csv, NULL '')`;
      prefix = csvField(orgId) + ',';
    } else {
      await client.query(`CREATE TEMP TABLE import_pulses (id text, level smallint, reason text, comment text, moderation_status text, subteam_id text, created_at timestamptz) ON COMMIT DROP`);
      copySql = `COPY import_pulses FROM STDIN WITH (FORMAT csv, NULL '')`;
    }
    const copy = client.query(copyFrom(copySql));
    copying = copy;
    done = new Promise<void>((resolve, reject) => {
      copy.on('finish', resolve);
      copy.on('error', (err) => {
        copyError = err;
        reject(err);
      });
    });
    done.catch(() => {}); // awaited by write() and finish(); an aborted COPY rejects it on purpose
    const sink: Sink = {
      async write(rows) {
        let text = '';
        for (const p of rows) text += prefix + csvRow(p);
        // A COPY the server failed (a duplicate id) never drains: its error ends the wait.
        if (!guarded(() => copy.write(text))) await Promise.race([new Promise((r) => copy.once('drain', r)), done]);
      },
      async finish() {
        guarded(() => void copy.end());
        await done;
        copying = undefined;
        if (direct) return copy.rowCount;
        const res = await client.query(
          `WITH ins AS (
             INSERT INTO pulses (org_id, id, level, reason, comment, moderation_status, subteam_id, created_at)
             SELECT $1, id, level, reason, comment, moderation_status, subteam_id, created_at FROM import_pulses
             ON CONFLICT (org_id, id) DO NOTHING
             RETURNING 1)
           SELECT count(*)::int AS n FROM ins`,
          [orgId],
        );
        return res.rows[0].n as number;
      },
    };
    const out = await fn(sink);
    await client.query('COMMIT');
    return out;
  } catch (err) {
    // A COPY still open must be failed first, or the connection waits for its end forever.
    if (copying && done && !copyError) {
      copying.destroy(new Error('import aborted'));
      await done.catch(() => {});
    }
    await client.query('ROLLBACK').catch(() => {});
    throw err;
  } finally {
    client.release(copyError !== undefined); // a connection whose COPY failed midway is not reused
  }
}

async function withSink<T>(db: DatabaseExecutor, orgId: string, onError: OnError, fn: (sink: Sink) => Promise<T>): Promise<T> {
  if (db instanceof PgExecutor) return withPgSink(db, orgId, onError, fn);
  const conflict = onError === 'skip' ? 'ON CONFLICT (org_id, id) DO NOTHING' : '';
  return db.transaction(async (tx) => {
    let inserted = 0;
    const insertSkipping = sql(
      'import.insert_skip',
      `WITH ins AS (
         INSERT INTO pulses (org_id, id, level, reason, comment, moderation_status, subteam_id, created_at)
         SELECT $1, * FROM unnest($2::text[], $3::smallint[], $4::text[], $5::text[], $6::text[], $7::text[], $8::timestamptz[])
         ${conflict} RETURNING 1)
       SELECT count(*)::int AS n FROM ins`,
    );
    const sink: Sink = {
      async write(rows) {
        if (onError === 'abort') {
          inserted += await insertPulses(tx, orgId, rows);
          return;
        }
        const [r] = await tx.query<{ n: number }>(insertSkipping, [
          orgId, rows.map((p) => p.id), rows.map((p) => p.level), rows.map((p) => p.reason), rows.map((p) => p.comment),
          rows.map((p) => p.moderationStatus), rows.map((p) => p.subteamId), rows.map((p) => p.createdAt),
        ]);
        inserted += r.n;
      },
      async finish() {
        return inserted;
      },
    };
    return fn(sink);
  });
}

export class ImportAborted extends Error {
  constructor(readonly summary: ImportSummary) {
    super(`import aborted: ${summary.problems.length} bad row(s); nothing was written`);
  }
}

/**
 * Streams NDJSON or CSV pulses into one organization in one transaction. abort: the first bad
 * row dooms the file, every bad row is still reported, nothing is written. skip: bad rows and
 * ids already present are skipped and reported, the rest is written.
 */
export async function importPulses(db: DatabaseExecutor, opts: ImportOptions): Promise<ImportSummary> {
  const started = Date.now();
  const format = opts.format ?? (/\.csv$/i.test(opts.file) ? 'csv' : 'ndjson');
  const total = statSync(opts.file).size;
  const batchSize = opts.batchSize ?? 5_000;
  const maxProblems = opts.maxReportedProblems ?? 100;
  if (!(await getOrg(db, opts.orgId))) throw new Error(`no organization ${JSON.stringify(opts.orgId)} (or it is deleted)`);
  const teams = await listTeamIds(db, opts.orgId);

  const problems: ImportProblem[] = [];
  let badRows = 0;
  let rows = 0;
  let bytes = 0;
  const seen = new Set<string>();
  const phases = { parseValidate: 0, streamWait: 0, finish: 0, commit: 0 };
  const round = (x: number) => Math.round(x) / 1000;
  const frozenWeeks = new FrozenWeekTally();
  let inFrozenWeeks = 0;
  const summary = (imported: number, aborted: boolean): ImportSummary => {
    const seconds = (Date.now() - started) / 1000;
    return {
      imported,
      skipped: rows - imported,
      rows,
      problems,
      aborted,
      seconds,
      rowsPerSecond: Math.round(imported / Math.max(seconds, 0.001)),
      peakRssMb: Math.round(process.resourceUsage().maxRSS / 1024),
      phases: { parseValidate: round(phases.parseValidate), streamWait: round(phases.streamWait), finish: round(phases.finish), commit: round(phases.commit) },
      pulsesInFrozenWeeks: inFrozenWeeks,
    };
  };
  const report = (line: number, message: string) => {
    badRows++;
    if (problems.length < maxProblems) problems.push({ line, message });
  };

  const loopStarted = performance.now();
  let finished = 0;
  const written = await withSink(db, opts.orgId, opts.onError, async (sink) => {
    let batch: NewPulse[] = [];
    const flush = async () => {
      const t = performance.now();
      await sink.write(batch);
      phases.streamWait += performance.now() - t;
      batch = [];
    };
    for await (const { line, row, error } of readRows(opts.file, format, (n) => (bytes += n))) {
      rows++;
      const result = error ? error : validate(row, teams, seen);
      if (typeof result === 'string') report(line, result);
      else if (!(opts.onError === 'abort' && badRows > 0)) {
        batch.push(result);
        frozenWeeks.add(result.createdAt);
      }
      if (batch.length >= batchSize) {
        await flush();
        opts.progress?.(bytes, total, rows);
      }
    }
    if (opts.onError === 'abort' && badRows > 0) throw new ImportAborted(summary(0, true));
    if (batch.length) await flush();
    phases.parseValidate = performance.now() - loopStarted - phases.streamWait;
    opts.progress?.(total, total, rows);
    const t = performance.now();
    const n = await sink.finish();
    finished = performance.now();
    phases.finish = finished - t;
    return n;
  });
  phases.commit = performance.now() - finished;
  inFrozenWeeks = await frozenWeeks.count(db, opts.orgId);
  const out = summary(written, false);
  const existing = out.skipped - badRows;
  if (existing > 0) problems.push({ line: 0, message: `${existing} row(s) skipped: their id already exists` });
  return out;
}
