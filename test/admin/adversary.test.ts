import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from '../../src/db/executor.js';
import { listApiKeys } from '../../src/db/repositories/api-keys.js';
import { createApiKey, revokeOrgKey } from '../../src/domain/keys.js';
import { ApiError } from '../../src/contract/errors.js';
import { createAdminTest, type AdminTest } from './helpers.js';
import { operatorActor } from '../../src/domain/audit.js';

/** A small seeded generator, so a failure replays exactly. */
function rng(seed: number) {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 2 ** 32;
  };
}

describe('adversaries of the operator API', () => {
  let t: AdminTest;
  const ORGS = ['org_1', 'org_2', 'org_3'];
  beforeAll(async () => {
    t = await createAdminTest({
      dataset: {
        organizations: ORGS.map((id) => ({
          id,
          name: id,
          plan: 'business',
          createdAt: '2026-01-01T00:00:00.000Z',
          teams: [{ id: 'tm', name: 'T', createdAt: '2026-01-01T00:00:00.000Z' }],
        })),
      },
    });
  });
  afterAll(() => t.close());

  it('revocation never touches another organization, and an ambiguous prefix revokes nothing (seeded)', async () => {
    const random = rng(20261123);
    const pick = <T>(xs: T[]) => xs[Math.floor(random() * xs.length)];
    // Secrets from a tiny alphabet, so display prefixes collide within and across organizations.
    const keys: { orgId: string; id: string; prefix: string; revoked: boolean }[] = [];
    for (let i = 0; i < 40; i++) {
      const orgId = pick(ORGS);
      const secret = `cp_live_${pick(['aa', 'ab', 'ba'])}${pick(['x', 'y'])}${pick(['1', '2'])}${i.toString().padStart(4, '0')}zzzzzzzzzzzzzzzz`;
      const k = await createApiKey(t.db, orgId, { secret });
      keys.push({ orgId, id: k.id, prefix: k.prefix, revoked: false });
    }
    for (let round = 0; round < 120; round++) {
      const orgId = pick(ORGS);
      const target = pick(keys);
      // An id, a whole prefix or a start of one, of this or of another organization's key.
      const text = random() < 0.3 ? target.id : target.prefix.slice(0, 8 + Math.floor(random() * 7));
      const matches = keys.filter((k) => k.orgId === orgId && (k.id === text || k.prefix.startsWith(text)));
      const exact = matches.find((k) => k.id === text);
      let outcome: string;
      try {
        const r = await revokeOrgKey(t.db, orgId, text, operatorActor(), new Date());
        outcome = `revoked ${r.id}`;
      } catch (err) {
        if (!(err instanceof ApiError)) throw err;
        outcome = err.code;
      }
      const expected = exact
        ? `revoked ${exact.id}`
        : matches.length === 1
          ? `revoked ${matches[0].id}`
          : matches.length === 0
            ? 'not_found'
            : 'invalid_request';
      expect(outcome, `round ${round}: revoke ${JSON.stringify(text)} in ${orgId}`).toBe(expected);
      if (outcome.startsWith('revoked ')) keys.find((k) => k.id === outcome.slice(8))!.revoked = true;
      // The database agrees with the model for every organization after every round.
      for (const o of ORGS) {
        const stored = (await listApiKeys(t.db, o)).map((k) => `${k.id}:${k.revokedAt !== null}`).sort();
        expect(stored, `round ${round}, ${o}`).toEqual(
          keys
            .filter((k) => k.orgId === o)
            .map((k) => `${k.id}:${k.revoked}`)
            .sort(),
        );
      }
    }
  });

  it('a batch is all or nothing: random batches with bad, conflicting and repeated pulses leave exactly the model (seeded)', async () => {
    const random = rng(4242);
    const model = new Map<string, { level: number; createdAt: string }>();
    const seen = { bad: 0, conflict: 0, written: 0 };
    const at = (i: number) => new Date(Date.parse('2026-09-01T00:00:00.000Z') + i * 3_600_000).toISOString();
    for (let round = 0; round < 40; round++) {
      const size = 1 + Math.floor(random() * 30);
      const ids = new Set<number>();
      while (ids.size < size) ids.add(Math.floor(random() * 80));
      const batch: Record<string, unknown>[] = [...ids].map((n) => {
        const known = model.get(`q_${n}`);
        const level = known && random() < 0.85 ? known.level : 1 + Math.floor(random() * 5);
        return { id: `q_${n}`, level, moderationStatus: 'CLEAN', subteamId: random() < 0.2 ? 'tm' : null, createdAt: known?.createdAt ?? at(n) };
      });
      // Team is part of the fields: a known pulse re-sent with another team is a conflict too; keep it stable.
      for (const p of batch) {
        const known = model.get(p.id as string) as { level: number; createdAt: string; subteamId?: string | null } | undefined;
        if (known) p.subteamId = known.subteamId ?? null;
      }
      const badAt = random() < 0.25 ? Math.floor(random() * batch.length) : -1;
      if (badAt >= 0) batch[badAt] = { ...batch[badAt], level: 9 };
      const firstConflict = batch.findIndex((p, i) => i !== badAt && model.has(p.id as string) && model.get(p.id as string)!.level !== p.level);
      const res = await t.call('POST', '/admin/v1/organizations/org_2/pulses', { pulses: batch });
      if (badAt >= 0) {
        seen.bad++;
        expect(res.json(), `round ${round}`).toEqual({ error: { code: 'invalid_request', message: `Body field 'pulses[${badAt}].level' must be <= 5.` } });
      } else if (firstConflict >= 0) {
        seen.conflict++;
        expect(res.statusCode, `round ${round}`).toBe(409);
        expect(res.json().error.message).toMatch(new RegExp(`^pulses\\[${firstConflict}\\]: a pulse with id "${batch[firstConflict].id}"`));
      } else {
        seen.written++;
        const fresh = batch.filter((p) => !model.has(p.id as string));
        expect(res.json(), `round ${round}`).toEqual({ inserted: fresh.length, unchanged: batch.length - fresh.length, inFrozenWeeks: 0 });
        for (const p of fresh) model.set(p.id as string, { level: p.level as number, createdAt: p.createdAt as string, subteamId: p.subteamId } as never);
      }
      const rows = await t.db.query<{ id: string; level: number }>(sql('t.adv.rows', `SELECT id, level FROM pulses WHERE org_id = 'org_2' ORDER BY id`));
      expect(rows.map((r) => `${r.id}=${r.level}`).sort(), `round ${round}`).toEqual([...model].map(([id, p]) => `${id}=${p.level}`).sort());
      const [total] = await t.db.query<{ n: number; s: number }>(
        sql('t.adv.total', `SELECT pulse_count::int AS n, level_sum::int AS s FROM pulse_totals WHERE org_id = 'org_2'`),
      );
      expect(total ?? { n: 0, s: 0 }).toEqual({ n: model.size, s: [...model.values()].reduce((a, p) => a + p.level, 0) });
    }
    expect(model.size).toBeGreaterThan(30);
    expect(Math.min(seen.bad, seen.conflict, seen.written), JSON.stringify(seen)).toBeGreaterThan(3);
  });
});
