import { createReadStream, statSync } from 'node:fs';
import { StringDecoder } from 'node:string_decoder';
import { pipeline, Transform, type Readable } from 'node:stream';
import { setImmediate } from 'node:timers/promises';
import { parse as parseCsv } from 'csv-parse';
import { Type } from 'typebox';
import { Compile } from 'typebox/compile';
import type { DatabaseExecutor } from '../db/executor.js';
import { PulseImport, type NewPulse } from '../db/pulse-writes.js';
import { requireLiveOrg } from './orgs.js';
import { ApiError } from '../contract/errors.js';
import { canonicalDateTime } from '../contract/schemas/date-time.js';
import { uniqueViolation } from '../db/errors.js';
import { listTeamIds } from '../db/repositories/teams.js';
import { recordAudit, type Actor } from './audit.js';
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
   * for the database to finish the previous batch (written while the next batch is read: in abort
   * mode on a server, sorted and written by COPY; otherwise its rows in time order inserted and
   * folded by the pulse door, the others staged); the end (the last batch, then the importer's sums
   * folded into the rollups, or the staged rows moved in time order, and the audit row); the commit.
   */
  phases: { parseValidate: number; streamWait: number; finish: number; commit: number };
  /**
   * Imported rows whose ISO week had already released its comments: they are never released
   * (docs/privacy.md). In skip mode, rows whose id already existed are counted too.
   */
  pulsesInFrozenWeeks: number;
}

/** Staged rows moved in so far, of how many (the import's last phase). */
export interface MovingProgress {
  moved: number;
  staged: number;
}

export type ImportProgress = (bytes: number, total: number, rows: number, moving?: MovingProgress) => void;

export interface ImportOptions {
  orgId: string;
  file: string;
  format?: 'ndjson' | 'csv';
  onError: OnError;
  batchSize?: number;
  /**
   * Called with (bytes read, total bytes, rows) as the file is read, then, when rows out of time
   * order were staged, with `moving` after each chunk of them moved in.
   */
  progress?: ImportProgress;
  maxReportedProblems?: number;
  /** The longest NDJSON line or CSV record (IMPORT_MAX_LINE_BYTES); a longer one refuses the file. */
  maxLineBytes?: number;
  /** Aborting it stops the import between two rows; nothing is written. */
  signal?: AbortSignal;
}

/** IMPORT_MAX_LINE_BYTES's default: 16 times the longest valid row (a 10,000-character comment, escaped). */
export const DEFAULT_MAX_LINE_BYTES = 1024 * 1024;

/** A line (NDJSON) or record (CSV) over the cap: the whole file is refused, nothing is written. */
export class ImportLineTooLong extends ApiError {
  constructor(
    readonly line: number,
    readonly maxLineBytes: number,
    format: 'ndjson' | 'csv',
  ) {
    super(
      'invalid_request',
      format === 'csv'
        ? `the CSV record that starts on line ${line} is longer than ${maxLineBytes} bytes (IMPORT_MAX_LINE_BYTES); nothing was written`
        : `line ${line} is longer than ${maxLineBytes} bytes (IMPORT_MAX_LINE_BYTES); nothing was written`,
    );
  }
}

const LF = 0x0a;
const CR = 0x0d;
const QUOTE = 0x22;

/**
 * Follows an import file's bytes as they arrive and throws ImportLineTooLong as soon as the line
 * (NDJSON) or record (CSV, whose quoted fields may hold line breaks) being read passes the cap, so
 * nothing downstream ever buffers a longer one. Lines end as readline ends them (LF, CRLF, a lone
 * CR), so line numbers are the importer's. Scans with indexOf: a byte loop was ten times slower.
 */
export class LineLengthGuard {
  private line = 1;
  private startLine = 1;
  private length = 0;
  private quoted = false;
  private afterCr = false;

  constructor(
    private readonly format: 'ndjson' | 'csv',
    private readonly maxLineBytes: number,
  ) {}

  push(chunk: Uint8Array): void {
    const buf = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
    const end = buf.length;
    const next = (byte: number, from: number) => {
      const i = buf.indexOf(byte, from);
      return i < 0 ? end : i;
    };
    let lf = next(LF, 0);
    let cr = next(CR, 0);
    let quote = this.format === 'csv' ? next(QUOTE, 0) : end;
    let pos = 0;
    for (;;) {
      const at = Math.min(lf, cr, quote);
      if (at > pos) {
        this.afterCr = false;
        this.length += at - pos;
        if (this.length > this.maxLineBytes) throw new ImportLineTooLong(this.startLine, this.maxLineBytes, this.format);
      }
      if (at === end) return;
      if (at === quote) {
        this.quoted = !this.quoted; // "" inside a quoted field toggles twice
        this.afterCr = false;
        if (++this.length > this.maxLineBytes) throw new ImportLineTooLong(this.startLine, this.maxLineBytes, this.format);
        quote = next(QUOTE, at + 1);
      } else {
        if (at === cr || !this.afterCr) this.line++; // CRLF is one break
        this.afterCr = at === cr;
        if (this.quoted) this.length++;
        else {
          this.length = 0;
          this.startLine = this.line;
        }
        if (at === cr) cr = next(CR, at + 1);
        else lf = next(LF, at + 1);
      }
      pos = at + 1;
    }
  }
}

