import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from '../../src/db/executor.js';
import { byIdsQuery } from '../../src/db/repositories/pulse-lookup.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';

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

  it('probes the primary key per id in a generic plan made while pulses is empty', async () => {
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
