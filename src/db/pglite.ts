import { PGlite, types } from '@electric-sql/pglite';
import { NodeFS } from '@electric-sql/pglite/nodefs';
import type { Writable } from 'node:stream';
import { streamBackup } from './backup.js';
import type { DatabaseExecutor, NamedQuery, Transaction } from './executor.js';
import { initializeDataDir } from './pglite-init.js';
import { querySpan, transactionSpan } from '../telemetry/spans.js';

/**
 * Sized for one tenant-sized workload on a small machine (docs/decisions.md, issue 14): PGlite's
 * own defaults plus a smaller buffer pool. PGlite's default 128 MB pool is touched at start-up,
 * so it is resident from the first second; the data files are read through the OS page cache anyway.
 */
export const PGLITE_SETTINGS = { shared_buffers: '16MB', work_mem: '4MB' };
export const PGLITE_START_PARAMS = [
  // PGlite 0.5's defaults (PGlite.defaultStartParams), which passing startParams replaces.
  '--single',
  '-F',
  '-O',
  '-j',
  '-c',
  'search_path=public',
  '-c',
  'exit_on_error=false',
  '-c',
  'log_checkpoints=false',
  '-c',
  'max_worker_processes=0',
  '-c',
  'max_parallel_workers=0',
  '-c',
  'max_parallel_workers_per_gather=0',
  '-c',
  'io_method=sync',
  '-c',
  'max_parallel_maintenance_workers=0',
  ...Object.entries(PGLITE_SETTINGS).flatMap(([k, v]) => ['-c', `${k}=${v}`]),
];

type SetAttr = (target: unknown, attr: { mode?: number | null } & Record<string, unknown>) => void;
interface EmscriptenNodeFs {
  node_ops: { setattr: SetAttr };
  stream_ops: { setattr: SetAttr };
}

/**
 * The data directory's files on disk, with every mode PGlite sets cut to the owner's bits.
 * Emscripten creates a file and then chmods it to the mode PostgreSQL asked for (0644 for
 * pg_internal.init, while the server runs): a chmod, which the process umask does not narrow.
 * CONTRACT.md section 8 wants 0600 files and 0700 directories at all times, not only at rest.
 */
class OwnerOnlyNodeFS extends NodeFS {
  override async init(...args: Parameters<NodeFS['init']>) {
    const { emscriptenOpts } = await super.init(...args);
    const ownerOnly = (mod: { NODEFS: unknown }) => {
      const nodefs = mod.NODEFS as EmscriptenNodeFs;
      for (const ops of [nodefs.node_ops, nodefs.stream_ops]) {
        const setattr = ops.setattr;
        ops.setattr = (target, attr) => setattr(target, attr.mode == null ? attr : { ...attr, mode: attr.mode & ~0o077 });
      }
    };
    return { emscriptenOpts: { ...emscriptenOpts, preRun: [...(emscriptenOpts.preRun ?? []), ownerOnly as never] } };
  }
}

const TIMESTAMPTZ_TEXT = /^(\d{4,})-(\d\d)-(\d\d) (\d\d):(\d\d):(\d\d)(?:\.(\d+))?([+-])(\d\d)(?::(\d\d))?(?::(\d\d))?$/;

/**
 * A timestamptz as PostgreSQL writes it ('0001-03-01 10:00:00.123+00'), read exactly. PGlite's own
 * parser is `new Date(text)`, whose legacy parsing reads years 1 to 99 as 1950 to 2049 (and that one
 * as 2001-01-03): a pulse of 0001-01-01, which the API accepts (CONTRACT.md section 4), came back
 * from the embedded database as 2001, so sending it again was a 409 pulse_conflict. Digits past
 * the millisecond are dropped, as the API stores instants. Anything else (infinity, BC) is read as
 * PGlite reads it.
 */
export function parseTimestamptz(text: string): Date | number {
  const m = TIMESTAMPTZ_TEXT.exec(text);
  if (!m) return text === 'infinity' ? Infinity : text === '-infinity' ? -Infinity : new Date(text);
  const [, y, mo, d, h, mi, s, fraction = '', sign, oh, om = '0', os = '0'] = m;
  const t = new Date(0);
  t.setUTCFullYear(Number(y), Number(mo) - 1, Number(d));
  t.setUTCHours(Number(h), Number(mi), Number(s), Number(fraction.padEnd(3, '0').slice(0, 3)));
  const offsetMs = (Number(oh) * 3600 + Number(om) * 60 + Number(os)) * 1000;
  return new Date(t.getTime() + (sign === '-' ? offsetMs : -offsetMs));
}

const PGLITE_PARSERS = { [types.TIMESTAMPTZ]: parseTimestamptz };

/**
 * PGlite on `dataDir` (in memory without one), its files the owner's only. In memory, `loadDataDir`
 * (a `dumpDataDir` tarball) is the starting database instead of a new one (tests start from a
 * migrated one).
 */
export function openPglite(dataDir?: string, loadDataDir?: Blob): PGlite {
  return dataDir
    ? new PGlite({ fs: new OwnerOnlyNodeFS(dataDir), startParams: PGLITE_START_PARAMS, parsers: PGLITE_PARSERS })
    : new PGlite({ startParams: PGLITE_START_PARAMS, parsers: PGLITE_PARSERS, ...(loadDataDir ? { loadDataDir } : {}) });
}