/**
 * The lines of a UTF-8 stream, broken at LF, CRLF or a lone CR (as readline breaks them). It reads
 * the next chunk only when the lines of the last one are taken: readline's iterator kept reading
 * while the import waited for the database, and the lines it queued meanwhile were most of the
 * importer's memory (and grew with the batch size).
 */
export async function* lines(input: AsyncIterable<Buffer | string>): AsyncGenerator<string> {
  const decoder = new StringDecoder('utf8');
  const BREAK = /\r\n|\r|\n/g; // its own per reader: two imports may read at once
  let rest = '';
  for await (const chunk of input) {
    const text = rest + (typeof chunk === 'string' ? chunk : decoder.write(chunk));
    let start = 0;
    BREAK.lastIndex = 0;
    for (let m = BREAK.exec(text); m; m = BREAK.exec(text)) {
      // A CR at the very end may be the first half of a CRLF: wait for the next chunk.
      if (m[0] === '\r' && m.index === text.length - 1) break;
      yield text.slice(start, m.index);
      start = m.index + m[0].length;
    }
    rest = text.slice(start);
  }
  rest += decoder.end();
  if (rest.endsWith('\r')) rest = rest.slice(0, -1);
  if (rest !== '') yield rest;
}

/**
 * Reads rows one at a time, with their line numbers, in bounded memory: a line or record longer
 * than maxLineBytes throws ImportLineTooLong before the reader holds it.
 */
async function* readRows(
  file: string,
  format: 'ndjson' | 'csv',
  maxLineBytes: number,
  onBytes: (n: number) => void,
): AsyncGenerator<{ line: number; row: unknown; error?: string }> {
  const stream = createReadStream(file);
  const guard = new LineLengthGuard(format, maxLineBytes);
  const checked = pipeline(
    stream,
    new Transform({
      transform(chunk: Buffer, _encoding, callback) {
        onBytes(chunk.length);
        try {
          guard.push(chunk);
          callback(null, chunk);
        } catch (err) {
          callback(err as Error);
        }
      },
    }),
    () => {}, // the error reaches the reader below, which throws it
  );
  try {
    if (format === 'ndjson') {
      let line = 0;
      for await (const text of lines(checked)) {
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
    yield* readCsvRows(checked, maxLineBytes);
  } finally {
    checked.destroy(); // a reader stopped early (an aborted import) closes the file
  }
}

async function* readCsvRows(input: Readable, maxLineBytes: number): AsyncGenerator<{ line: number; row: unknown; error?: string }> {
  // max_record_size (characters) never binds before the guard (bytes); it is the parser's own bound.
  const parser = input.pipe(parseCsv({ columns: true, relax_column_count: false, skip_empty_lines: true, info: true, max_record_size: maxLineBytes }));
  input.once('error', (err) => parser.destroy(err));
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
        row: {
          id: r.id,
          level,
          reason: blank(r.reason),
          comment: blank(r.comment),
          moderationStatus: r.moderationStatus,
          subteamId: blank(r.subteamId),
          createdAt: r.createdAt,
        },
      };
    }
  } catch (err) {
    if (err instanceof ImportLineTooLong) throw err;
    yield { line: 0, row: null, error: `CSV: ${(err as Error).message}` };
  }
}

const hasNul = (v: string | null | undefined) => v?.includes('\u0000');
const CANONICAL_TIME = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

