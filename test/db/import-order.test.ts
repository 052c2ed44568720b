import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from '../../src/db/executor.js';
import { rebuildRollups, ROLLUP_TABLES } from '../../src/db/pulse-writes.js';
import type { Queryable } from '../../src/db/executor.js';
import { operatorActor } from '../../src/domain/audit.js';
import { CommentReleases } from '../../src/domain/comments.js';
import { loadDataset } from '../../src/domain/dataset.js';
import { importPulses, type ImportSummary } from '../../src/domain/import.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';

/**
 * Issue 29 ("Moving in"): an import's speed depended on the order of its rows (300k pulses: 4.35 s
 * in time order, 21.16 s shuffled), so the importer now writes rows that come in time order as
 * they come and stages the others, moving them in (created_at, id) order at the end. The outcome
 * must not depend on the order either: the same rows imported in time order, shuffled, newest
 * first and grouped by team, each into an organization of its own with the same history, give the
 * same pulses, the same rows in every rollup, the same summary and the same audit row; abort mode
 * reports the same bad rows and writes nothing, whatever the order.
 */

const N = 1500;
const TEAMS = ['team_a', 'team_b', 'team_c'];
const BASE = Date.parse('2026-03-02T00:00:00.000Z'); // a Monday
const FROZEN_WEEK = '2026-03-09'; // released before the imports: rows in it count in pulsesInFrozenWeeks
const ORDERS = ['sorted', 'shuffled', 'newest first', 'by team'] as const;
type Order = (typeof ORDERS)[number];
const orgOf = (order: Order) => `org_order_${order.replace(' ', '_')}`;

/** A fixed pseudo-random sequence (Park-Miller), as in rollups-property.test.ts. */
const prng = (seed: number) => () => (seed = (seed * 16807) % 2147483647) / 2147483647;

interface Row {
  id: string;
  level: number;
  reason: string | null;
  comment: string | null;
  moderationStatus: 'CLEAN' | 'FLAGGED';
  subteamId: string | null;
  createdAt: string;
}

/** N pulses over three weeks, on minute, hour, day and week edges; every seventh shares its instant with the previous one. */
function rows(): Row[] {
  const next = prng(29);
  const out: Row[] = [];
  let t = BASE;
  for (let i = 0; i < N; i++) {
    if (i % 7 !== 0) t = BASE + Math.floor(next() * 21 * 86_400) * 1000 + (i % 3 === 0 ? 999 : 0);
    const team = TEAMS[Math.floor(next() * 4)] ?? null;
    out.push({
      id: `p_${(i * 7919) % 100_003}`, // ids in neither time nor file order
      level: 1 + Math.floor(next() * 5),
      reason: i % 5 === 0 ? 'workload' : null,
      comment: i % 4 === 0 ? `note ${i}, "quoted"` : null,
      moderationStatus: i % 11 === 0 ? 'FLAGGED' : 'CLEAN',
      subteamId: team,
      createdAt: new Date(t).toISOString(),
    });
  }
  return out;
}

const byTime = (a: Row, b: Row) => (a.createdAt < b.createdAt ? -1 : a.createdAt > b.createdAt ? 1 : a.id < b.id ? -1 : a.id > b.id ? 1 : 0);

function ordered(all: Row[], order: Order): Row[] {
  const sorted = [...all].sort(byTime);
  if (order === 'sorted') return sorted;
  if (order === 'newest first') return sorted.reverse();
  if (order === 'by team') return [...TEAMS, null].flatMap((team) => sorted.filter((r) => r.subteamId === team));
  const next = prng(2029);
  const out = [...all];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(next() * (i + 1));
    [out[i], out[j]] = [out[j], out[i]];
  }
  return out;
}

/**
 * The file: the rows in the given order, with lines that stay where they are whatever the order
 * (bad rows, and a row whose id comes again later), so that line numbers are the same in every file.
 */
function fileLines(body: Row[], fixed: Map<number, string>): string[] {
  const lines: string[] = [];
  let k = 0;
  for (let line = 1; k < body.length || fixed.has(line); line++) lines.push(fixed.get(line) ?? JSON.stringify(body[k++]));
  return lines;
}

