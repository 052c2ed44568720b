import { PGlite } from '@electric-sql/pglite';
import type { DatabaseExecutor, NamedQuery, Transaction } from './executor.js';

/**
 * The embedded database: the same PostgreSQL dialect compiled to WASM, in `dataDir`
 * (or in memory when no directory is given). One process at a time may open a directory.
 */
export class PgliteExecutor implements DatabaseExecutor {
  readonly kind = 'pglite' as const;

  private constructor(readonly db: PGlite) {}

  static async open(dataDir?: string): Promise<PgliteExecutor> {
    const db = dataDir ? new PGlite(dataDir) : new PGlite();
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
