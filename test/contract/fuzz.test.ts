import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CI_SEED, fuzz, MUTATIONS, startTarget, type FuzzTarget } from './fuzz-lib.js';

/**
 * Contract fuzzing from the served document, with a fixed seed (`npm run fuzz -- --runs N` for
 * long runs with a random seed). Valid requests answer 200 (or the 409 the contract names for
 * a taken team name or a reused Idempotency-Key); every broken request answers its 400 (401 for a
 * broken Authorization) with the contract's code; every answer matches its documented status
 * and schema; nothing answers 5xx.
 */
describe('contract fuzzing', () => {
  let t: FuzzTarget;
  beforeAll(async () => {
    t = await startTarget();
  });
  afterAll(() => t.close());

  it('holds for every operation of /openapi.json, valid and broken', async () => {
    const result = await fuzz(t, { seed: CI_SEED, runs: RUNS });
    expect(result.failure, `seed ${result.seed}`).toBeUndefined();
    expect(result.ok).toBe(true);
    // The run reached every operation, both ways, and every kind of mutation.
    expect(Object.keys(result.stats.byOperation).sort()).toEqual(t.ops.map((o) => o.id).sort());
    for (const [op, n] of Object.entries(result.stats.byOperation)) {
      expect(n.valid, `${op} valid`).toBeGreaterThan(5);
      expect(n.invalid, `${op} invalid`).toBeGreaterThan(5);
    }
    for (const m of MUTATIONS) expect(result.stats.byKind[m] ?? 0, m).toBeGreaterThan(3);
    expect(result.stats.byKind['valid-next-page'] ?? 0).toBeGreaterThan(3);
    expect(result.stats.statuses['200']).toBeGreaterThan(RUNS / 3);
  }, 180_000);
});

const RUNS = 2500;