/** Pulses already in every organization: three of them come again in the file (skip mode counts them). */
const EXISTING: Row[] = [0, 1, 2, 3, 4].map((i) => ({
  id: `pre_${i}`,
  level: 3,
  reason: null,
  comment: `before ${i}`,
  moderationStatus: 'CLEAN',
  subteamId: 'team_a',
  createdAt: new Date(Date.parse(`${FROZEN_WEEK}T10:00:00.000Z`) + i * 3_600_000).toISOString(),
}));

const BAD = new Map<number, string>([
  [3, JSON.stringify({ id: 'twin', level: 2, moderationStatus: 'CLEAN', createdAt: '2026-03-05T08:00:00.000Z' })],
  [7, JSON.stringify({ id: 'bad_level', level: 9, moderationStatus: 'CLEAN', createdAt: '2026-03-05T08:00:00.000Z' })],
  [300, '{"id": "not json"'],
  [301, JSON.stringify({ id: 'bad_team', level: 2, moderationStatus: 'CLEAN', subteamId: 'team_zz', createdAt: '2026-03-05T08:00:00.000Z' })],
  [900, JSON.stringify({ id: 'twin', level: 4, moderationStatus: 'FLAGGED', createdAt: '2026-03-06T08:00:00.000Z' })],
]);