/**
 * How long a caller waits behind another one that has held the connection for a while (a file
 * import, one transaction of a minute or more) before it is refused: then a request answers 503
 * service_unavailable with Retry-After within about a second instead of hanging until the commit
 * (docs/decisions.md, "Issue 26: public requests during an embedded import").
 */
export const CONNECTION_WAIT_MS = 1_000;
/** A holder this long is not a short query in a queue: one waiting behind it past the bound is refused. */
const LONG_HOLD_MS = 250;

/** The embedded database's one connection stayed taken by one holder past the wait bound. */
export class DatabaseBusyError extends Error {
  /** src/db/errors.ts maps it to 'busy'. */
  readonly code = 'CP_DB_BUSY';
  constructor() {
    super('the embedded database is busy with a long transaction (such as a file import); retry shortly');
  }
}

interface Waiter {
  admit(): void;
  timer?: NodeJS.Timeout;
}

/**
 * PGlite has one connection: a transaction holds it from BEGIN to COMMIT, and everyone else waits
 * (PGlite's own queue has no bound). Here callers take it first come, first served; one who has
 * waited `waitMs` while the current holder has held it LONG_HOLD_MS or more is refused. Short
 * queries queued behind each other still wait as long as they must: only a long holder makes
 * others fail, so a refusal comes between `waitMs` and `waitMs + LONG_HOLD_MS` after the call.
 */
class ConnectionGate {
  private taken = false;
  private heldSince = 0;
  private readonly queue: Waiter[] = [];

  constructor(private readonly waitMs: number) {}

  async run<T>(fn: () => Promise<T>): Promise<T> {
    await this.take();
    try {
      return await fn();
    } finally {
      this.give();
    }
  }

  private take(): Promise<void> {
    if (!this.taken) {
      this.taken = true;
      this.heldSince = performance.now();
      return Promise.resolve();
    }
    return new Promise((resolve, reject) => {
      const since = performance.now();
      const waiter: Waiter = {
        admit: () => {
          clearTimeout(waiter.timer);
          resolve();
        },
      };
      const check = () => {
        const now = performance.now();
        const left = Math.max(since + this.waitMs, this.heldSince + LONG_HOLD_MS) - now;
        if (left > 0) {
          waiter.timer = setTimeout(check, left);
          return;
        }
        const i = this.queue.indexOf(waiter);
        if (i < 0) return; // admitted meanwhile
        this.queue.splice(i, 1);
        reject(new DatabaseBusyError());
      };
      waiter.timer = setTimeout(check, this.waitMs);
      this.queue.push(waiter);
    });
  }

  private give() {
    const next = this.queue.shift();
    if (!next) {
      this.taken = false;
      return;
    }
    this.heldSince = performance.now();
    next.admit();
  }
}

/**
 * The embedded database: the same PostgreSQL dialect compiled to WASM, in `dataDir`
 * (or in memory when no directory is given). One process at a time may open a directory.
 */
export class PgliteExecutor implements DatabaseExecutor {
  readonly kind = 'pglite' as const;
  private readonly gate: ConnectionGate;

  private constructor(
    readonly db: PGlite,
    waitMs: number,
    /** The data directory on disk; undefined in memory. */
    readonly dataDir?: string,
  ) {
    this.gate = new ConnectionGate(waitMs);
    if (dataDir) this.backup = (out) => this.backupOf(dataDir, out);
  }

  /** On disk only (an in-memory database has nothing to back up): see backupOf. */
  readonly backup?: (out: Writable) => Promise<void>;

  /**
   * A backup of the data directory as a gzipped tar, taken while the server serves: the connection
   * is taken for pg_backup_start and pg_backup_stop only, the files stream in between
   * (src/db/backup.ts).
   */
  private async backupOf(dataDir: string, out: Writable): Promise<void> {
    await streamBackup(dataDir, async <T>(text: string) => this.gate.run(async () => (await this.db.query<T>(text)).rows), out);
  }

  /** An empty `dataDir` is initialized first, outside this process's WASM heap (src/db/pglite-init.ts). */
  static async open(dataDir?: string, opts: { waitMs?: number; loadDataDir?: Blob } = {}): Promise<PgliteExecutor> {
    if (dataDir) await initializeDataDir(dataDir);
    const db = openPglite(dataDir, opts.loadDataDir);
    await db.waitReady;
    return new PgliteExecutor(db, opts.waitMs ?? CONNECTION_WAIT_MS, dataDir);
  }

  async query<T>(q: NamedQuery, params: unknown[] = []): Promise<T[]> {
    // The span holds the wait for the one connection too.
    return querySpan(q.name, () => this.gate.run(async () => (await this.db.query<T>(q.text, params)).rows));
  }

  async transaction<T>(fn: (tx: Transaction) => Promise<T>): Promise<T> {
    return transactionSpan(() => this.inTransaction(fn));
  }

  private inTransaction<T>(fn: (tx: Transaction) => Promise<T>): Promise<T> {
    return this.gate.run(() =>
      this.db.transaction(async (t) => {
        const tx: Transaction = {
          async query<R>(q: NamedQuery, params: unknown[] = []) {
            const res = await querySpan(q.name, () => t.query<R>(q.text, params));
            return res.rows;
          },
          async exec(sqlText: string) {
            await t.exec(sqlText);
          },
        };
        return fn(tx);
      }),
    );
  }

  async exec(sqlText: string): Promise<void> {
    await this.gate.run(() => this.db.exec(sqlText));
  }

  async close(): Promise<void> {
    await this.db.close();
  }
}
