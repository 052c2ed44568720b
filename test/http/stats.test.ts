import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ACME_PULSES, KEYS, NOW, readDataset, type FixturePulse } from '../fixtures/dataset.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { api } from '../helpers/openapi.js';

const DAY = 86_400_000;

/** Independent of the service: a plain average, rounded half up to 2 decimals. */
function avg(ps: FixturePulse[]): number | null {
  if (ps.length === 0) return null;
  const sum = ps.reduce((a, p) => a + p.level, 0);
  return Math.round((sum * 100) / ps.length) / 100;
}

const between = (from: number, to: number) => ACME_PULSES.filter((p) => Date.parse(p.createdAt) >= from && Date.parse(p.createdAt) < to);

function daily(from: number, to: number) {
  const byDay = new Map<string, FixturePulse[]>();
  for (const p of between(from, to)) byDay.set(p.createdAt.slice(0, 10), [...(byDay.get(p.createdAt.slice(0, 10)) ?? []), p]);
  return [...byDay.keys()].sort().map((date) => ({ date, count: byDay.get(date)!.length, avg: avg(byDay.get(date)!)! }));
}

describe('statistics', () => {
  let t: TestApp;
  let acme: ReturnType<typeof api>;
  beforeAll(async () => {
    t = await createTestApp({ dataset: readDataset(), now: NOW });
    acme = api(t.app, KEYS.acme);
  });
  afterAll(() => t.close());

  describe('GET /stats', () => {
    it('counts every pulse and the rolling last 7 days, all moderation statuses', async () => {
      const week = between(NOW.getTime() - 7 * DAY, NOW.getTime());
      expect(week.map((p) => p.id)).toContain('edge_7d');
      expect(week.map((p) => p.id)).not.toContain('edge_now');
      expect(week.some((p) => p.moderationStatus === 'FLAGGED')).toBe(true);
      const res = await acme.get('/v1/stats');
      expect(res.statusCode).toBe(200);
      expect(res.json()).toEqual({
        avgLevel: avg(ACME_PULSES),
        minimumSample: 5,
        pulseCount: ACME_PULSES.length,
        weeklyAvgLevel: avg(week),
        weeklyPulseCount: week.length,
      });
    });

    it('is null-averaged for an organization without pulses', async () => {
      const empty = await createTestApp({
        dataset: {
          organizations: [{ id: 'org_e', name: 'E', plan: 'business', createdAt: '2026-01-01T00:00:00.000Z', apiKeys: [{ key: 'cp_test_empty_0123456789' }] }],
        },
        now: NOW,
      });
      try {
        const res = await api(empty.app, 'cp_test_empty_0123456789').get('/v1/stats');
        expect(res.json()).toEqual({ avgLevel: null, minimumSample: 5, pulseCount: 0, weeklyAvgLevel: null, weeklyPulseCount: 0 });
        const d = await api(empty.app, 'cp_test_empty_0123456789').get('/v1/stats/daily');
        expect(d.json().days).toEqual([]);
      } finally {
        await empty.close();
      }
    });
  });

  describe('GET /stats/daily', () => {
    it('defaults to the last 90 days, echoes the range, lists days with pulses ascending', async () => {
      const res = await acme.get('/v1/stats/daily');
      expect(res.statusCode).toBe(200);
      const from = NOW.getTime() - 90 * DAY;
      expect(res.json()).toEqual({
        from: new Date(from).toISOString(),
        to: NOW.toISOString(),
        days: daily(from, NOW.getTime()),
      });
      expect(res.json().days.length).toBeGreaterThan(60);
    });

    it('counts partial edge days only inside a range that does not start or end at midnight', async () => {
      const from = Date.parse('2026-09-03T13:37:11.123Z');
      const to = Date.parse('2026-10-17T05:02:03.456Z');
      const res = await acme.get(`/v1/stats/daily?from=2026-09-03T15:37:11.123%2B02:00&to=2026-10-17T05:02:03.456Z`);
      expect(res.json()).toEqual({ from: new Date(from).toISOString(), to: new Date(to).toISOString(), days: daily(from, to) });
    });

    it('defaults from to 90 days before an explicit to, and accepts 365 days back', async () => {
      const to = NOW.getTime() - 10 * DAY;
      const r1 = await acme.get(`/v1/stats/daily?to=${new Date(to).toISOString()}`);
      expect(r1.json().days).toEqual(daily(to - 90 * DAY, to));
      const from = NOW.getTime() - 365 * DAY;
      const r2 = await acme.get(`/v1/stats/daily?from=${new Date(from).toISOString()}`);
      expect(r2.statusCode).toBe(200);
      expect(r2.json().days).toEqual(daily(from, NOW.getTime()));
    });

    it.each([
      [`from=${new Date(NOW.getTime() - 365 * DAY - 1).toISOString()}`],
      ['from=2026-11-10T00:00:00Z&to=2026-11-10T00:00:00Z'],
      ['from=2026-11-10T00:00:00Z&to=2026-11-09T00:00:00Z'],
      ['from=2026-11-10'],
      ['days=3'],
    ])('refuses %s with invalid_request', async (q) => {
      const res = await acme.get(`/v1/stats/daily?${q}`);
      expect(res.statusCode).toBe(400);
      expect(res.json().error.code).toBe('invalid_request');
    });
  });
});
