import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAdminTest, type AdminTest } from './helpers.js';

/**
 * Issue 26, item 2: re-sending an existing pulse with a guessed `comment` answered `unchanged` when
 * the guess was right and 409 pulse_conflict otherwise: 12 of 12 released comments were tied to
 * their pulses in 177 probes, and a comment never released was confirmed. Ingestion now never
 * compares (or reads) the comment (CONTRACT.md section 10): right and wrong guesses get the same
 * answer, and the stored comment stays.
 */
const ORG = 'org_oracle';
const KEY = 'cp_test_oracle_0123456789abcdef';
const pulse = (i: number, week: string) => ({
  id: `o_${i}`,
  level: 1 + (i % 5),
  reason: i % 3 ? 'workload' : null,
  comment: `secret words ${i}`,
  moderationStatus: 'CLEAN' as const,
  subteamId: null,
  createdAt: new Date(Date.parse(`${week}T08:00:00.000Z`) + i * 3_600_000).toISOString(),
});
const released = Array.from({ length: 6 }, (_, i) => pulse(i, '2026-10-05'));
const open = Array.from({ length: 3 }, (_, i) => pulse(10 + i, '2026-11-16'));

describe('ingestion is no comment oracle', () => {
  let t: AdminTest;
  beforeAll(async () => {
    t = await createAdminTest({
      dataset: {
        organizations: [
          { id: ORG, name: 'Oracle', plan: 'business', createdAt: '2026-01-01T00:00:00.000Z', apiKeys: [{ key: KEY }], pulses: [...released, ...open] },
        ],
      },
    });
  });
  afterAll(() => t.close());

  const comments = async () =>
    (await t.app.inject({ method: 'GET', url: '/v1/comments?from=2026-10-05&to=2026-10-11', headers: { authorization: `Bearer ${KEY}` } })).json();

  it('a re-sent pulse answers the same for the right comment, a wrong one, an empty one and none, released or not, and keeps its comment', async () => {
    const before = await comments();
    expect(before.items.map((c: { comment: string }) => c.comment).sort()).toEqual(released.map((p) => p.comment).sort());
    for (const p of [released[2], open[1]]) {
      const answers = [];
      for (const comment of [p.comment, 'a wrong guess', '', null]) {
        const res = await t.call('POST', `/admin/v1/organizations/${ORG}/pulses`, { pulses: [{ ...p, comment }] });
        answers.push({ status: res.statusCode, body: res.body });
      }
      expect(answers).toEqual(Array(4).fill({ status: 200, body: JSON.stringify({ inserted: 0, unchanged: 1, inFrozenWeeks: 0 }) }));
    }
    expect(await comments()).toEqual(before);
    const stored = await t.db.query<{ id: string; comment: string }>(
      { name: 'test.oracle.stored', text: `SELECT id, comment FROM pulses WHERE org_id = $1 AND id = ANY($2) ORDER BY id` },
      [ORG, ['o_11', 'o_2']],
    );
    expect(stored).toEqual([
      { id: 'o_11', comment: 'secret words 11' },
      { id: 'o_2', comment: 'secret words 2' },
    ]);
  });

  it('other fields are still compared: a changed level is 409 pulse_conflict', async () => {
    const res = await t.call('POST', `/admin/v1/organizations/${ORG}/pulses`, { pulses: [{ ...released[1], level: released[1].level === 5 ? 4 : 5 }] });
    expect(res.statusCode).toBe(409);
    expect(res.json()).toEqual({
      error: { code: 'pulse_conflict', message: 'pulses[0]: a pulse with id "o_1" already exists with other fields; pulses cannot be changed' },
    });
  });
});
