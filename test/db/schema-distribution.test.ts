import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from '../../src/db/executor.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';

/**
 * The schema stays distributable by organization (Citus): in every table that holds
 * organization data (it has an `org_id` column), every primary key, unique index and foreign
 * key includes `org_id`, so each one can be enforced inside one shard. The tables are listed
 * from the catalog at test time, so a table added by a later migration is checked too.
 * See docs/scaling.md.
 */

/**
 * The organization column per table: `org_id`, except the root table, keyed by its own id (a small
 * reference table under Citus, docs/scaling.md; foreign keys to it pair `org_id` with `id`).
 */
const DISTRIBUTION_COLUMN: Record<string, string> = { organizations: 'id' };

/** Known keys that do not include the organization, with the reason (docs/decisions.md, docs/scaling.md). */
const ALLOWED: Record<string, string> = {
  'member_invitations.member_invitations_by_token': "an invitation link names no organization; it is found by its token's hash; a reference table under Citus",
  'console_sessions.console_sessions_by_id': "a session cookie names no organization; it is found by its id's hash; a reference table under Citus",
  'member_passkeys.member_passkeys_by_credential':
    'a passkey sign-in names no organization before the authenticator answers; a passkey is found by its credential id; a reference table under Citus',
  'api_keys.api_keys_by_hash':
    'authentication finds a key by its hash before it knows the organization; under Citus api_keys becomes a reference table (small, read-mostly)',
  'sso_domains.sso_domains_verified':
    'a verified sign-in domain belongs to one organization in the whole service: the sign-in page routes an address to its IdP before it knows the organization; a reference table under Citus',
  'scim_tokens.scim_tokens_by_hash': "a SCIM request names no organization; its token is found by its hash, as an API key's; a reference table under Citus",
};

interface Key {
  table: string;
  name: string;
  kind: 'primary key' | 'unique index' | 'foreign key';
  columns: string[];
  refTable?: string;
  refColumns?: string[];
}

const listTables = sql(
  'test.schema.tables',
  `SELECT c.relname AS table,
          bool_or(a.attname = 'org_id') AS has_org_id
     FROM pg_class c
     JOIN pg_namespace n ON n.oid = c.relnamespace
     JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
    WHERE n.nspname = current_schema() AND c.relkind IN ('r', 'p')
    GROUP BY c.relname
    ORDER BY c.relname`,
);

/** Primary keys and unique indexes (unique constraints are backed by one), with their key columns; expressions show as null. */
const listUniqueIndexes = sql(
  'test.schema.unique_indexes',
  `SELECT t.relname AS table, i.relname AS name, x.indisprimary AS primary,
          array(SELECT a.attname
                  FROM unnest(x.indkey[0:x.indnkeyatts - 1]) k(attnum)
                  LEFT JOIN pg_attribute a ON a.attrelid = t.oid AND a.attnum = k.attnum) AS columns
     FROM pg_index x
     JOIN pg_class i ON i.oid = x.indexrelid
     JOIN pg_class t ON t.oid = x.indrelid
     JOIN pg_namespace n ON n.oid = t.relnamespace
    WHERE n.nspname = current_schema() AND x.indisunique
    ORDER BY 1, 2`,
);

const listForeignKeys = sql(
  'test.schema.foreign_keys',
  `SELECT t.relname AS table, con.conname AS name, r.relname AS ref_table,
          array(SELECT a.attname FROM unnest(con.conkey) k(attnum)
                  JOIN pg_attribute a ON a.attrelid = con.conrelid AND a.attnum = k.attnum) AS columns,
          array(SELECT a.attname FROM unnest(con.confkey) k(attnum)
                  JOIN pg_attribute a ON a.attrelid = con.confrelid AND a.attnum = k.attnum) AS ref_columns
     FROM pg_constraint con
     JOIN pg_class t ON t.oid = con.conrelid
     JOIN pg_class r ON r.oid = con.confrelid
     JOIN pg_namespace n ON n.oid = t.relnamespace
    WHERE n.nspname = current_schema() AND con.contype = 'f'
    ORDER BY 1, 2`,
);

/** Arrays of names come back as arrays (pg) or as '{a,b}' text on some paths; accept both. */
const names = (v: unknown): string[] =>
  Array.isArray(v)
    ? v.map((x) => (x === null ? '(expression)' : String(x)))
    : String(v)
        .replace(/^\{|\}$/g, '')
        .split(',')
        .map((x) => (x === 'NULL' ? '(expression)' : x));

