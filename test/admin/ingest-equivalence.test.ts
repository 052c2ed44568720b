import { writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runAlertEngine } from '../../src/domain/alert-engine.js';
import { importPulses } from '../../src/domain/import.js';
import { WEEK_MS } from '../../src/domain/time.js';
import { createAdminTest, type AdminTest } from './helpers.js';
import { operatorActor } from '../../src/domain/audit.js';

/**
 * Issue 18: "alerts and statistics afterwards equal those of the same rows imported by file".
 * The same pseudo-random rows (seeded) go into two organizations with the same teams: one by live
 * ingestion in batches of 1,000 (with a re-sent batch), one by `import-pulses`; every statistic,
 * the comments and the alerts the engine raises over them must then be equal.
 */
const TEAMS = ['t_a', 't_b', 't_c'];
const org = (id: string, key: string) => ({
  id,
  name: id,
  plan: 'business',
  createdAt: '2026-01-01T00:00:00.000Z',
  apiKeys: [{ key }],
  teams: TEAMS.map((t) => ({ id: t, name: t.toUpperCase(), createdAt: '2026-01-01T00:00:00.000Z' })),
});
const KEY_LIVE = 'cp_test_live_0123456789abcdef';
const KEY_FILE = 'cp_test_file_0123456789abcdef';

function rows(n: number, seed: number) {
  let s = seed;
  const rnd = () => (s = (s * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
  const start = Date.parse('2026-08-03T00:00:00.000Z'); // 12 weeks of history
  return Array.from({ length: n }, (_, i) => {
    const week = Math.floor(i / (n / 12));
    // Mood falls in the last weeks for team t_b, so the engine has something to raise.
    const low = week >= 10 && i % 3 === 1;
    return {
      id: `p_${i}`,
      level: low ? 1 + Math.floor(rnd() * 2) : 2 + Math.floor(rnd() * 4),
      reason: rnd() < 0.3 ? 'workload' : null,
      comment: rnd() < 0.4 ? `comment ${i}` : null,
      moderationStatus: rnd() < 0.1 ? 'FLAGGED' : 'CLEAN',
      subteamId: i % 4 === 3 ? null : TEAMS[i % 3],
      createdAt: new Date(start + week * WEEK_MS + Math.floor(rnd() * WEEK_MS)).toISOString(),
    };
  });
}

describe('live ingestion equals import by file', () => {
  let t: AdminTest;
  beforeAll(async () => {
    t = await createAdminTest({ dataset: { organizations: [org('org_live', KEY_LIVE), org('org_file', KEY_FILE)] } });
  });
  afterAll(() => t.close());

  it('statistics, daily statistics, comments and alerts are the same', async () => {
    const data = rows(6000, 42);
    let inserted = 0;
    for (let i = 0; i < data.length; i += 1000) {
      const res = await t.call('POST', '/admin/v1/organizations/org_live/pulses', { pulses: data.slice(i, i + 1000) });
      expect(res.statusCode).toBe(200);
      inserted += res.json().inserted;
    }
    expect((await t.call('POST', '/admin/v1/organizations/org_live/pulses', { pulses: data.slice(2000, 3000) })).json()).toEqual({
      inserted: 0,
      unchanged: 1000,
      inFrozenWeeks: 0,
    });
    expect(inserted).toBe(6000);
    const file = join(tmpdir(), `cp-equiv-${process.pid}.ndjson`);
    writeFileSync(file, `${data.map((r) => JSON.stringify(r)).join('\n')}\n`);
    const summary = await importPulses(t.db, { orgId: 'org_file', file, onError: 'abort' }, operatorActor(), new Date());
    expect(summary.imported).toBe(6000);

    const weeks = Array.from({ length: 12 }, (_, w) => new Date(Date.parse('2026-08-03T00:00:00.000Z') + w * WEEK_MS));
    const thresholds = t.config.alertThresholds;
    const live = await runAlertEngine(t.db, { thresholds, weeks, orgIds: ['org_live'], clock: () => new Date() });
    const byFile = await runAlertEngine(t.db, { thresholds, weeks, orgIds: ['org_file'], clock: () => new Date() });
    const shape = (r: typeof live) => r.raised.map((a) => `${a.weekISO} ${a.type} ${a.message}`).sort();
    expect(shape(live).length).toBeGreaterThan(0);
    expect(shape(live)).toEqual(shape(byFile));

    const read = async (key: string, url: string) => {
      const res = await t.app.inject({ url, headers: { authorization: `Bearer ${key}` } });
      expect(res.statusCode, url).toBe(200);
      const body = res.json();
      if (Array.isArray(body.items)) body.items = body.items.map((x: Record<string, unknown>) => ({ ...x, id: undefined, createdAt: undefined }));
      return body;
    };
    for (const url of [
      '/v1/stats',
      '/v1/stats/daily?from=2026-08-01T00:00:00Z&to=2026-11-01T00:00:00Z',
      '/v1/pulses?from=2026-08-01T00:00:00Z&to=2026-11-01T00:00:00Z&limit=200',
      '/v1/comments?from=2026-08-03&to=2026-10-25&limit=100',
      '/v1/comments?from=2026-08-03&to=2026-10-25&subteamId=t_b',
    ]) {
      const a = await read(KEY_LIVE, url);
      const b = await read(KEY_FILE, url);
      if (url.startsWith('/v1/comments')) {
        // The order inside a week is a keyed hash of the organization: compare every page's comments as sets.
        const all = async (key: string) => {
          const out: string[] = [];
          let page = await read(key, url);
          const head = { ...page, items: undefined, nextCursor: undefined };
          for (;;) {
            out.push(...page.items.map((x: { comment: string }) => x.comment));
            if (!page.nextCursor) break;
            page = await read(key, `${url}&cursor=${encodeURIComponent(page.nextCursor)}`);
          }
          return { head, comments: out.sort() };
        };
        const [x, y] = [await all(KEY_LIVE), await all(KEY_FILE)];
        expect(x.comments.length, url).toBeGreaterThan(0);
        expect(x, url).toEqual(y);
      } else {
        expect(a, url).toEqual(b);
      }
    }
    const stats = await read(KEY_LIVE, '/v1/stats');
    expect(stats.pulseCount).toBe(6000);
  });
});
