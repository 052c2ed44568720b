import { createReadStream, statSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { parse as parseCsv } from 'csv-parse';
import { Type } from 'typebox';
import { Compile } from 'typebox/compile';
import type { DatabaseExecutor } from '../db/executor.js';
import { PulseWriter, type NewPulse } from '../db/pulse-writes.js';
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
   * for the database to finish the previous batch (each batch is one statement of the pulse door,
   * rows, indexes and rollups, written while the next batch is read); the last batch; the commit.
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

const hasNul = (v: string | null | undefined) => v != null && v.includes('\u0000');
const CANONICAL_TIME = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

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
  if (hasNul(r.id) || hasNul(r.reason) || hasNul(r.comment) || hasNul(r.subteamId)) return 'a value contains NUL';
  seen.add(r.id);
  return {
    id: r.id, level: r.level, reason: r.reason ?? null, comment: r.comment ?? null, moderationStatus: r.moderationStatus,
    // Already in the API's one form (most files are): kept as it is, not parsed and printed again.
    subteamId: r.subteamId ?? null, createdAt: CANONICAL_TIME.test(r.createdAt) ? r.createdAt : new Date(t).toISOString(),
  };
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
  // PGlite runs each batch's statement on the event loop: smaller batches keep every pause short (docs/decisions.md, issue 26).
  const batchSize = opts.batchSize ?? (db.kind === 'pglite' ? 1_000 : 5_000);
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
  const written = await db.transaction(async (tx) => {
    const writer = new PulseWriter(tx, opts.orgId, { onExisting: opts.onError === 'skip' ? 'skip' : 'fail' });
    let batch: NewPulse[] = [];
    const flush = async () => {
      const t = performance.now();
      await writer.write(batch);
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
    const n = await writer.finish();
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
