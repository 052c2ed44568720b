import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiError } from '../../src/contract/errors.js';
import { sql } from '../../src/db/executor.js';
import { writePulses, type NewPulse } from '../../src/db/pulse-writes.js';
import { loadDataset } from '../../src/domain/dataset.js';
import { importPulses } from '../../src/domain/import.js';
import { moderatePulse } from '../../src/domain/moderation.js';
import { createTestDatabase, DB_KIND, type TestDatabase } from '../helpers/db.js';
import { operatorActor } from '../../src/domain/audit.js';

/**
 * Seeded adversary for the pulse door (src/db/pulse-writes.ts): random sequences of every write
 * path (dataset load, file import in NDJSON and CSV, abort and skip mode, live ingestion through
 * writePulses with onExisting 'skip', as the operator API calls it), with moderation changes
 * between them, over two organizations. Batches reuse ids already written, repeat ids within a
 * batch, carry bad rows and land on the edges of minutes, hours, days and ISO weeks. After every
 * step, each of the six rollups must equal a GROUP BY scan of the pulses.
 */

const ORGS = ['org_pa', 'org_pb'];
const TEAMS = ['team_1', 'team_2', 'team_3'];
const BASE = Date.parse('2026-10-26T00:00:00.000Z'); // a Monday
const SEED = Number(process.env.PROPERTY_SEED ?? 20261123);
const STEPS = Number(process.env.PROPERTY_STEPS ?? (DB_KIND === 'pglite' ? 36 : 48));

/** A fixed pseudo-random sequence (Park-Miller), so a failure reproduces from its seed. */
const prng = (seed: number) => () => (seed = (seed * 16807) % 2147483647) / 2147483647;

/** Each rollup, and the same figures computed from the pulses. Rows whose count fell to 0 mean no group. */
const COMPARISONS: { name: string; rollup: string; scan: string }[] = [
  {
    name: 'pulse_totals',
    rollup: `SELECT org_id || ' ' || pulse_count || ' ' || level_sum AS r FROM pulse_totals WHERE pulse_count > 0`,
    scan: `SELECT org_id || ' ' || count(*) || ' ' || sum(level) AS r FROM pulses GROUP BY org_id`,
  },
  {
    name: 'pulse_day_stats',
    rollup: `SELECT org_id || ' ' || day || ' ' || pulse_count || ' ' || level_sum AS r FROM pulse_day_stats WHERE pulse_count > 0`,
    scan: `SELECT org_id || ' ' || d || ' ' || count(*) || ' ' || sum(level) AS r
             FROM (SELECT org_id, (created_at AT TIME ZONE 'UTC')::date AS d, level FROM pulses) p
            GROUP BY org_id, d`,
  },
  {
    name: 'pulse_team_day_stats',
    rollup: `SELECT org_id || ' ' || subteam_id || ' ' || day || ' ' || pulse_count || ' ' || level_sum AS r FROM pulse_team_day_stats WHERE pulse_count > 0`,
    scan: `SELECT org_id || ' ' || subteam_id || ' ' || d || ' ' || count(*) || ' ' || sum(level) AS r
             FROM (SELECT org_id, subteam_id, (created_at AT TIME ZONE 'UTC')::date AS d, level FROM pulses WHERE subteam_id IS NOT NULL) p
            GROUP BY org_id, subteam_id, d`,
  },
  {
    name: 'pulse_hour_stats',
    rollup: `SELECT org_id || ' ' || to_char(hour AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS') || ' ' || pulse_count || ' ' || level_sum AS r FROM pulse_hour_stats WHERE pulse_count > 0`,
    scan: `SELECT org_id || ' ' || h || ' ' || count(*) || ' ' || sum(level) AS r
             FROM (SELECT org_id, to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:00:00') AS h, level FROM pulses) p
            GROUP BY org_id, h`,
  },
  {
    name: 'pulse_minute_stats',
    rollup: `SELECT org_id || ' ' || to_char(minute AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS') || ' ' || pulse_count || ' ' || level_sum AS r FROM pulse_minute_stats WHERE pulse_count > 0`,
    scan: `SELECT org_id || ' ' || m || ' ' || count(*) || ' ' || sum(level) AS r
             FROM (SELECT org_id, to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:00') AS m, level FROM pulses) p
            GROUP BY org_id, m`,
  },
  {
    name: 'pulse_clean_week_stats',
    rollup: `SELECT org_id || ' ' || week || ' ' || grp || ' ' || clean_count AS r FROM pulse_clean_week_stats WHERE clean_count > 0`,
    // Pulses shown CLEAN (migration 0021). ISO weeks computed independently of date_trunc: Monday = the date minus (ISO weekday - 1) days.
    scan: `SELECT org_id || ' ' || w || ' ' || g || ' ' || count(*) AS r
             FROM (SELECT org_id, (created_at AT TIME ZONE 'UTC')::date - (extract(isodow FROM created_at AT TIME ZONE 'UTC')::int - 1) AS w,
                          CASE WHEN subteam_id IS NULL THEN 'none' ELSE 'team:' || subteam_id END AS g
                     FROM pulses WHERE coalesce(shown_status, moderation_status) = 'CLEAN') p
            GROUP BY org_id, w, g`,
  },
];

