// Long contract-fuzzing runs: `npm run fuzz -- --runs 20000 [--seed N]`. The CI run of the same
// property is test/contract/fuzz.test.ts (fixed seed). Honours TEST_DATABASE_URL / TEST_REDIS_URL.
import { parseArgs } from 'node:util';
import { fuzz, startTarget } from '../test/contract/fuzz-lib.js';

const { values } = parseArgs({ options: { runs: { type: 'string', default: '2000' }, seed: { type: 'string' } } });
const runs = Number(values.runs);
const seed = values.seed !== undefined ? Number(values.seed) : Math.floor(Math.random() * 2 ** 31);
if (!Number.isInteger(runs) || runs < 1 || !Number.isInteger(seed)) {
  console.error('usage: npm run fuzz -- [--runs N] [--seed S]');
  process.exit(2);
}

console.log(`fuzzing ${runs} runs with seed ${seed}`);
const target = await startTarget();
const started = Date.now();
try {
  const result = await fuzz(target, { seed, runs });
  console.log(`${result.stats.runs} runs in ${((Date.now() - started) / 1000).toFixed(1)} s; answers by status: ${JSON.stringify(result.stats.statuses)}`);
  console.log(`cases: ${JSON.stringify(result.stats.byKind)}`);
  if (!result.ok) {
    console.error(`FAILED with seed ${seed} (replay: npm run fuzz -- --runs ${runs} --seed ${seed})\n${result.failure}`);
    process.exitCode = 1;
  } else {
    console.log(`ok (seed ${seed})`);
  }
} finally {
  await target.close();
}