describe('schema distribution by organization', () => {
  let t: TestDatabase;
  let orgTables: Set<string>;
  let otherTables: string[];
  let keys: Key[];

  beforeAll(async () => {
    t = await createTestDatabase();
    const tables = await t.db.query<{ table: string; has_org_id: boolean }>(listTables);
    orgTables = new Set(tables.filter((r) => r.has_org_id || r.table in DISTRIBUTION_COLUMN).map((r) => r.table));
    otherTables = tables.filter((r) => !orgTables.has(r.table)).map((r) => r.table);
    const unique = await t.db.query<{ table: string; name: string; primary: boolean; columns: unknown }>(listUniqueIndexes);
    const fks = await t.db.query<{ table: string; name: string; ref_table: string; columns: unknown; ref_columns: unknown }>(listForeignKeys);
    keys = [
      ...unique.map((u): Key => ({ table: u.table, name: u.name, kind: u.primary ? 'primary key' : 'unique index', columns: names(u.columns) })),
      ...fks.map(
        (f): Key => ({ table: f.table, name: f.name, kind: 'foreign key', columns: names(f.columns), refTable: f.ref_table, refColumns: names(f.ref_columns) }),
      ),
    ];
  });
  afterAll(() => t.close());

  const distributionColumn = (table: string) => DISTRIBUTION_COLUMN[table] ?? 'org_id';

  it('finds the organization tables of the schema (the check is not vacuous)', () => {
    for (const table of ['organizations', 'api_keys', 'teams', 'pulses', 'pulse_totals', 'pulse_day_stats', 'alerts', 'actions', 'idempotency_records']) {
      expect(orgTables.has(table), table).toBe(true);
    }
    expect(otherTables).toEqual(expect.arrayContaining(['plans', 'service_secrets', 'schema_migrations']));
    expect(keys.filter((k) => k.table === 'pulses').map((k) => `${k.kind} ${k.columns.join(',')}`)).toEqual(['primary key org_id,id']);
    // The references of pulses are held by their rollups (migration 0007).
    expect(keys.filter((k) => k.table === 'pulse_team_day_stats').map((k) => `${k.kind} ${k.columns.join(',')} ${k.refTable ?? ''}`.trim())).toEqual(
      expect.arrayContaining(['foreign key org_id organizations', 'foreign key org_id,subteam_id teams', 'primary key org_id,subteam_id,day']),
    );
    expect(keys.find((k) => k.name === 'teams_unique_name')?.columns).toEqual(['org_id', '(expression)']);
  });

  it('every primary key, unique index and foreign key of an organization table includes org_id', () => {
    const offenders: string[] = [];
    for (const k of keys) {
      if (!orgTables.has(k.table) || `${k.table}.${k.name}` in ALLOWED) continue;
      const col = distributionColumn(k.table);
      // A foreign key to a reference table (no organization data) is fine: it is on every node.
      if (k.kind === 'foreign key' && !orgTables.has(k.refTable!)) continue;
      if (!k.columns.includes(col)) {
        offenders.push(`${k.table}: ${k.kind} ${k.name} (${k.columns.join(', ')}) does not include ${col}`);
        continue;
      }
      // A foreign key to another organization table must pair the two distribution columns,
      // so that the referenced row lives in the same shard.
      if (k.kind === 'foreign key') {
        const i = k.columns.indexOf(col);
        if (k.refColumns![i] !== distributionColumn(k.refTable!)) {
          offenders.push(`${k.table}: foreign key ${k.name} maps ${col} to ${k.refTable}.${k.refColumns![i]}, not to its ${distributionColumn(k.refTable!)}`);
        }
      }
    }
    expect(offenders).toEqual([]);
  });

  it('every allowed exception still exists (the allow-list does not rot)', () => {
    for (const entry of Object.keys(ALLOWED)) {
      const [table, name] = entry.split('.');
      expect(
        keys.some((k) => k.table === table && k.name === name),
        entry,
      ).toBe(true);
    }
  });

  it('a table without org_id (a reference table) has no foreign key into organization data', () => {
    // plans, service_secrets, schema_migrations: no organization data, replicated to every node under Citus.
    for (const k of keys.filter((x) => x.kind === 'foreign key' && !orgTables.has(x.table))) {
      expect(orgTables.has(k.refTable!), `${k.table}.${k.name} -> ${k.refTable}`).toBe(false);
    }
  });
});
