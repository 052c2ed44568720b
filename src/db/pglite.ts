import { PGlite } from '@electric-sql/pglite';
import { NodeFS } from '@electric-sql/pglite/nodefs';
import type { DatabaseExecutor, NamedQuery, Transaction } from './executor.js';
import { initializeDataDir } from './pglite-init.js';

/**
 * Sized for one tenant-sized workload on a small machine (docs/decisions.md, issue 14): PGlite's
 * own defaults plus a smaller buffer pool. PGlite's default 128 MB pool is touched at start-up,
 * so it is resident from the first second; the data files are read through the OS page cache anyway.
 */
export const PGLITE_SETTINGS = { shared_buffers: '16MB', work_mem: '4MB' };
export const PGLITE_START_PARAMS = [
  // PGlite 0.5's defaults (PGlite.defaultStartParams), which passing startParams replaces.
  '--single', '-F', '-O', '-j', '-c', 'search_path=public', '-c', 'exit_on_error=false', '-c', 'log_checkpoints=false',
  '-c', 'max_worker_processes=0', '-c', 'max_parallel_workers=0', '-c', 'max_parallel_workers_per_gather=0',
  '-c', 'io_method=sync', '-c', 'max_parallel_maintenance_workers=0',
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

/** PGlite on `dataDir` (in memory without one), its files the owner's only. */
export function openPglite(dataDir?: string): PGlite {
  return dataDir ? new PGlite({ fs: new OwnerOnlyNodeFS(dataDir), startParams: PGLITE_START_PARAMS }) : new PGlite({ startParams: PGLITE_START_PARAMS });
}

/**
 * The embedded database: the same PostgreSQL dialect compiled to WASM, in `dataDir`
 * (or in memory when no directory is given). One process at a time may open a directory.
 */
export class PgliteExecutor implements DatabaseExecutor {
  readonly kind = 'pglite' as const;

  private constructor(readonly db: PGlite) {}

  /** An empty `dataDir` is initialized first, outside this process's WASM heap (src/db/pglite-init.ts). */
  static async open(dataDir?: string): Promise<PgliteExecutor> {
    if (dataDir) await initializeDataDir(dataDir);
    const db = openPglite(dataDir);
    await db.waitReady;
    return new PgliteExecutor(db);
  }

  async query<T>(q: NamedQuery, params: unknown[] = []): Promise<T[]> {
    const res = await this.db.query<T>(q.text, params);
    return res.rows;
  }

  async transaction<T>(fn: (tx: Transaction) => Promise<T>): Promise<T> {
    return this.db.transaction(async (t) => {
      const tx: Transaction = {
        async query<R>(q: NamedQuery, params: unknown[] = []) {
          const res = await t.query<R>(q.text, params);
          return res.rows;
        },
        async exec(sqlText: string) {
          await t.exec(sqlText);
        },
      };
      return fn(tx);
    });
  }

  async exec(sqlText: string): Promise<void> {
    await this.db.exec(sqlText);
  }

  async close(): Promise<void> {
    await this.db.close();
  }
}
