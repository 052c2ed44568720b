/**
 * `npm run prove-privacy -- --runs N [--seed S] [--max-ops K] [--twin-arrival CLEAN|FLAGGED]
 * [--twin pulse|checkin] [--minutes M] [--no-model] [--key-pool P]`: the twin-worlds property of
 * CONTRACT.md sections 5 and 12 (test/privacy/twin-worlds-lib.ts), run by hand on many more
 * scenarios than CI runs. The embedded database in memory, or PostgreSQL when DATABASE_URL is set
 * (in a schema of its own, dropped at the end). `--twin` keeps the twin comment an ingested pulse's
 * or a check-in answer's (default: either, half and half); `--minutes` stops cleanly after that time
 * and reports how many scenarios passed; `--no-model` leaves out the check-in model's own checks
 * (the twin worlds' comparison alone). Prints the seed, the counts, and the smallest failing scenario.
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
    twin: { type: 'string' },
    minutes: { type: 'string' },
    'no-model': { type: 'boolean', default: false },
    'key-pool': { type: 'string', default: '32' },
  },
});
const runs = Number(values.runs);
const seed = values.seed !== undefined ? Number(values.seed) : Date.now() % 2 ** 31;
const maxOps = Number(values['max-ops']);
const twinArrival = values['twin-arrival'];
const twin = values.twin;
const minutes = values.minutes !== undefined ? Number(values.minutes) : undefined;
const keyPool = Number(values['key-pool']);
if (
  !Number.isInteger(runs) ||
  runs < 1 ||
  !Number.isInteger(seed) ||
  !Number.isInteger(maxOps) ||
  maxOps < 1 ||
  (twinArrival !== undefined && twinArrival !== 'CLEAN' && twinArrival !== 'FLAGGED') ||
  (twin !== undefined && twin !== 'pulse' && twin !== 'checkin') ||
  (minutes !== undefined && !(minutes > 0)) ||
  !Number.isInteger(keyPool) ||
  keyPool < 1
) {
  console.error(
    'usage: npm run prove-privacy -- --runs N [--seed S] [--max-ops K] [--twin-arrival CLEAN|FLAGGED] [--twin pulse|checkin] [--minutes M] [--no-model] [--key-pool P]',
  );
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
const harness = await openTwinHarness(db, { model: !values['no-model'], keyPool });
const started = Date.now();
const seconds = () => Math.round((Date.now() - started) / 1000);
let done = 0;
let meaningful = 0;
let checkinTwins = 0;
let checkinMeaningful = 0;
const counts = () => `${meaningful} with the twin comment released; ${checkinTwins} with a check-in twin, ${checkinMeaningful} of them released`;
const timer = setInterval(() => console.log(`${done} of ${runs} scenarios (${counts()}), ${seconds()} s`), 30_000);
try {
  const arb = scenarioArb(maxOps, { twinArrival: twinArrival as 'CLEAN' | 'FLAGGED' | undefined, twin: twin as 'pulse' | 'checkin' | undefined });
  let shrinking = false;
  const property = fc.asyncProperty(arb, async (s) => {
    let twinReleased: boolean;
    try {
      ({ twinReleased } = await checkScenario(harness, s));
    } catch (err) {
      shrinking = true;
      throw err;
    }
    // Counted until the first failure: shrinking then runs smaller scenarios again.
    if (shrinking) return;
    done++;
    if (twinReleased) meaningful++;
    if (s.checkinTwin) {
      checkinTwins++;
      if (twinReleased) checkinMeaningful++;
    }
  });
  const result = await fc.check(property, {
    numRuns: runs,
    seed,
    ...(minutes ? { interruptAfterTimeLimit: minutes * 60_000, markInterruptAsFailure: false } : {}),
  });
  if (result.interrupted && !result.failed) {
    console.log(
      `stopped after ${minutes} minutes: ${done} scenarios passed of at most ${maxOps} operations on ${engine} (${counts()}), seed ${seed}, ${seconds()} s`,
    );
  } else if (result.failed) {
    console.error(fc.defaultReportMessage(result));
    console.error(result.errorInstance);
    console.error(`FAILED on ${engine}, seed ${seed}, after ${result.numRuns} scenarios (${seconds()} s); before it ${counts()}`);
    process.exitCode = 1;
  } else {
    console.log(`passed: ${result.numRuns} scenarios of at most ${maxOps} operations on ${engine} (${counts()}), seed ${seed}, ${seconds()} s`);
  }
} finally {
  clearInterval(timer);
  await harness.close();
  await db.close();
  await drop();
}
