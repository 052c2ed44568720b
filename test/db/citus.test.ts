import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { COORDINATOR_TABLES, distributeOnCitus, REFERENCE_TABLES } from '../../src/db/citus.js';
import { sql } from '../../src/db/executor.js';
import { migrate, readMigrations } from '../../src/db/migrate.js';
import { orgIdsWithPulsesBetween } from '../../src/db/repositories/alerts.js';
import { claimDueDeliveries, insertEndpoint, insertEventWithDeliveries, settleDelivery } from '../../src/db/repositories/webhooks.js';
import { writePulses } from '../../src/db/pulse-writes.js';
import { loadDataset } from '../../src/domain/dataset.js';
import { moderatePulse } from '../../src/domain/moderation.js';
import { createCliDatabase, runCli } from '../helpers/cli.js';
import { createTestDatabase, TEST_CITUS_URL, type TestDatabase } from '../helpers/db.js';
import { operatorActor } from '../../src/domain/audit.js';

/**
 * The schema on a Citus cluster (docs/scaling.md). These run only against a Citus coordinator
 * (TEST_CITUS_URL, which also runs the whole suite on the cluster); CI has no Citus.
 */
const SKIP_REASON = TEST_CITUS_URL ? '' : ' (skipped: TEST_CITUS_URL is not set, and CI has no Citus)';

