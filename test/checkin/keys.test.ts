import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readDataset } from '../fixtures/dataset.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { loadDataset } from '../../src/domain/dataset.js';
import { sql } from '../../src/db/executor.js';
import { serviceSecret } from '../../src/db/repositories/secrets.js';
import { CheckinKeys } from '../../src/domain/checkins/keys.js';

/**
 * A (team, week) key is made once: the openings of a round's first minute all wait for the key one
 * of them is making in this process (the check-in bench saw 50 openings each generate a 2048-bit
 * key), and a second process finds the one the database kept.
 */
describe('check-in keys made once', () => {
  let t: TestDatabase;
  beforeAll(async () => {
    t = await createTestDatabase();
    await loadDataset(t.db, readDataset());
  });
  afterAll(async () => t?.close());

  it('20 concurrent callers in one process, then another process: one key', async () => {
    const secret = await serviceSecret(t.db, 'checkin_key_seal');
    // Keys for real rounds only: a week that no round started gets none, whatever is asked.
    await expect(new CheckinKeys(secret).keyFor(t.db, 'org_acme', '2026-11-23', 'team_web')).rejects.toMatchObject({ statusCode: 404 });
    await t.db.query(sql('t.keys_round', `INSERT INTO checkin_rounds (org_id, week, started_at) VALUES ('org_acme', '2026-11-23', '2026-11-23T09:00:00Z')`));
    await t.db.query(
      sql(
        't.keys_slot',
        `INSERT INTO checkin_round_slots (org_id, week, team_slot, respondents, recent_joiners, capacity) VALUES ('org_acme', '2026-11-23', 'team_web', 5, 0, 5)`,
      ),
    );
    const one = new CheckinKeys(secret);
    const keys = await Promise.all(Array.from({ length: 20 }, () => one.keyFor(t.db, 'org_acme', '2026-11-23', 'team_web')));
    expect(new Set(keys.map((k) => k.id)).size).toBe(1);
    const other = await new CheckinKeys(secret).keyFor(t.db, 'org_acme', '2026-11-23', 'team_web');
    expect(other.id).toBe(keys[0].id);
    const [{ n }] = await t.db.query<{ n: number }>(sql('t.keys_made', `SELECT count(*)::int AS n FROM checkin_keys WHERE org_id = 'org_acme'`));
    expect(n).toBe(1);
    // Once made, a later caller reads it; nothing is left pending.
    expect((await one.keyFor(t.db, 'org_acme', '2026-11-23', 'team_web')).id).toBe(keys[0].id);
  });
});
