import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from '../../src/db/executor.js';
import { loadDataset } from '../../src/domain/dataset.js';
import { importPulses } from '../../src/domain/import.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { operatorActor } from '../../src/domain/audit.js';

/**
 * The importer's write path (issue 14): on PostgreSQL, abort mode COPYs straight into pulses,
 * skip mode stages first. Either way the rollups stay exact and a failure writes nothing.
 */
describe('importPulses write path', () => {
  let t: TestDatabase;
  const dir = mkdtempSync(join(tmpdir(), 'cp-import-copy-'));
  const at = (i: number) => new Date(Date.parse('2026-03-01T00:00:00.000Z') + i * 61_000).toISOString();
  const line = (i: number) =>
    JSON.stringify({
      id: `q${i}`,
      level: 1 + (i % 5),
      comment: i % 4 === 0 ? `c,"${i}"` : null,
      moderationStatus: 'CLEAN',
      subteamId: i % 2 ? 'team_a' : null,
      createdAt: at(i),
    });
  const file = (name: string, ids: number[]) => {
    const f = join(dir, name);
    writeFileSync(f, `${ids.map(line).join('\n')}\n`);
    return f;
  };
  const range = (a: number, b: number) => Array.from({ length: b - a }, (_, i) => a + i);
  const levelSum = (ids: number[]) => ids.reduce((s, i) => s + 1 + (i % 5), 0);

  const counts = async () => {
    const [p] = await t.db.query<{ n: number; s: number }>(
      sql('test.count', `SELECT count(*)::int AS n, coalesce(sum(level), 0)::int AS s FROM pulses WHERE org_id = 'org_i'`),
    );
    const [tot] = await t.db.query<{ n: number; s: number }>(
      sql('test.totals', `SELECT pulse_count::int AS n, level_sum::int AS s FROM pulse_totals WHERE org_id = 'org_i'`),
    );
    const [min] = await t.db.query<{ n: number; s: number }>(
      sql('test.minutes', `SELECT sum(pulse_count)::int AS n, sum(level_sum)::int AS s FROM pulse_minute_stats WHERE org_id = 'org_i'`),
    );
    const [team] = await t.db.query<{ n: number }>(sql('test.teamdays', `SELECT sum(pulse_count)::int AS n FROM pulse_team_day_stats WHERE org_id = 'org_i'`));
    return { pulses: p, totals: tot, minutes: min, teamDays: team.n };
  };

  beforeAll(async () => {
    t = await createTestDatabase();
    await loadDataset(t.db, {
      organizations: [
        {
          id: 'org_i',
          name: 'I',
          plan: 'business',
          createdAt: '2026-01-01T00:00:00.000Z',
          teams: [{ id: 'team_a', name: 'A', createdAt: '2026-01-01T00:00:00.000Z' }],
        },
      ],
    });
  });
  afterAll(async () => {
    await t.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('imports in abort mode across several batches, with exact rollups and the time per phase', async () => {
    const ids = range(0, 2500);
    const s = await importPulses(t.db, { orgId: 'org_i', file: file('a.ndjson', ids), onError: 'abort', batchSize: 1000 }, operatorActor(), new Date());
    expect(s).toMatchObject({ imported: 2500, skipped: 0, rows: 2500, aborted: false, problems: [] });
    expect(Object.keys(s.phases)).toEqual(['parseValidate', 'streamWait', 'finish', 'commit']);
    expect(Object.values(s.phases).every((x) => x >= 0)).toBe(true);
    expect(await counts()).toEqual({
      pulses: { n: 2500, s: levelSum(ids) },
      totals: { n: 2500, s: levelSum(ids) },
      minutes: { n: 2500, s: levelSum(ids) },
      teamDays: 1250,
    });
  });

  it('an id already in the database aborts the whole file in abort mode, writing nothing, without hanging', async () => {
    const ids = [...range(2500, 4000), 10, ...range(4000, 6000)];
    const err = await importPulses(t.db, { orgId: 'org_i', file: file('b.ndjson', ids), onError: 'abort', batchSize: 500 }, operatorActor(), new Date()).catch(
      (e: unknown) => e,
    );
    // Said in the contract's words by the domain (issue 26, item 11; issue 31: no SQLSTATE above src/db/).
    expect(err).toMatchObject({
      code: 'invalid_request',
      message: expect.stringMatching(/^import aborted, nothing was written: a pulse with id "[^"]+" already exists/),
    });
    expect(await counts()).toEqual({
      pulses: { n: 2500, s: levelSum(range(0, 2500)) },
      totals: { n: 2500, s: levelSum(range(0, 2500)) },
      minutes: { n: 2500, s: levelSum(range(0, 2500)) },
      teamDays: 1250,
    });
  });

  it('skip mode writes the new rows and skips the existing ones, with exact rollups', async () => {
    const ids = [...range(2400, 2600)];
    const s = await importPulses(t.db, { orgId: 'org_i', file: file('c.ndjson', ids), onError: 'skip', batchSize: 64 }, operatorActor(), new Date());
    expect(s).toMatchObject({ imported: 100, skipped: 100, rows: 200, aborted: false });
    const all = range(0, 2600);
    expect(await counts()).toEqual({
      pulses: { n: 2600, s: levelSum(all) },
      totals: { n: 2600, s: levelSum(all) },
      minutes: { n: 2600, s: levelSum(all) },
      teamDays: 1300,
    });
  });
});
