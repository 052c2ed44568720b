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

/** What a unique index guards, in the contract's words, keyed by constraint (index) name; `inOrg`: unique within an organization. */
const UNIQUE_THINGS: Record<string, { table: string; thing: string; field: 'id' | 'name' | 'key' | 'week'; inOrg: boolean }> = {
  organizations_pkey: { table: 'organizations', thing: 'an organization', field: 'id', inOrg: false },
  plans_pkey: { table: 'plans', thing: 'a plan', field: 'name', inOrg: false },
  api_keys_pkey: { table: 'api_keys', thing: 'an API key', field: 'id', inOrg: true },
  api_keys_by_hash: { table: 'api_keys', thing: 'this API key', field: 'key', inOrg: false },
  teams_pkey: { table: 'teams', thing: 'a team', field: 'id', inOrg: true },
  teams_unique_name: { table: 'teams', thing: 'a team', field: 'name', inOrg: true },
  pulses_pkey: { table: 'pulses', thing: 'a pulse', field: 'id', inOrg: true },
  alerts_pkey: { table: 'alerts', thing: 'an alert', field: 'id', inOrg: true },
  alerts_raised_once: { table: 'alerts', thing: 'an alert of this type for this week and group', field: 'week', inOrg: true },
  actions_pkey: { table: 'actions', thing: 'an action', field: 'id', inOrg: true },
  webhook_endpoints_pkey: { table: 'webhook_endpoints', thing: 'a webhook endpoint', field: 'id', inOrg: true },
  webhook_endpoints_by_id: { table: 'webhook_endpoints', thing: 'a webhook endpoint', field: 'id', inOrg: false },
};

export interface UniqueViolation {
  /** The table the index belongs to (a Citus shard's suffix dropped). */
  table: string;
  /** The kind of thing, with its article ("a pulse"), as the message names it. */
  thing: string;
  /** Which of its values must be unique. */
  field: 'id' | 'name' | 'key' | 'week' | 'unknown';
  /** That value as the client sent it; for `key`, the key's SHA-256 in hex, which no message shows. */
  value?: string;
  /** The organization, for what is unique within one. */
  orgId?: string;
  /** One sentence for the client: the thing, its id or name, its organization; no SQL, no driver text. */
  message: string;
}

/**
 * A unique violation in the contract's words (`a pulse with id "p_1" already exists in
 * organization "org_acme"`), or null when `err` is not one. The thing comes from the constraint's
 * name (a Citus shard's `_102008` suffix dropped), the value from the driver's detail, and only
 * when it splits without doubt: the detail lists values unquoted and ids may contain ", ", so
 * `orgId` (the caller's organization) says where the organization's value ends.
 */
export function uniqueViolation(err: unknown, orgId?: string): UniqueViolation | null {
  if (dbFailure(err) !== 'unique_violation') return null;
  const { constraint: c, detail, table: t, message } = err as { constraint?: unknown; detail?: unknown; table?: unknown; message?: unknown };
  // Citus relays a worker's violation without the constraint and table fields: its message names the shard's index.
  const constraint = typeof c === 'string' ? c : typeof message === 'string' ? /unique constraint "([^"]+)"/.exec(message)?.[1] : undefined;
  const known = constraint !== undefined ? UNIQUE_THINGS[constraint.replace(/_\d+$/, '')] : undefined;
  const table = typeof t === 'string' ? t.replace(/_\d+$/, '') : (known?.table ?? '');
  if (!known) return { table, thing: 'a record', field: 'unknown', message: 'a record with the same identity already exists' };
  const m = typeof detail === 'string' ? /^Key \((.+?)\)=\((.*)\) already exists\.$/s.exec(detail) : null;
  let value: string | undefined;
  let org = known.inOrg ? orgId : undefined;
  const columns = m ? m[1].split(', ') : [];
  if (m && columns.length === 1) value = m[2];
  else if (m && columns.length === 2 && columns[0] === 'org_id') {
    if (orgId !== undefined) value = m[2].startsWith(`${orgId}, `) ? m[2].slice(orgId.length + 2) : undefined;
    else if (m[2].split(', ').length === 2) [org, value] = m[2].split(', ');
  }
  if (known.field === 'key') value = value?.startsWith('\\x') ? value.slice(2) : undefined;
  let what: string;
  if (known.field === 'key' || known.field === 'week') what = known.thing;
  else if (value === undefined) what = `${known.thing} with this ${known.field}`;
  else what = `${known.thing} ${known.field === 'name' ? 'named' : 'with id'} ${JSON.stringify(value)}`;
  const where = org !== undefined ? ` in organization ${JSON.stringify(org)}` : '';
  return { table, thing: known.thing, field: known.field, value, orgId: org, message: `${what} already exists${where}` };
}
