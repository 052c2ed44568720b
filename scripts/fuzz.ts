// Long contract-fuzzing runs: `npm run fuzz -- [--api public|admin|both] [--runs 20000] [--seed N]`.
// public (the default) fuzzes /v1 from /openapi.json; admin fuzzes the operator API (/admin/v1)
// from its own document, GET /admin/v1/openapi.json; both runs one after the other, with the same
// seed. The CI runs of the same properties are test/contract/fuzz.test.ts and
// test/contract/fuzz-admin.test.ts (fixed seeds). Honours TEST_DATABASE_URL / TEST_REDIS_URL.
import { parseArgs } from 'node:util';
import { fuzzAdmin, startAdminTarget } from '../test/contract/fuzz-admin-lib.js';
import { fuzz, startTarget, type FuzzResult } from '../test/contract/fuzz-lib.js';

const { values } = parseArgs({ options: { api: { type: 'string', default: 'public' }, runs: { type: 'string', default: '2000' }, seed: { type: 'string' } } });
const runs = Number(values.runs);
const seed = values.seed !== undefined ? Number(values.seed) : Math.floor(Math.random() * 2 ** 31);
const apis = values.api === 'both' ? ['public', 'admin'] : [values.api];
if (!Number.isInteger(runs) || runs < 1 || !Number.isInteger(seed) || !apis.every((a) => a === 'public' || a === 'admin')) {
  console.error('usage: npm run fuzz -- [--api public|admin|both] [--runs N] [--seed S]');
  process.exit(2);
}

for (const api of apis) {
  console.log(`fuzzing the ${api} API: ${runs} runs with seed ${seed}`);
  const started = Date.now();
  let result: FuzzResult;
  if (api === 'admin') {
    const target = await startAdminTarget();
    try {
      result = await fuzzAdmin(target, { seed, runs });
    } finally {
      await target.close();
    }
  } else {
    const target = await startTarget();
    try {
      result = await fuzz(target, { seed, runs });
    } finally {
      await target.close();
    }
  }
  console.log(`${result.stats.runs} runs in ${((Date.now() - started) / 1000).toFixed(1)} s; answers by status: ${JSON.stringify(result.stats.statuses)}`);
  console.log(`cases: ${JSON.stringify(result.stats.byKind)}`);
  if (!result.ok) {
    console.error(`FAILED with seed ${seed} (replay: npm run fuzz -- --api ${api} --runs ${runs} --seed ${seed})\n${result.failure}`);
    process.exitCode = 1;
  } else {
    console.log(`ok (${api} API, seed ${seed})`);
  }
}
