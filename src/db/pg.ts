import { finished } from 'node:stream/promises';
import pg from 'pg';
import { from as copyFrom } from 'pg-copy-streams';
import { dbFailure } from './errors.js';
import { splitStatements } from './sql-script.js';
import { querySpan, transactionSpan } from '../telemetry/spans.js';
import type { DatabaseExecutor, NamedQuery, PoolStats, Transaction } from './executor.js';

export interface PgOptions {
  connectionString: string;
  max?: number;
  statementTimeoutMs?: number;
  application?: string;
}

/**
 * Citus relays a worker's error during COPY with SQLSTATE XX000 (routine ReportCopyError) and the
 * worker's message and detail: a unique violation gets its 23505 back, so that it is said in the
 * contract's words (src/db/errors.ts) as it is after an INSERT.
 */
function citusCopyError(err: unknown): unknown {
  const e = err as { code?: unknown; routine?: unknown; message?: unknown };
  if (
    e?.code === 'XX000' &&
    e.routine === 'ReportCopyError' &&
    typeof e.message === 'string' &&
    e.message.startsWith('duplicate key value violates unique constraint')
  ) {
    Object.assign(e, { code: '23505' });
  }
  return err;
}

/** timestamptz and dates come back as Date objects; int8 and numeric stay strings unless cast. */
export class PgExecutor implements DatabaseExecutor {
  readonly kind = 'pg' as const;
  readonly pool: pg.Pool;

  constructor(opts: PgOptions) {
    this.pool = new pg.Pool({
      connectionString: opts.connectionString,
      max: opts.max ?? 10,
      statement_timeout: opts.statementTimeoutMs,
      connectionTimeoutMillis: 5_000,
      application_name: opts.application ?? 'climate-pulse',
    });
    // An idle client that loses its server emits here; without a listener the process dies.
    this.pool.on('error', () => {});
  }

  async query<T>(q: NamedQuery, params: unknown[] = []): Promise<T[]> {
    const res = await querySpan(q.name, () => this.pool.query({ name: q.name, text: q.text, values: params }));
    return res.rows as T[];
  }

  transaction<T>(fn: (tx: Transaction) => Promise<T>): Promise<T> {
    return transactionSpan(() => this.inTransaction(fn));
  }

  private async inTransaction<T>(fn: (tx: Transaction) => Promise<T>): Promise<T> {
    const client = await this.pool.connect();
    // A checked-out client whose server goes away (a terminated backend, a restart) emits 'error'
    // besides failing its query; the pool listens only to idle clients, so without this the process dies.
    const onError = () => {};
    client.on('error', onError);
    const tx: Transaction = {
      async query<R>(q: NamedQuery, params: unknown[] = []) {
        const res = await querySpan(q.name, () => client.query({ name: q.name, text: q.text, values: params }));
        return res.rows as R[];
      },
      async exec(sqlText: string) {
        for (const statement of splitStatements(sqlText)) await client.query(statement);
      },
      async copyFrom(statement: string, data: string) {
        const stream = client.query(copyFrom(statement));
        stream.end(data);
        // 'finish' comes once the server has answered (ReadyForQuery), 'error' with its error.
        await finished(stream).catch((err: unknown) => {
          throw citusCopyError(err);
        });
        return stream.rowCount;
      },
    };
    let broken: unknown;
    try {
      await client.query('BEGIN');
      const out = await fn(tx);
      await client.query('COMMIT');
      return out;
    } catch (err) {
      broken = err;
      await client.query('ROLLBACK').catch(() => {});
      throw err;
    } finally {
      // A client whose connection failed must not go back to the pool (it keeps its listener: it may still emit).
      if (dbFailure(broken) === 'connection_lost') client.release(broken as Error);
      else {
        client.removeListener('error', onError);
        client.release();
      }
    }
  }

  /**
   * One statement per query string (src/db/sql-script.ts says why); a script of several runs in one
   * transaction, all or nothing, as one multi-statement string would.
   */
  async exec(sqlText: string): Promise<void> {
    const statements = splitStatements(sqlText);
    if (statements.length === 1) await this.pool.query(statements[0]);
    else if (statements.length > 1) await this.transaction((tx) => tx.exec(sqlText));
  }

  async close(): Promise<void> {
    await this.pool.end();
  }

  poolStats(): PoolStats {
    return { total: this.pool.totalCount, idle: this.pool.idleCount, waiting: this.pool.waitingCount };
  }
}
