/**
 * The narrow port every repository talks to. SQL is written by hand, parameterized, and
 * carries a name: on PostgreSQL the name makes it a prepared statement, and in logs it
 * says which query ran.
 */
export interface NamedQuery {
  name: string;
  text: string;
}

export interface Queryable {
  query<T = Record<string, unknown>>(q: NamedQuery, params?: unknown[]): Promise<T[]>;
}

export interface Transaction extends Queryable {
  /** Runs a multi-statement script without parameters (migrations). */
  exec(sql: string): Promise<void>;
  /**
   * PostgreSQL (and Citus) only: runs `COPY ... FROM STDIN` with `data` in COPY's text format;
   * answers how many rows it wrote. The file import's batches (src/db/pulse-writes.ts) use it.
   */
  copyFrom?(statement: string, data: string): Promise<number>;
}

export interface DatabaseExecutor extends Queryable {
  readonly kind: 'pg' | 'pglite';
  /** Runs `fn` in one transaction; commits when it resolves, rolls back when it throws. */
  transaction<T>(fn: (tx: Transaction) => Promise<T>): Promise<T>;
  /** Runs a multi-statement script (migrations) without parameters. */
  exec(sql: string): Promise<void>;
  close(): Promise<void>;
  /** The embedded database on disk only: writes a consistent backup of it (a gzipped tar) to `out` (src/db/backup.ts). */
  backup?(out: import('node:stream').Writable): Promise<void>;
  /** Connections of the pool by state, for the metrics; absent on the embedded database (it has none). */
  poolStats?(): PoolStats;
}

export interface PoolStats {
  total: number;
  idle: number;
  waiting: number;
}

export function sql(name: string, text: string): NamedQuery {
  return { name, text };
}
