import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dbFailure } from '../../src/db/errors.js';
import { sql } from '../../src/db/executor.js';
import { PulseWriter, writePulses, type NewPulse } from '../../src/db/pulse-writes.js';
import { loadDataset } from '../../src/domain/dataset.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';

/**
 * The pulse door (src/db/pulse-writes.ts): what it counts, and the references it keeps now that
 * pulses have no foreign keys of their own (migration 0007: the rollups hold them).
 */
const ORG = 'org_door';
const pulse = (id: string, over: Partial<NewPulse> = {}): NewPulse => ({
  id,
  level: 3,
  reason: null,
  comment: null,
  moderationStatus: 'CLEAN',
  subteamId: 'team_d',
  createdAt: '2026-11-02T10:00:00.000Z',
  ...over,
});

describe('the pulse door', () => {
  let t: TestDatabase;
  const count = async (org = ORG) => {
    const [r] = await t.db.query<{ pulses: number; total: number | null }>(
      sql(
        'test.door.count',
        `SELECT (SELECT count(*)::int FROM pulses WHERE org_id = $1) AS pulses,
                                     (SELECT pulse_count::int FROM pulse_totals WHERE org_id = $1) AS total`,
      ),
      [org],
    );
    return r;
  };

  beforeAll(async () => {
    t = await createTestDatabase();
    await loadDataset(t.db, {
      organizations: [
        {
          id: ORG,
          name: 'Door',
          plan: 'business',
          createdAt: '2026-01-01T00:00:00.000Z',
          teams: [
            { id: 'team_d', name: 'D', createdAt: '2026-01-01T00:00:00.000Z' },
            { id: 'team_empty', name: 'Empty', createdAt: '2026-01-01T00:00:00.000Z' },
          ],
        },
        {
          id: 'org_other',
          name: 'Other',
          plan: 'business',
          createdAt: '2026-01-01T00:00:00.000Z',
          teams: [{ id: 'team_o', name: 'O', createdAt: '2026-01-01T00:00:00.000Z' }],
        },
      ],
    });
  });
  afterAll(() => t.close());

  it("counts only the rows it inserted: 'skip' leaves existing ids and repeats within the batch out", async () => {
    expect(await t.db.transaction((tx) => writePulses(tx, ORG, [pulse('a'), pulse('b', { subteamId: null })], { onExisting: 'skip' }))).toBe(2);
    const n = await t.db.transaction((tx) => writePulses(tx, ORG, [pulse('a', { level: 5 }), pulse('c'), pulse('c', { level: 1 })], { onExisting: 'skip' }));
    expect(n).toBe(1);
    expect(await count()).toEqual({ pulses: 3, total: 3 });
  });

  it('writes every text exactly as given, whatever characters it holds (its own array serializer)', async () => {
    const texts = ['"', '\\', '\\"', 'a,b', '{x}', 'NULL', 'null', '', ' ', '  padded  ', 'line\nbreak\ttab', 'é ü 💬', "it's", '\\N', 'a"b\\c"d'];
    const pulses = texts.map((text, i) => pulse(`txt_${i}_${text}`, { reason: text, comment: text }));
    expect(
      await t.db.transaction((tx) =>
        writePulses(
          tx,
          'org_other',
          pulses.map((p) => ({ ...p, subteamId: null })),
          { onExisting: 'fail' },
        ),
      ),
    ).toBe(texts.length);
    const rows = await t.db.query<{ id: string; reason: string | null; comment: string | null }>(
      sql('test.door.texts', `SELECT id, reason, comment FROM pulses WHERE org_id = 'org_other' AND id LIKE 'txt\\_%' ORDER BY id`),
      [],
    );
    expect(rows).toEqual(pulses.map((p) => ({ id: p.id, reason: p.reason, comment: p.comment })).sort((a, b) => (a.id < b.id ? -1 : 1)));
  });

  it("'fail' refuses an existing id with 23505 and writes nothing of the batch", async () => {
    const err = await t.db.transaction((tx) => writePulses(tx, ORG, [pulse('d'), pulse('a')], { onExisting: 'fail' })).catch((e: unknown) => e);
    expect(dbFailure(err)).toBe('unique_violation');
    expect(await count()).toEqual({ pulses: 3, total: 3 });
  });

  it('refuses a team of another organization or no team at all with 23503, writing nothing', async () => {
    for (const subteamId of ['team_o', 'team_missing']) {
      const err = await t.db
        .transaction((tx) => writePulses(tx, ORG, [pulse(`x_${subteamId}`, { subteamId })], { onExisting: 'skip' }))
        .catch((e: unknown) => e);
      expect(dbFailure(err), subteamId).toBe('foreign_key_violation');
      expect((err as { detail?: string }).detail ?? (err as Error).message).toMatch(/teams/);
    }
    expect(await count()).toEqual({ pulses: 3, total: 3 });
  });

  it('refuses an organization that does not exist with 23503', async () => {
    const err = await t.db
      .transaction((tx) => writePulses(tx, 'org_nobody', [pulse('n', { subteamId: null })], { onExisting: 'skip' }))
      .catch((e: unknown) => e);
    expect(dbFailure(err)).toBe('foreign_key_violation');
    expect(await count('org_nobody')).toEqual({ pulses: 0, total: null });
  });

  it('a team or an organization with pulses cannot be deleted or re-keyed; a team without pulses can', async () => {
    const attempts = [
      `DELETE FROM teams WHERE org_id = '${ORG}' AND id = 'team_d'`,
      `UPDATE teams SET id = 'team_renamed' WHERE org_id = '${ORG}' AND id = 'team_d'`,
      `DELETE FROM organizations WHERE id = '${ORG}'`,
      `UPDATE organizations SET id = 'org_renamed' WHERE id = '${ORG}'`,
    ];
    for (const text of attempts) {
      const err = await t.db.query(sql('test.door.orphan', text)).catch((e: unknown) => e);
      expect(dbFailure(err), text).toBe('foreign_key_violation');
    }
    await t.db.query(sql('test.door.delete_empty', `DELETE FROM teams WHERE org_id = $1 AND id = 'team_empty'`), [ORG]);
  });

  it('a stream of batches sends each while the caller prepares the next, and a failing batch fails the stream', async () => {
    const n = await t.db.transaction(async (tx) => {
      const w = new PulseWriter(tx, ORG, { onExisting: 'skip' });
      for (let b = 0; b < 5; b++) await w.write(Array.from({ length: 50 }, (_, i) => pulse(`s_${b}_${i}`, { level: 1 + (i % 5) })));
      await w.write([]);
      return w.finish();
    });
    expect(n).toBe(250);
    expect(await count()).toEqual({ pulses: 253, total: 253 });
    const err = await t.db
      .transaction(async (tx) => {
        const w = new PulseWriter(tx, ORG, { onExisting: 'fail' });
        await w.write([pulse('f_1')]);
        await w.write([pulse('a')]);
        await w.write([pulse('f_2')]);
        return w.finish();
      })
      .catch((e: unknown) => e);
    expect(dbFailure(err)).toBe('unique_violation');
    expect(await count()).toEqual({ pulses: 253, total: 253 });
  });
  it('concurrent batches of one organization sharing days, weeks and teams all commit: no deadlock, exact rollups', async () => {
    // Live ingestion with four connections deadlocked (40P01) when two batches upserted shared
    // rollup rows in different hash orders; the door now upserts in key order.
    const org = 'org_concurrent';
    await loadDataset(t.db, {
      organizations: [
        {
          id: org,
          name: 'C',
          plan: 'business',
          createdAt: '2026-01-01T00:00:00.000Z',
          teams: Array.from({ length: 20 }, (_, k) => ({ id: `tc_${k}`, name: `C${k}`, createdAt: '2026-01-01T00:00:00.000Z' })),
        },
      ],
    });
    const t0 = Date.parse('2026-10-05T00:00:00.000Z');
    // Batches overlap in days, weeks and teams, each over its own number of them, so their groups
    // hash into tables of different sizes and come out in different orders.
    const batches = Array.from({ length: 48 }, (_, b) =>
      Array.from({ length: 250 }, (_, k) => {
        const i = b * 250 + k;
        const teams = 2 + ((b * 5) % 19);
        const days = 1 + ((b * 3) % 21);
        return pulse(`c_${i}`, {
          level: 1 + (i % 5),
          subteamId: `tc_${(k * 7) % teams}`,
          createdAt: new Date(t0 + ((k * 7919) % (days * 86_400)) * 1000).toISOString(),
        });
      }),
    );
    let next = 0;
    const failures: unknown[] = [];
    await Promise.all(
      Array.from({ length: 4 }, async () => {
        while (next < batches.length) {
          const batch = batches[next++];
          await t.db.transaction((tx) => writePulses(tx, org, batch, { onExisting: 'skip' })).catch((e: unknown) => failures.push(e));
        }
      }),
    );
    expect(failures).toEqual([]);
    expect(await count(org)).toEqual({ pulses: 48 * 250, total: 48 * 250 });
    const [weeks] = await t.db.query<{ n: number }>(sql('test.door.weeks', `SELECT sum(clean_count)::int AS n FROM pulse_clean_week_stats WHERE org_id = $1`), [
      org,
    ]);
    expect(weeks.n).toBe(48 * 250);
  });
});
