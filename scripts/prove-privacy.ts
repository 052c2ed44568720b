/**
 * `npm run prove-privacy -- --runs N [--seed S] [--max-ops K] [--twin-arrival CLEAN|FLAGGED]`: the twin-worlds property of
 * CONTRACT.md section 5 (test/privacy/twin-worlds-lib.ts), run by hand on many more scenarios than
 * CI runs. The embedded database in memory, or PostgreSQL when DATABASE_URL is set (in a schema of
 * its own, dropped at the end). Prints the seed, the counts, and the smallest failing scenario.
 */
import { randomBytes } from 'node:crypto';
import { parseArgs } from 'node:util';
import fc from 'fast-check';
import pg from 'pg';
import type { DatabaseExecutor } from '../src/db/executor.js';
import { migrate } from '../src/db/migrate.js';
import { PgExecutor } from '../src/db/pg.js';
import { PgliteExecutor } from '../src/db/pglite.js';
import { checkScenario, openTwinHarness, scenarioArb } from '../test/privacy/twin-worlds-lib.js';

const { values } = parseArgs({
  options: {
    runs: { type: 'string', default: '1000' },
    seed: { type: 'string' },
    'max-ops': { type: 'string', default: '30' },
    'twin-arrival': { type: 'string' },
  },
});
const runs = Number(values.runs);
const seed = values.seed !== undefined ? Number(values.seed) : Date.now() % 2 ** 31;
const maxOps = Number(values['max-ops']);
const twinArrival = values['twin-arrival'];
if (
  !Number.isInteger(runs) ||
  runs < 1 ||
  !Number.isInteger(seed) ||
  !Number.isInteger(maxOps) ||
  maxOps < 1 ||
  (twinArrival !== undefined && twinArrival !== 'CLEAN' && twinArrival !== 'FLAGGED')
) {
  console.error('usage: npm run prove-privacy -- --runs N [--seed S] [--max-ops K] [--twin-arrival CLEAN|FLAGGED]');
  process.exit(2);
}

let db: DatabaseExecutor;
let drop = async () => {};
const url = process.env.DATABASE_URL;
if (url) {
  const schema = `prove_${randomBytes(5).toString('hex')}`;
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  await admin.query(`CREATE SCHEMA ${schema}`);
  const u = new URL(url);
  u.searchParams.set('options', `-c search_path=${schema}`);
  db = new PgExecutor({ connectionString: u.toString(), max: 4 });
  drop = async () => {
    await admin.query(`DROP SCHEMA ${schema} CASCADE`);
    await admin.end();
  };
} else {
  db = await PgliteExecutor.open();
}
const engine = url ? 'PostgreSQL' : 'PGlite';
await migrate(db);
const harness = await openTwinHarness(db);
const started = Date.now();
const seconds = () => Math.round((Date.now() - started) / 1000);
let done = 0;
let meaningful = 0;
const timer = setInterval(() => console.log(`${done} of ${runs} scenarios (${meaningful} with the twin comment released), ${seconds()} s`), 30_000);
try {
  const property = fc.asyncProperty(scenarioArb(maxOps, { twinArrival: twinArrival as 'CLEAN' | 'FLAGGED' | undefined }), async (s) => {
    const { twinReleased } = await checkScenario(harness, s);
    done++;
    if (twinReleased) meaningful++;
  });
  const result = await fc.check(property, { numRuns: runs, seed });
  if (result.failed) {
    console.error(fc.defaultReportMessage(result));
    console.error(result.errorInstance);
    console.error(`FAILED on ${engine}, seed ${seed}, after ${result.numRuns} scenarios (${seconds()} s)`);
    process.exitCode = 1;
  } else {
    console.log(
      `passed: ${result.numRuns} scenarios of at most ${maxOps} operations on ${engine} (${meaningful} with the twin comment released), seed ${seed}, ${seconds()} s`,
    );
  }
} finally {
  clearInterval(timer);
  await harness.close();
  await db.close();
  await drop();
}