describe(`every rollup equals a scan of the pulses after every write path (seeded, ${DB_KIND})`, () => {
  let t: TestDatabase;
  const dir = mkdtempSync(join(tmpdir(), 'cp-rollups-property-'));
  const rnd = prng(SEED);
  const pick = <T>(xs: readonly T[]) => xs[Math.floor(rnd() * xs.length)];
  const written = new Map<string, string[]>(ORGS.map((o) => [o, []]));
  let serial = 0;

  /** Times crowd onto the edges of minutes, hours, days and weeks; milliseconds included. */
  const randomTime = () => {
    const day = Math.floor(rnd() * 21);
    const edge = rnd();
    let at = BASE + day * 86_400_000;
    if (edge < 0.25) at += pick([0, -1, 1, 59_999, 60_000, 3_599_999, 3_600_000]);
    else at += Math.floor(rnd() * 86_400_000);
    return new Date(at).toISOString();
  };
  /** New ids, ids already written (skipped or refused) and, sometimes, an id twice in one batch. */
  const randomPulses = (org: string, n: number, reuse: number, repeat = 0): NewPulse[] => {
    const out: NewPulse[] = [];
    const old = written.get(org)!;
    for (let i = 0; i < n; i++) {
      const id = old.length && rnd() < reuse ? pick(old) : rnd() < repeat && out.length ? out[out.length - 1].id : `p_${++serial}`;
      out.push({
        id,
        level: 1 + Math.floor(rnd() * 5),
        reason: rnd() < 0.5 ? 'workload' : null,
        comment: rnd() < 0.3 ? `say "${serial}", ok` : null,
        moderationStatus: rnd() < 0.8 ? 'CLEAN' : 'FLAGGED',
        subteamId: rnd() < 0.3 ? null : pick(TEAMS),
        createdAt: randomTime(),
      });
    }
    return out;
  };

  const pulseIds = async (org: string) =>
    (await t.db.query<{ id: string }>(sql('test.prop.ids', `SELECT id FROM pulses WHERE org_id = $1 ORDER BY id`), [org])).map((r) => r.id);

  const expectRollupsExact = async (step: string) => {
    for (const c of COMPARISONS) {
      const rows = async (text: string) =>
        (await t.db.query<{ r: string }>(sql(`test.prop.${c.name}.${text === c.scan ? 'scan' : 'rollup'}`, text))).map((x) => x.r).sort();
      expect(await rows(c.rollup), `${c.name} after ${step}`).toEqual(await rows(c.scan));
    }
  };

  beforeAll(async () => {
    t = await createTestDatabase();
    await loadDataset(t.db, {
      organizations: ORGS.map((id) => ({
        id,
        name: id,
        plan: 'business',
        createdAt: '2026-01-01T00:00:00.000Z',
        teams: TEAMS.map((team) => ({ id: team, name: team, createdAt: '2026-01-01T00:00:00.000Z' })),
      })),
    });
  });
  afterAll(async () => {
    await t.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it(`stays exact over ${STEPS} random steps (seed ${SEED})`, { timeout: 600_000 }, async () => {
    const log: string[] = [];
    for (let step = 0; step < STEPS; step++) {
      const org = pick(ORGS);
      const kind = pick(['load', 'import', 'import', 'ingest', 'ingest', 'moderate'] as const);
      let what = `${step}: ${kind} ${org}`;
      if (kind === 'load') {
        const pulses = randomPulses(org, 1 + Math.floor(rnd() * 300), rnd() < 0.2 ? 0.01 : 0);
        const duplicate = new Set(pulses.map((p) => p.id)).size < pulses.length || pulses.some((p) => written.get(org)!.includes(p.id));
        const load = loadDataset(t.db, { organizations: [{ id: org, name: org, plan: 'business', createdAt: '2026-01-01T00:00:00.000Z', pulses }] });
        if (duplicate) await expect(load, what).rejects.toThrow(ApiError);
        else await load;
        what += ` ${pulses.length} rows${duplicate ? ' (refused: an id repeats)' : ''}`;
      } else if (kind === 'import') {
        const format = pick(['ndjson', 'csv'] as const);
        const onError = pick(['abort', 'skip'] as const);
        const pulses = randomPulses(org, 1 + Math.floor(rnd() * 400), rnd() < 0.5 ? 0.1 : 0, rnd() < 0.1 ? 0.01 : 0);
        // A bad row now and then: abort mode then writes nothing, skip mode leaves it out.
        const bad = rnd() < 0.2 ? Math.floor(rnd() * pulses.length) : -1;
        const file = join(dir, `step${step}.${format}`);
        const csvField = (v: string | number | null) => (v === null ? '' : `"${String(v).replace(/"/g, '""')}"`);
        const lines = pulses.map((p, i) => {
          const level = i === bad ? 9 : p.level;
          return format === 'ndjson'
            ? JSON.stringify({ ...p, level })
            : [p.id, level, p.reason, p.comment, p.moderationStatus, p.subteamId, p.createdAt].map(csvField).join(',');
        });
        if (format === 'csv') lines.unshift('id,level,reason,comment,moderationStatus,subteamId,createdAt');
        writeFileSync(file, `${lines.join('\n')}\n`);
        const outcome = await importPulses(
          t.db,
          { orgId: org, file, format, onError, batchSize: 1 + Math.floor(rnd() * 150) },
          operatorActor(),
          new Date(),
        ).then(
          (s) => `imported ${s.imported}, skipped ${s.skipped}`,
          (e: Error) => `failed: ${e.message.slice(0, 60)}`,
        );
        what += ` ${format} ${onError} ${pulses.length} rows: ${outcome}`;
      } else if (kind === 'ingest') {
        const pulses = randomPulses(org, 1 + Math.floor(rnd() * 120), rnd() * 0.5, 0.03);
        const n = await t.db.transaction((tx) => writePulses(tx, org, pulses, { onExisting: 'skip' }));
        what += ` ${pulses.length} rows: inserted ${n}`;
      } else {
        const ids = written.get(org)!;
        for (let k = 0; k < 1 + Math.floor(rnd() * 6) && ids.length; k++) {
          await moderatePulse(t.db, org, pick(ids), pick(['CLEAN', 'FLAGGED'] as const), operatorActor(), new Date());
        }
      }
      written.set(org, await pulseIds(org));
      log.push(what);
      await expectRollupsExact(log.join('\n'));
    }
    if (process.env.PROPERTY_LOG) console.log(log.join('\n'));
    // The sequence did write through every path.
    expect(written.get(ORGS[0])!.length + written.get(ORGS[1])!.length).toBeGreaterThan(500);
  });
});