describe.skipIf(!TEST_CITUS_URL)(`the schema distributed on Citus${SKIP_REASON}`, () => {
  let t: TestDatabase;
  const tables = sql(
    'test.citus.tables',
    `SELECT c.relname AS table, p.partmethod AS method, p.repmodel AS replication, p.colocationid AS colocation
       FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
       LEFT JOIN pg_dist_partition p ON p.logicalrelid = c.oid
      WHERE n.nspname = current_schema() AND c.relkind = 'r'
      ORDER BY 1`,
  );
  let explained = 0;
  const explain = async (text: string, params: unknown[]) =>
    (await t.db.query<{ 'QUERY PLAN': string }>(sql(`test.citus.explain.${++explained}`, `EXPLAIN ${text}`), params)).map((r) => r['QUERY PLAN']).join('\n');

  beforeAll(async () => {
    t = await createTestDatabase(); // migrated and distributed (test/helpers/db.ts)
    await loadDataset(t.db, {
      organizations: ['org_c1', 'org_c2', 'org_c3'].map((id) => ({
        id,
        name: id,
        plan: 'business',
        createdAt: '2026-01-01T00:00:00.000Z',
        teams: [{ id: 'team_c', name: 'C', createdAt: '2026-01-01T00:00:00.000Z' }],
        pulses: [{ id: `${id}_p`, level: 4, moderationStatus: 'CLEAN' as const, subteamId: 'team_c', createdAt: '2026-11-02T10:00:00.000Z' }],
      })),
    });
  });
  afterAll(() => t.close());

  it('has reference tables, every organization table distributed by org_id in one colocation group, and service tables on the coordinator', async () => {
    const rows = await t.db.query<{ table: string; method: string | null; replication: string | null; colocation: number | null }>(tables);
    const role = (r: (typeof rows)[number]) =>
      r.method === 'h' ? 'distributed' : r.method === 'n' && r.replication === 't' ? 'reference' : r.method ? 'citus local' : 'coordinator';
    const roles = Object.fromEntries(rows.map((r) => [r.table, role(r)]));
    for (const table of REFERENCE_TABLES) expect(roles[table], table).toBe('reference');
    for (const table of COORDINATOR_TABLES) expect(roles[table], table).toBe('coordinator');
    const distributed = rows.filter((r) => role(r) === 'distributed');
    expect(distributed.map((r) => r.table)).toEqual(
      expect.arrayContaining([
        'teams',
        'pulses',
        'pulse_totals',
        'pulse_clean_week_stats',
        'webhook_deliveries',
        // Issue 51's round (migration 0024): colocated with the roster and the keys they refer to.
        'respondents',
        'checkin_keys',
        'checkin_round_slots',
        'checkin_round_members',
        'checkin_round_links',
        'checkin_outbox',
      ]),
    );
    expect(distributed.length + REFERENCE_TABLES.length + COORDINATOR_TABLES.length).toBe(rows.length);
    expect(new Set(distributed.map((r) => r.colocation)).size).toBe(1);
  });

  it('distributing again changes nothing', async () => {
    const steps = await distributeOnCitus(t.db);
    expect(steps.every((s) => s.state === 'already')).toBe(true);
  });

  it("routes an organization's reads to one shard", async () => {
    expect(await explain(`SELECT id FROM pulses WHERE org_id = $1 ORDER BY created_at DESC, id DESC LIMIT 51`, ['org_c1'])).toMatch(/Task Count: 1\b/);
    expect(await explain(`SELECT pulse_count FROM pulse_totals WHERE org_id = $1`, ['org_c1'])).toMatch(/Task Count: 1\b/);
  });

  it('a migration after distribution applies (trigger DDL, several statements), and its new table is distributed on the next run', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'cp-citus-migrations-'));
    try {
      for (const m of await readMigrations()) writeFileSync(join(dir, m.name), m.sql);
      writeFileSync(
        join(dir, '0999_citus_later.sql'),
        `CREATE TABLE later_notes (org_id text NOT NULL REFERENCES organizations (id), id text NOT NULL, PRIMARY KEY (org_id, id));
         CREATE FUNCTION later_noop() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RETURN NEW; END $$;
         CREATE TRIGGER later_noop BEFORE UPDATE ON pulses FOR EACH ROW EXECUTE FUNCTION later_noop();
         DROP TRIGGER later_noop ON pulses;
         DROP FUNCTION later_noop();
         CREATE INDEX later_pulses_level ON pulses (org_id, level);
         DROP INDEX later_pulses_level;`,
      );
      expect(await migrate(t.db, `${dir}/`)).toEqual(['0999_citus_later.sql']);
      const steps = await distributeOnCitus(t.db);
      expect(steps.filter((s) => s.state === 'made')).toEqual([{ table: 'later_notes', role: 'distributed', state: 'made' }]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('refuses a table without org_id that has no role', async () => {
    await t.db.exec('CREATE TABLE stray_settings (name text PRIMARY KEY)');
    try {
      await expect(distributeOnCitus(t.db)).rejects.toThrow(/stray_settings has no org_id/);
    } finally {
      await t.db.exec('DROP TABLE stray_settings');
    }
  });

  it("runs the background jobs' queries across organizations: the alert engine's list, webhook claims and outcomes", async () => {
    expect(await orgIdsWithPulsesBetween(t.db, '2026-11-02', '2026-11-09')).toEqual(['org_c1', 'org_c2', 'org_c3']);
    for (const org of ['org_c1', 'org_c2']) {
      await insertEndpoint(t.db, org, { id: `whe_${org}`, url: 'https://example.test/hook', secret: 'whsec_x', eventTypes: null, createdAt: new Date() });
      await insertEventWithDeliveries(t.db, org, { id: `msg_${org}`, type: 'action.created', payload: '{}', createdAt: new Date() });
    }
    const claimed = await claimDueDeliveries(t.db, 10, 60_000);
    expect(claimed.map((d) => d.orgId).sort()).toEqual(['org_c1', 'org_c2']);
    expect(await claimDueDeliveries(t.db, 10, 60_000)).toEqual([]); // leased
    const [a, b] = claimed;
    expect(await settleDelivery(t.db, a.orgId, a.id, a.attempts, { status: 'pending', retryInMs: 0, statusCode: 500, error: 'HTTP 500' })).toBe(true);
    expect(await settleDelivery(t.db, b.orgId, b.id, b.attempts, { status: 'succeeded', statusCode: 200, error: null })).toBe(true);
    const again = await claimDueDeliveries(t.db, 10, 60_000);
    expect(again.map((d) => [d.id, d.attempts])).toEqual([[a.id, 2]]);
  });

  it('moderates a pulse of a week not released yet, both ways (a guarded CTE that folded to false reached a worker unrouted)', async () => {
    const clean = sql('test.citus.clean', `SELECT clean_count FROM pulse_clean_week_stats WHERE org_id = $1 AND week = '2026-11-02' AND grp = 'team:team_c'`);
    expect(await moderatePulse(t.db, 'org_c2', 'org_c2_p', 'FLAGGED', operatorActor(), new Date())).toEqual({
      pulseId: 'org_c2_p',
      previous: 'CLEAN',
      current: 'FLAGGED',
      changed: true,
    });
    // The count is of statuses as shown (migration 0021): a moderation before the release moves none.
    expect(await t.db.query(clean, ['org_c2'])).toEqual([{ clean_count: 1 }]);
    expect(await moderatePulse(t.db, 'org_c2', 'org_c2_p', 'CLEAN', operatorActor(), new Date())).toEqual({
      pulseId: 'org_c2_p',
      previous: 'FLAGGED',
      current: 'CLEAN',
      changed: true,
    });
    expect(await t.db.query(clean, ['org_c2'])).toEqual([{ clean_count: 1 }]);
  });

  it('refuses a dataset whose alert or action exists as already in the database (Citus reported the unique violation of a copy as XX000)', async () => {
    const org = { id: 'org_c1', name: 'org_c1', plan: 'business', createdAt: '2026-01-01T00:00:00.000Z' };
    const at = '2026-11-03T10:00:00.000Z';
    const alert = { id: 'al_c', type: 'MOOD_DROP', message: 'Mood fell', weekISO: '2026-W45', subteamId: null, readAt: null, createdAt: at };
    const action = { id: 'ac_c', title: 'Retro', description: null, startDate: at, endDate: null, status: 'active' as const, subteamId: null, createdAt: at };
    await loadDataset(t.db, { organizations: [{ ...org, alerts: [alert], actions: [action] }] });
    await expect(loadDataset(t.db, { organizations: [{ ...org, alerts: [alert] }] })).rejects.toThrow(
      'organizations[0].alerts[0].id: an alert with id "al_c" already exists in organization "org_c1"',
    );
    await expect(loadDataset(t.db, { organizations: [{ ...org, actions: [action] }] })).rejects.toThrow(
      'organizations[0].actions[0].id: an action with id "ac_c" already exists in organization "org_c1"',
    );
  });

  it('writes pulses through the door on the cluster, the rollups in the same statement', async () => {
    const n = await t.db.transaction((tx) =>
      writePulses(
        tx,
        'org_c3',
        [
          { id: 'org_c3_p', level: 1, reason: null, comment: null, moderationStatus: 'CLEAN', subteamId: null, createdAt: '2026-11-03T10:00:00.000Z' },
          { id: 'org_c3_q', level: 2, reason: null, comment: null, moderationStatus: 'CLEAN', subteamId: 'team_c', createdAt: '2026-11-03T10:00:00.000Z' },
        ],
        { onExisting: 'skip' },
      ),
    );
    expect(n).toBe(1);
    const [r] = await t.db.query<{ n: number; s: number }>(
      sql('test.citus.totals', `SELECT pulse_count::int AS n, level_sum::int AS s FROM pulse_totals WHERE org_id = $1`),
      ['org_c3'],
    );
    expect(r).toEqual({ n: 2, s: 6 });
  });
});

describe.skipIf(Boolean(TEST_CITUS_URL))('climate-pulse citus distribute without Citus', () => {
  it('says the database is not a Citus coordinator, exit 1', { timeout: 120_000 }, async () => {
    const cdb = await createCliDatabase();
    try {
      const r = await runCli(['citus', 'distribute'], cdb.env);
      expect(r.code).toBe(1);
      expect(r.stderr.trim()).toBe(
        cdb.kind === 'pg'
          ? 'climate-pulse: the citus extension is not installed in this database (CREATE EXTENSION citus on the coordinator, with the workers added)'
          : 'climate-pulse: citus distribute needs DATABASE_URL naming the Citus coordinator',
      );
    } finally {
      await cdb.close();
    }
  });
});
