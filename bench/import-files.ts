/**
 * The import bench's files (issue 14, issue 29): `rows` pulses one second apart from 2026-01-01,
 * 20 teams, as NDJSON for `import-pulses` and as CSV (with an `ORG` column to replace) for the
 * floor's COPY. "sorted" has them in time order; "shuffled" holds the same lines in a seeded random
 * order, as real exports come (per team, per survey, per id). Written once into `.test-tmp/bench-import/`.
 */
import { once } from 'node:events';
import { createWriteStream, existsSync, mkdirSync, renameSync, type WriteStream } from 'node:fs';
import { join } from 'node:path';

export interface ImportFile {
  ndjson: string;
  csv: string;
}

const ROOT = new URL('../', import.meta.url).pathname;
const T0 = Date.parse('2026-01-01T00:00:00.000Z');
/** The shuffle's seed: the same order in every run. */
export const SHUFFLE_SEED = 29;

function line(i: number): [ndjson: string, csv: string] {
  const id = `imp_${i}`;
  const level = 1 + (i % 5);
  const at = new Date(T0 + i * 1000).toISOString();
  const team = `team_${1 + (i % 20)}`;
  const comment = i % 3 === 0 ? `note ${i}` : null;
  return [
    `${JSON.stringify({ id, level, reason: null, comment, moderationStatus: 'CLEAN', subteamId: team, createdAt: at })}\n`,
    `ORG,${id},${level},,${comment ?? ''},CLEAN,${team},${at}\n`,
  ];
}

/** mulberry32: a small seeded generator, enough for a reproducible shuffle. */
function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

async function write(file: ImportFile, order: Iterable<number>): Promise<void> {
  const tmp = { ndjson: `${file.ndjson}.part`, csv: `${file.csv}.part` };
  const a = createWriteStream(tmp.ndjson);
  const b = createWriteStream(tmp.csv);
  const put = async (s: WriteStream, text: string) => {
    if (!s.write(text)) await once(s, 'drain');
  };
  for (const i of order) {
    const [n, c] = line(i);
    await put(a, n);
    await put(b, c);
  }
  a.end();
  b.end();
  await Promise.all([once(a, 'finish'), once(b, 'finish')]);
  renameSync(tmp.ndjson, file.ndjson);
  renameSync(tmp.csv, file.csv);
}

/** The sorted and the shuffled files of `rows` pulses, written when missing. */
export async function importFiles(rows: number, log: (...a: unknown[]) => void): Promise<{ sorted: ImportFile; shuffled: ImportFile }> {
  const dir = join(ROOT, '.test-tmp', 'bench-import');
  mkdirSync(dir, { recursive: true });
  const sorted = { ndjson: join(dir, `pulses-${rows}.ndjson`), csv: join(dir, `pulses-${rows}.csv`) };
  const shuffled = { ndjson: join(dir, `pulses-${rows}-shuffled-${SHUFFLE_SEED}.ndjson`), csv: join(dir, `pulses-${rows}-shuffled-${SHUFFLE_SEED}.csv`) };
  if (!existsSync(sorted.ndjson) || !existsSync(sorted.csv)) {
    log(`writing ${rows} rows in time order as NDJSON and CSV`);
    await write(
      sorted,
      (function* () {
        for (let i = 1; i <= rows; i++) yield i;
      })(),
    );
  }
  if (!existsSync(shuffled.ndjson) || !existsSync(shuffled.csv)) {
    log(`writing the same ${rows} rows in a seeded random order (seed ${SHUFFLE_SEED})`);
    const order = new Uint32Array(rows);
    for (let i = 0; i < rows; i++) order[i] = i + 1;
    const next = random(SHUFFLE_SEED);
    for (let i = rows - 1; i > 0; i--) {
      const j = Math.floor(next() * (i + 1));
      const x = order[i];
      order[i] = order[j];
      order[j] = x;
    }
    await write(shuffled, order);
  }
  return { sorted, shuffled };
}
