/**
 * The one mapping of database failures (SQLSTATE codes of PostgreSQL and PGlite, and the
 * driver's network errors) to what the service does about them. Nothing else compares codes.
 */
export type DbFailure =
  /** A unique index refused the row (23505). */
  | 'unique_violation'
  /** A referenced row is missing, or a referenced row cannot go (23503). */
  | 'foreign_key_violation'
  /** A text value PostgreSQL cannot store: NUL, or not encodable (22021, 22P05). */
  | 'unstorable_text'
  /** Storage refuses writes: disk full (53100), read-only (25006), an I/O error (58030), or the embedded database's files. */
  | 'storage'
  /** The connection is gone: the server shut down or restarted (57P01, 57P03, class 08) or the network failed. */
  | 'connection_lost'
  /** The server cannot take the connection now: too many clients (53300), or the pool timed out waiting for one. */
  | 'unavailable'
  /** The embedded database's one connection is held by a long transaction (a file import): working, not down (src/db/pglite.ts). */
  | 'busy';

const BY_CODE: Record<string, DbFailure> = {
  '23505': 'unique_violation',
  '23503': 'foreign_key_violation',
  '22021': 'unstorable_text',
  '22P05': 'unstorable_text',
  '53100': 'storage',
  '25006': 'storage',
  '58030': 'storage',
  ENOSPC: 'storage',
  EROFS: 'storage',
  EDQUOT: 'storage',
  '57P01': 'connection_lost',
  '57P03': 'connection_lost',
  ECONNRESET: 'connection_lost',
  ECONNREFUSED: 'connection_lost',
  ETIMEDOUT: 'connection_lost',
  ENOTFOUND: 'connection_lost',
  '53300': 'unavailable',
  CP_DB_BUSY: 'busy',
};

export function dbFailure(err: unknown): DbFailure | null {
  if (!err || typeof err !== 'object') return null;
  const { code = '', message = '' } = err as { code?: unknown; message?: unknown };
  if (typeof code === 'string') {
    if (code in BY_CODE) return BY_CODE[code];
    if (code.startsWith('08')) return 'connection_lost';
  }
  // pg's own errors carry no code.
  if (typeof message === 'string') {
    if (/Connection terminated/i.test(message)) return 'connection_lost';
    if (/timeout exceeded when trying to connect/i.test(message)) return 'unavailable';
  }
  return null;
}

/** The database cannot answer now (retry later), as opposed to refusing this statement. */
export function isDatabaseUnavailable(err: unknown): boolean {
  const f = dbFailure(err);
  return f === 'connection_lost' || f === 'unavailable' || f === 'busy';
}