describe('an import gives the same outcome whatever the order of its rows (issue 29)', { timeout: 300_000 }, () => {
  let t: TestDatabase;
  const dir = mkdtempSync(join(tmpdir(), 'cp-import-order-'));
  const all = rows();
  // Skip mode: the rows, three pulses already stored, four bad lines.
  const withExisting = [...all, ...EXISTING.slice(1, 4)];
  const write = (name: string, lines: string[]) => {
    const f = join(dir, name);
    writeFileSync(f, `${lines.join('\n')}\n`);
    return f;
  };

  const pulses = (org: string) => t.db.query<Record<string, unknown>>(sql('test.order_pulses', `SELECT * FROM pulses WHERE org_id = $1 ORDER BY id`), [org]);
  /** Every rollup's rows of the organization, without its id, in one order. */
  const rollups = async (org: string, db: Queryable = t.db) => {
    const out: Record<string, string[]> = {};
    for (const table of ROLLUP_TABLES) {
      const got = await db.query<Record<string, unknown>>(sql(`test.order_${table}`, `SELECT * FROM ${table} WHERE org_id = $1`), [org]);
      out[table] = got.map(({ org_id: _, ...r }) => JSON.stringify(r, (_k, v: unknown) => (typeof v === 'bigint' ? String(v) : v))).sort();
    }
    return out;
  };
  const state = async (org: string) => ({ pulses: (await pulses(org)).map(({ org_id: _, ...p }) => p), rollups: await rollups(org) });
  const stable = (s: ImportSummary) => ({
    imported: s.imported,
    skipped: s.skipped,
    rows: s.rows,
    problems: s.problems,
    aborted: s.aborted,
    pulsesInFrozenWeeks: s.pulsesInFrozenWeeks,
  });

  beforeAll(async () => {
    t = await createTestDatabase();
    await loadDataset(t.db, {
      organizations: ORDERS.map((order) => ({
        id: orgOf(order),
        name: order,
        plan: 'business',
        createdAt: '2026-01-01T00:00:00.000Z',
        teams: TEAMS.map((id) => ({ id, name: id, createdAt: '2026-01-01T00:00:00.000Z' })),
        pulses: EXISTING,
      })),
    });
    const releases = new CommentReleases('import-order-secret-0123456789abcdef', 0);
    for (const order of ORDERS) await releases.ensureReleased(t.db, orgOf(order), FROZEN_WEEK, FROZEN_WEEK);
  });
  afterAll(async () => {
    await t.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('abort mode: the same bad rows, with the same line numbers, and nothing written, in every order', async () => {
    const before = await state(orgOf('sorted'));
    const outcomes = [];
    for (const order of ORDERS) {
      const file = write(`abort-bad-${order}.ndjson`, fileLines(ordered(all, order), BAD));
      const err = (await importPulses(t.db, { orgId: orgOf(order), file, onError: 'abort', batchSize: 100 }, operatorActor(), new Date()).catch(
        (e: unknown) => e,
      )) as { summary: ImportSummary };
      outcomes.push(stable(err.summary));
      expect(await state(orgOf(order))).toEqual(before);
    }
    expect(outcomes[0]).toEqual({
      imported: 0,
      skipped: N + 5,
      rows: N + 5,
      aborted: true,
      pulsesInFrozenWeeks: 0,
      problems: [
        { line: 7, message: 'level: must be <= 5' },
        { line: 300, message: 'not valid JSON' },
        { line: 301, message: 'subteamId: unknown team "team_zz"' },
        { line: 900, message: 'id: duplicate id "twin" in this file' },
      ],
    });
    for (const o of outcomes) expect(o).toEqual(outcomes[0]);
  });

  it('abort mode: an id already stored refuses the file with the same message, and nothing written, in every order', async () => {
    const before = await state(orgOf('sorted'));
    for (const order of ORDERS) {
      const file = write(
        `abort-existing-${order}.ndjson`,
        ordered([...all, EXISTING[2]], order).map((r) => JSON.stringify(r)),
      );
      const err = await importPulses(t.db, { orgId: orgOf(order), file, onError: 'abort', batchSize: 100 }, operatorActor(), new Date()).catch(
        (e: unknown) => e,
      );
      expect(err).toMatchObject({
        code: 'invalid_request',
        message: `import aborted, nothing was written: a pulse with id "pre_2" already exists in organization "${orgOf(order)}"`,
      });
      expect(await state(orgOf(order))).toEqual(before);
    }
  });

  it('abort mode: the same pulses and rollups in every order, every rollup as rebuilt from the pulses, every text kept as written', async () => {
    // On a server, abort mode writes each batch by COPY and folds sums kept by the importer (src/db/pulse-writes.ts).
    const hostile: Row[] = ['tab\there', 'line\nbreak', 'carriage\rreturn', 'back\\slash', '\\N', '\\.', '\\', 'ends with \\', 'é ✓ 😀', ' '].map(
      (text, i) => ({
        id: `text_${i}\t${text}`,
        level: 1 + (i % 5),
        reason: text,
        comment: text,
        moderationStatus: i % 3 ? 'CLEAN' : 'FLAGGED',
        subteamId: TEAMS[i % 4] ?? null,
        createdAt: new Date(BASE + i * 86_400_000 + 59_999).toISOString(),
      }),
    );
    const body = [...all, ...hostile];
    const abortOrg = (order: Order) => `${orgOf(order)}_abort`;
    await loadDataset(t.db, {
      organizations: ORDERS.map((order) => ({
        id: abortOrg(order),
        name: order,
        plan: 'business',
        createdAt: '2026-01-01T00:00:00.000Z',
        teams: TEAMS.map((id) => ({ id, name: id, createdAt: '2026-01-01T00:00:00.000Z' })),
        pulses: EXISTING,
      })),
    });
    const summaries: ReturnType<typeof stable>[] = [];
    for (const order of ORDERS) {
      const file = write(
        `abort-ok-${order}.ndjson`,
        ordered(body, order).map((r) => JSON.stringify(r)),
      );
      summaries.push(stable(await importPulses(t.db, { orgId: abortOrg(order), file, onError: 'abort', batchSize: 100 }, operatorActor(), new Date())));
    }
    expect(summaries[0]).toEqual({ imported: body.length, skipped: 0, rows: body.length, problems: [], aborted: false, pulsesInFrozenWeeks: 0 });
    for (const s of summaries) expect(s).toEqual(summaries[0]);

    const reference = await state(abortOrg('sorted'));
    expect(reference.pulses).toHaveLength(EXISTING.length + body.length);
    for (const order of ORDERS) {
      const got = await state(abortOrg(order));
      expect(got.pulses, order).toEqual(reference.pulses);
      for (const table of ROLLUP_TABLES) expect(got.rollups[table], `${order}: ${table}`).toEqual(reference.rollups[table]);
    }
    const stored = await t.db.query<Row & { reason: string; comment: string }>(
      sql('test.order_hostile', `SELECT id, reason, comment FROM pulses WHERE org_id = $1 AND id LIKE 'text\\_%' ORDER BY id`),
      [abortOrg('shuffled')],
    );
    expect(stored).toEqual(hostile.map((r) => ({ id: r.id, reason: r.reason, comment: r.comment })).sort((a, b) => (a.id < b.id ? -1 : 1)));
    // The rollups are right, not only equal: each is what a rebuild from the pulses gives.
    const rebuilt = await t.db
      .transaction(async (tx) => {
        await rebuildRollups(tx, abortOrg('shuffled'));
        throw Object.assign(new Error('roll back'), { rollups: await rollups(abortOrg('shuffled'), tx) });
      })
      .catch((e: { rollups: Record<string, string[]> }) => e.rollups);
    for (const table of ROLLUP_TABLES) expect(reference.rollups[table], table).toEqual(rebuilt[table]);
    expect(rebuilt.pulse_minute_stats.length).toBeGreaterThan(1000);
  });

  it('skip mode: the same pulses, the same rows in every rollup, the same summary and audit row, in every order', async () => {
    const summaries: ReturnType<typeof stable>[] = [];
    for (const order of ORDERS) {
      const file = write(`skip-${order}.ndjson`, fileLines(ordered(withExisting, order), BAD));
      summaries.push(stable(await importPulses(t.db, { orgId: orgOf(order), file, onError: 'skip', batchSize: 100 }, operatorActor(), new Date())));
    }
    // Every row of the file in the released week, the three already stored included.
    const inFrozenWeek = withExisting.filter((r) => r.createdAt >= FROZEN_WEEK && r.createdAt < '2026-03-16').length;
    expect(summaries[0]).toEqual({
      imported: N + 1,
      skipped: 3 + 4,
      rows: N + 3 + 5,
      aborted: false,
      pulsesInFrozenWeeks: inFrozenWeek,
      problems: [
        { line: 7, message: 'level: must be <= 5' },
        { line: 300, message: 'not valid JSON' },
        { line: 301, message: 'subteamId: unknown team "team_zz"' },
        { line: 900, message: 'id: duplicate id "twin" in this file' },
        { line: 0, message: '3 row(s) skipped: their id already exists' },
      ],
    });
    for (const s of summaries) expect(s).toEqual(summaries[0]);

    const reference = await state(orgOf('sorted'));
    expect(reference.pulses).toHaveLength(EXISTING.length + N + 1);
    for (const order of ORDERS) {
      const got = await state(orgOf(order));
      expect(got.pulses, order).toEqual(reference.pulses);
      for (const table of ROLLUP_TABLES) expect(got.rollups[table], `${order}: ${table}`).toEqual(reference.rollups[table]);
    }
    // And the rollups are right, not only equal: the minutes and the totals against the pulses.
    const [scan] = await t.db.query<{ n: number; s: number; minutes: number }>(
      sql(
        'test.order_scan',
        `SELECT count(*)::int AS n, sum(level)::int AS s, count(DISTINCT date_trunc('minute', created_at))::int AS minutes FROM pulses WHERE org_id = $1`,
      ),
      [orgOf('shuffled')],
    );
    const [totals] = await t.db.query<{ n: number; s: number }>(
      sql('test.order_totals', `SELECT pulse_count::int AS n, level_sum::int AS s FROM pulse_totals WHERE org_id = $1`),
      [orgOf('shuffled')],
    );
    expect(totals).toEqual({ n: scan.n, s: scan.s });
    expect(reference.rollups.pulse_minute_stats).toHaveLength(scan.minutes);

    const audits = [];
    for (const order of ORDERS) {
      audits.push(
        await t.db.query(sql('test.order_audit', `SELECT action, target_kind, details FROM audit_events WHERE org_id = $1 AND action = 'pulses.imported'`), [
          orgOf(order),
        ]),
      );
    }
    expect(audits[0]).toEqual([
      { action: 'pulses.imported', target_kind: 'pulses', details: { imported: N + 1, skipped: 7, rows: N + 8, format: 'ndjson', onError: 'skip' } },
    ]);
    for (const a of audits) expect(a).toEqual(audits[0]);
  });
});