export function validate(row: unknown, teams: Set<string>, seen: Set<string>): NewPulse | string {
  if (!checkRow.Check(row)) {
    const [e] = checkRow.Errors(row);
    const field = (e as { instancePath: string }).instancePath.replace(/^\//, '') || 'row';
    return `${field}: ${(e as { message: string }).message}`;
  }
  const r = row as {
    id: string;
    level: number;
    reason?: string | null;
    comment?: string | null;
    moderationStatus: 'CLEAN' | 'FLAGGED';
    subteamId?: string | null;
    createdAt: string;
  };
  if (r.subteamId != null && !teams.has(r.subteamId)) return `subteamId: unknown team ${JSON.stringify(r.subteamId)}`;
  if (seen.has(r.id)) return `id: duplicate id ${JSON.stringify(r.id)} in this file`;
  if (hasNul(r.id) || hasNul(r.reason) || hasNul(r.comment) || hasNul(r.subteamId)) return 'a value contains NUL';
  seen.add(r.id);
  return {
    id: r.id,
    level: r.level,
    reason: r.reason ?? null,
    comment: r.comment ?? null,
    moderationStatus: r.moderationStatus,
    // Already in the API's one form (most files are): kept as it is, not parsed and printed again.
    // Any other form was checked by the date-time format of RowSchema (the API's one rule).
    subteamId: r.subteamId ?? null,
    createdAt: CANONICAL_TIME.test(r.createdAt) ? r.createdAt : canonicalDateTime(r.createdAt),
  };
}

/** An import refused in abort mode: its summary lists every bad row. */
export class ImportAborted extends ApiError {
  constructor(readonly summary: ImportSummary) {
    super('invalid_request', `import aborted: ${summary.problems.length} bad row(s); nothing was written`);
  }
}

/**
 * Streams NDJSON or CSV pulses into one organization in one transaction. abort: the first bad
 * row dooms the file, every bad row is still reported, nothing is written. skip: bad rows and
 * ids already present are skipped and reported, the rest is written. The audit row (counts, the
 * format and the mode; never a file name or a row) is written in that transaction. The rows may
 * come in any order (PulseImport, docs/decisions.md, issue 29): in abort mode on a server each
 * batch is sorted and written by COPY, and the rollups are folded from sums kept by the importer;
 * otherwise rows that come in time order are written as they are read, the others are staged and
 * moved in time order at the end.
 */
export async function importPulses(db: DatabaseExecutor, opts: ImportOptions, actor: Actor, now: Date): Promise<ImportSummary> {
  const started = Date.now();
  const format = opts.format ?? (/\.csv$/i.test(opts.file) ? 'csv' : 'ndjson');
  const total = statSync(opts.file).size;
  // PGlite runs each batch's statement on the event loop: smaller batches keep every pause short (docs/decisions.md, issue 26).
  // On a server in abort mode, batches are sorted and folded at the end (PulseImport): larger ones
  // sweep the indexes in fewer passes; 10,000 kept the importer's memory where 5,000 had it.
  const batchSize = opts.batchSize ?? (db.kind === 'pglite' ? 1_000 : opts.onError === 'skip' ? 5_000 : 10_000);
  const maxProblems = opts.maxReportedProblems ?? 100;
  await requireLiveOrg(db, opts.orgId);
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
  const written = await db
    .transaction(async (tx) => {
      // Rows in time order go straight in; the others are staged and moved in time order at the end,
      // so the speed does not depend on the file's order (docs/decisions.md, issue 29).
      const writer = new PulseImport(tx, opts.orgId, { onExisting: opts.onError === 'skip' ? 'skip' : 'fail', shortStatements: db.kind === 'pglite' });
      let batch: NewPulse[] = [];
      const flush = async () => {
        const t = performance.now();
        await writer.write(batch);
        phases.streamWait += performance.now() - t;
        batch = [];
      };
      for await (const { line, row, error } of readRows(opts.file, format, opts.maxLineBytes ?? DEFAULT_MAX_LINE_BYTES, (n) => (bytes += n))) {
        opts.signal?.throwIfAborted();
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
      // Staged rows move in chunks of the batch size: on PGlite each is one short pause of the event
      // loop, and the loop turns between two (nothing else awaits I/O in between).
      const n = await writer.finish(batchSize, async (moved, staged) => {
        await setImmediate();
        opts.signal?.throwIfAborted();
        opts.progress?.(total, total, rows, { moved, staged });
      });
      const details = { imported: n, skipped: rows - n, rows, format, onError: opts.onError };
      await recordAudit(tx, opts.orgId, actor, { action: 'pulses.imported', target: { kind: 'pulses', id: null }, details }, now);
      finished = performance.now();
      phases.finish = finished - t;
      return n;
    })
    .catch((err: unknown) => {
      // An id already in the database (abort mode): said in the contract's words, never the driver's.
      const taken = uniqueViolation(err, opts.orgId);
      throw taken ? new ApiError('invalid_request', `import aborted, nothing was written: ${taken.message}`) : err;
    });
  phases.commit = performance.now() - finished;
  inFrozenWeeks = await frozenWeeks.count(db, opts.orgId);
  const out = summary(written, false);
  const existing = out.skipped - badRows;
  if (existing > 0) problems.push({ line: 0, message: `${existing} row(s) skipped: their id already exists` });
  return out;
}
