import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from '../../src/db/executor.js';
import { createAdminTest, type AdminTest } from './helpers.js';

/**
 * Issue 26, item 3: the order of comments inside a week was HMAC(secret, org id || 0x00 || pulse id).
 * A reviewer with the operator token erased an organization, created it again with the same id and
 * the same pulse ids carrying comments that name them, and read the victim's order back: 8 of 8
 * comments tied to one pulse. The order is now keyed by a salt made at random with the
 * organization's row (CONTRACT.md section 5), so a re-created organization gets another order.
 */
const ORG = 'org_mirrored';
const pulses = (text: (i: number) => string) =>
  Array.from({ length: 8 }, (_, i) => ({
    id: `m_${i}`,
    level: 3,
    reason: null,
    comment: text(i),
    moderationStatus: 'CLEAN',
    subteamId: null,
    createdAt: new Date(Date.parse('2026-10-05T08:00:00.000Z') + i * 3_600_000).toISOString(),
  }));
const saltOf = sql('test.order_salt', `SELECT order_salt FROM organizations WHERE id = $1`);

describe('an organization erased and created again does not mirror the old order', () => {
  let t: AdminTest;
  beforeAll(async () => {
    t = await createAdminTest();
  });
  afterAll(() => t.close());

  async function createWithPulses(text: (i: number) => string): Promise<{ order: string[]; salt: Buffer }> {
    expect((await t.call('POST', '/admin/v1/organizations', { id: ORG, name: 'Mirror', plan: 'business' })).statusCode).toBe(201);
    const key = (await t.call('POST', `/admin/v1/organizations/${ORG}/keys`, { name: 'reader' })).json().key;
    expect((await t.call('POST', `/admin/v1/organizations/${ORG}/pulses`, { pulses: pulses(text) })).json()).toMatchObject({ inserted: 8 });
    const res = await t.app.inject({ method: 'GET', url: '/v1/comments?from=2026-10-05&to=2026-10-11', headers: { authorization: `Bearer ${key}` } });
    expect(res.statusCode).toBe(200);
    // Read last, so that a build without salts fails on the order first.
    const salt = await t.db.query<{ order_salt: Uint8Array }>(saltOf, [ORG]).then(
      ([row]) => Buffer.from(row.order_salt),
      () => Buffer.alloc(0),
    );
    return { order: res.json().items.map((c: { comment: string }) => c.comment.split(' ').pop()), salt };
  }

  it('the victim order and the mirror order differ, and each organization row has its own 128-bit salt', async () => {
    const victim = await createWithPulses((i) => `victim comment ${i}`);
    expect(victim.order.slice().sort()).toEqual(['0', '1', '2', '3', '4', '5', '6', '7']);
    expect((await t.call('DELETE', `/admin/v1/organizations/${ORG}?erase=true`)).statusCode).toBe(200);
    const mirror = await createWithPulses((i) => `mirror names m_${i} ${i}`);
    // The same ids in the same organization id now come in another order (equal by chance once in 40,320).
    expect(mirror.order).not.toEqual(victim.order);
    expect(mirror.salt.length).toBe(16);
    expect(victim.salt.length).toBe(16);
    expect(mirror.salt.equals(victim.salt)).toBe(false);
  });
});
