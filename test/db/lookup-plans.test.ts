import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from '../../src/db/executor.js';
import { byIdsQuery } from '../../src/db/repositories/pulse-lookup.js';
import { listQuery, type PulseFilter } from '../../src/db/repositories/pulses.js';
import { createTestDatabase, TEST_CITUS_URL, type TestDatabase } from '../helpers/db.js';

/**
 * Prepared statements keep a generic plan made once, maybe while a table was empty. Live
 * ingestion's lookup of existing ids was planned on a new organization as a scan of all its pulses
 * filtered by the id array, and kept it: each batch of 1,000 read every pulse before it, and a
 * batch took 2.4 s after 40,000 pulses (the 818 pulses/s of the last benchmark). The lookup must
 * probe the primary key once per id in the plan made while pulses is empty.
 */
describe('the lookup of pulses by id (live ingestion)', () => {
  let t: TestDatabase;
  beforeAll(async () => {
    t = await createTestDatabase();
  });
  afterAll(() => t.close());

  // Citus plans a distributed statement per execution (it cannot make this one generic); there the
  // statement must keep answering past the plan cache's five custom plans, on the shard's primary key.
  it.runIf(TEST_CITUS_URL)('on Citus, answers through the prepared statement past five executions, by the shard primary key', async () => {
    const plan = await t.db.transaction(async (tx) => {
      for (let i = 0; i < 8; i++) expect(await tx.query(byIdsQuery, ['org_x', ['a', 'b']])).toEqual([]);
      const rows = await tx.query<{ 'QUERY PLAN': string }>(
        sql('test.plans.explain_citus', `EXPLAIN ${byIdsQuery.text.replace('$1', "'org_x'").replace('$2', "'{a,b}'")}`),
      );
      return rows.map((r) => r['QUERY PLAN']).join('\n');
    });
    expect(plan).toMatch(/Index (Only )?Scan using pulses_pkey_\d+/);
  });

  it.skipIf(TEST_CITUS_URL)('probes the primary key per id in a generic plan made while pulses is empty', async () => {
    const plan = await t.db.transaction(async (tx) => {
      await tx.query(sql('test.plans.generic', `SET LOCAL plan_cache_mode = force_generic_plan`));
      await tx.query(sql('test.plans.prepare', `PREPARE by_ids_generic (text, text[]) AS ${byIdsQuery.text}`));
      const rows = await tx.query<{ 'QUERY PLAN': string }>(sql('test.plans.explain', `EXPLAIN EXECUTE by_ids_generic ('org_x', '{a,b}')`));
      await tx.query(sql('test.plans.deallocate', `DEALLOCATE by_ids_generic`));
      return rows.map((r) => r['QUERY PLAN']).join('\n');
    });
    expect(plan).toMatch(/Index (Only )?Scan using pulses_pkey/);
    expect(plan).toMatch(/Index Cond: \(\(org_id = \$1\) AND \(id = w\.id\)\)/);
    expect(plan).not.toMatch(/Filter: \(id = ANY/);
  });
});

/**
 * Migration 0012: one index, pulses_page, serves every page of GET /pulses. Its team and level
 * filters are trailing key columns, checked on the index entry: a filtered page never reads the
 * rows of other teams or levels to skip them. (A plan with `Filter:` would read each row first.)
 * Since migration 0020 the index is in time order and pages read it backward, newest first.
 */
describe('the pages of GET /pulses (migration 0012)', () => {
  let t: TestDatabase;
  beforeAll(async () => {
    t = await createTestDatabase();
  });
  afterAll(() => t.close());

  const from = new Date('2026-10-01T00:00:00.000Z');
  const to = new Date('2026-11-01T00:00:00.000Z');
  const variants: [string, PulseFilter, RegExp[]][] = [
    ['no filter', { from, to, limit: 21 }, [/Index Cond: \(\(org_id = \$1\) AND \(created_at >= \$2\) AND \(created_at < \$3\)\)/]],
    ['a team', { from, to, limit: 21, subteamId: 'team_a' }, [/Index Cond: .*\(subteam_id = \$5\)/]],
    ['a level', { from, to, limit: 21, level: 3 }, [/Index Cond: .*\(level = \$5\)/]],
    [
      'a team and a level, after a cursor',
      { from, to, limit: 21, level: 3, subteamId: 'team_a', after: { createdAt: '2026-10-15T00:00:00.000Z', id: 'p_9' } },
      [/Index Cond: .*\(level = \$5\)/, /Index Cond: .*\(subteam_id = \$6\)/, /Index Cond: .*ROW\(created_at, id\) < ROW\(\$7, \$8\)/],
    ],
  ];
  it.skipIf(TEST_CITUS_URL).each(variants)('%s: a generic plan reads pulses_page in order and filters on the index entry', async (name, filter, conds) => {
    const { q } = listQuery(filter);
    const types = [
      'text',
      'timestamptz',
      'timestamptz',
      'int',
      ...(filter.level !== undefined ? ['smallint'] : []),
      ...(filter.subteamId !== undefined ? ['text'] : []),
      ...(filter.after ? ['timestamptz', 'text'] : []),
    ];
    const args = [
      "'org_x'",
      "'2026-10-01Z'",
      "'2026-11-01Z'",
      '21',
      ...(filter.level !== undefined ? ['3'] : []),
      ...(filter.subteamId !== undefined ? ["'team_a'"] : []),
      ...(filter.after ? ["'2026-10-15Z'", "'p_9'"] : []),
    ];
    const plan = await t.db.transaction(async (tx) => {
      await tx.query(sql('test.page_plans.generic', `SET LOCAL plan_cache_mode = force_generic_plan`));
      await tx.query(sql(`test.page_plans.prepare.${types.length}.${name.length}`, `PREPARE page_generic (${types.join(', ')}) AS ${q.text}`));
      const rows = await tx.query<{ 'QUERY PLAN': string }>(sql(`test.page_plans.explain.${name.length}`, `EXPLAIN EXECUTE page_generic (${args.join(', ')})`));
      await tx.query(sql('test.page_plans.deallocate', `DEALLOCATE page_generic`));
      return rows.map((r) => r['QUERY PLAN']).join('\n');
    });
    expect(plan).toMatch(/Index Scan Backward using pulses_page on pulses p/);
    for (const cond of conds) expect(plan).toMatch(cond);
    expect(plan).not.toMatch(/Sort/);
    expect(plan).not.toMatch(/Filter: .*(level|subteam_id) = /);
  });
});

/**
 * A prepared statement whose generic plan is costed above its custom plans is planned again on
 * every execution. GET /pulses joined teams for the team's name; on the bench's 1M-pulse
 * organization its generic plan (all the organization's teams materialized, filtered per row) never
 * won, so every page was planned anew, and planning the join took 0.64 ms for 0.1 ms of work. A
 * subquery per row planned fast but cost half as much again as the page. The page reads pulses
 * alone; the names come from src/domain/pulses.ts (TeamNames). Which plan the cache keeps depends
 * on the statistics; the shape of the statement does not, and that is what this checks.
 */
describe.skipIf(TEST_CITUS_URL)('the page of GET /pulses reads pulses alone', () => {
  let t: TestDatabase;
  beforeAll(async () => {
    t = await createTestDatabase();
  });
  afterAll(() => t.close());

  it('plans one index scan of pulses_page, no join and no subquery', async () => {
    const { q } = listQuery({ from: new Date('2026-10-01T00:00:00.000Z'), to: new Date('2026-11-01T00:00:00.000Z'), limit: 51 });
    const text = q.text.replace(/\$1/g, "'org_x'").replace('$2', "'2026-10-01Z'").replace('$3', "'2026-11-01Z'").replace('$4', '51');
    const plan = (await t.db.query<{ 'QUERY PLAN': string }>(sql('test.page_plans.shape', `EXPLAIN ${text}`))).map((r) => r['QUERY PLAN']).join('\n');
    expect(plan).toMatch(/^Limit .*\n\s+-> {2}Index Scan Backward using pulses_page on pulses p /);
    expect(plan).not.toMatch(/teams|SubPlan|Join|Memoize|Materialize/);
  });
});
