import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from '../../src/db/executor.js';
import { byIdsQuery } from '../../src/db/repositories/pulse-lookup.js';
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
      const rows = await tx.query<{ 'QUERY PLAN': string }>(sql('test.plans.explain_citus', `EXPLAIN ${byIdsQuery.text.replace('$1', "'org_x'").replace('$2', "'{a,b}'")}`));
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
