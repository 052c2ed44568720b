import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Dataset } from '../../src/domain/dataset.js';
import { sql } from '../../src/db/executor.js';
import { overviewInsight } from '../../src/domain/insight.js';
import { listRecentAlerts } from '../../src/domain/alerts.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { joinConsole, type ConsoleClient } from '../helpers/console-client.js';

/**
 * Issue 53, *Insight, not API figures*: participation as a rate where both counts are shown (the
 * organization's total under the remainder rule), last week against the four before, the share at
 * 4-5, and a heatmap whose cells under 5 pulses carry no figure at all.
 */
const NOW = new Date('2026-11-20T12:00:00.000Z'); // a Friday of the week 2026-11-16
const ORG = 'org_insight';

type Pulse = NonNullable<NonNullable<Dataset['organizations']>[number]['pulses']>[number];
let n = 0;
const pulses = (monday: string, team: string | null, levels: number[]): Pulse[] =>
  levels.map((level, i) => ({
    id: `pi_${n++}`,
    level,
    reason: null,
    comment: null,
    moderationStatus: 'CLEAN' as const,
    subteamId: team,
    createdAt: new Date(Date.parse(`${monday}T10:00:00.000Z`) + i * 3_600_000).toISOString(),
  }));

let t: TestApp;
let admin: ConsoleClient;
beforeAll(async () => {
  t = await createTestApp({
    now: NOW,
    dataset: {
      organizations: [
        {
          id: ORG,
          name: 'Northwind',
          plan: 'business',
          memberCount: 40,
          createdAt: '2026-01-01T00:00:00.000Z',
          deletedAt: null,
          teams: [
            { id: 'team_a', name: 'Support', createdAt: '2026-01-01T00:00:00.000Z' },
            { id: 'team_b', name: 'Sales', createdAt: '2026-01-01T00:00:00.000Z' },
          ],
          pulses: [
            ...pulses('2026-10-19', 'team_a', [3, 3, 3, 3, 3]),
            ...pulses('2026-11-02', 'team_a', [3, 3, 3, 3, 3]),
            ...pulses('2026-11-09', 'team_a', [4, 4, 5, 2, 3, 4]),
            ...pulses('2026-11-09', 'team_b', [5, 5]),
          ],
          alerts: [
            {
              id: 'al_low',
              type: 'LOW_MOOD',
              message: 'Mood in Support averaged 2.20 in 2026-W46 (6 pulses), at or below the low-mood level of 2.50.',
              weekISO: '2026-W46',
              subteamId: 'team_a',
              readAt: null,
              createdAt: '2026-11-16T01:00:00.000Z',
            },
            {
              id: 'al_drop',
              type: 'MOOD_DROP',
              message: 'Mood in Support averaged 2.20 in 2026-W46, 0.80 below its 4-week average of 3.00 (6 pulses).',
              weekISO: '2026-W46',
              subteamId: 'team_a',
              readAt: null,
              createdAt: '2026-11-16T01:00:00.000Z',
            },
          ],
        },
      ],
    },
  });
  const slot = (week: string, team: string, respondents: number, answered: number) =>
    t.db.query(
      sql(
        't.slot',
        `INSERT INTO checkin_round_slots (org_id, week, team_slot, respondents, recent_joiners, capacity, answered) VALUES ($1, $2, $3, $4, 0, $4, $5)`,
      ),
      [ORG, week, team, respondents, answered],
    );
  for (const week of ['2026-11-09', '2026-11-16']) {
    await t.db.query(sql('t.round', 'INSERT INTO checkin_rounds (org_id, week, started_at) VALUES ($1, $2, $3)'), [ORG, week, `${week}T09:00:00.000Z`]);
  }
  await slot('2026-11-09', 'team_a', 10, 6);
  await slot('2026-11-09', 'team_b', 8, 5);
  await slot('2026-11-16', 'team_a', 10, 7);
  await slot('2026-11-16', '', 6, 3);
  admin = await joinConsole(t, ORG, 'admin@insight.example.com', 'admin', NOW);
});
afterAll(async () => {
  await t?.close();
});

describe("the Overview's insight", () => {
  it("participation as a rate only where both counts are shown, and the organization's total with its rate", async () => {
    const i = await overviewInsight(t.db, ORG, { fromDate: '2026-11-01', toDate: '2026-11-20' }, NOW);
    expect([i.thisWeek, i.lastWeek]).toEqual(['2026-11-16', '2026-11-09']);
    // Last week: every slot's answers shown (6 and 5), so the total is; 11 of 18.
    expect(i.participation.organization.lastWeek).toEqual({ invited: 18, answered: 11, rate: 11 / 18 });
    // This week the organization's own slot answered 3: its count is hidden, the total is not.
    expect(i.participation.organization.thisWeek).toEqual({ invited: 16, answered: 10, rate: 10 / 16 });
    expect(i.participation.slots).toEqual([
      { teamId: 'team_b', teamName: 'Sales', thisWeek: null, lastWeek: { invited: 8, answered: 5, rate: 5 / 8 } },
      { teamId: 'team_a', teamName: 'Support', thisWeek: { invited: 10, answered: 7, rate: 0.7 }, lastWeek: { invited: 10, answered: 6, rate: 0.6 } },
      { teamId: null, teamName: null, thisWeek: { invited: 6, answered: null, rate: null }, lastWeek: null },
    ]);
  });

  it('last week against the four before, the share at 4-5, and a heatmap without a figure under 5 pulses', async () => {
    const i = await overviewInsight(t.db, ORG, { fromDate: '2026-11-01', toDate: '2026-11-20' }, NOW);
    expect(i.change).toEqual({ week: '2026-11-09', current: { count: 8, avg: 4 }, previousFrom: '2026-10-12', previous: { count: 10, avg: 3 } });
    expect(i.high).toEqual({ week: '2026-11-09', share: 6 / 8, previousShare: 0 });
    expect(i.heatmap.weeks).toEqual(['2026-10-26', '2026-11-02', '2026-11-09', '2026-11-16']);
    expect(i.heatmap.organization).toEqual([null, { count: 5, avg: 3 }, { count: 8, avg: 4 }, null]);
    expect(i.heatmap.teams).toEqual([
      { id: 'team_b', name: 'Sales', cells: [null, null, null, null] },
      { id: 'team_a', name: 'Support', cells: [null, { count: 5, avg: 3 }, { count: 6, avg: 3.67 }, null] },
    ]);
  });

  it('the page says it in words: rates, the change, the share, the hidden cells and why', async () => {
    const res = await admin.get('/console/overview?from=2026-11-01&to=2026-11-20');
    expect(res.statusCode).toBe(200);
    expect(res.body).toContain('Last week (from 9 Nov 2026): 11 of 18 people answered (61%).');
    expect(res.body).toContain('This week (from 16 Nov 2026): 10 of 16 people answered (63%).');
    expect(res.body).toContain(
      '<tr><th scope="row">Without a team (people without one, and teams under 5)</th><td>fewer than 5 answered of 6</td><td>no round</td></tr>',
    );
    expect(res.body).toContain('<tr><th scope="row"><bdi>Support</bdi></th><td>70% (7 of 10)</td><td>60% (6 of 10)</td></tr>');
    expect(res.body).toContain(
      'In the week from 9 Nov 2026, the average level was 4.00 from 8 pulses: 1.00 higher than the 3.00 of the four weeks from 12 Oct 2026 (10 pulses).',
    );
    expect(res.body).toContain('75% of last week&#39;s answers were 4 or 5 (good or very good), against 0% in the four weeks before.');
    expect(res.body).toContain('A cell of fewer than 5 pulses is hidden');
    expect(res.body.match(/<td class="h h0">under 5/g)).toHaveLength(4 + 2 + 2);
    const [running] = res.body.split('<details class="developers"');
    expect(running).not.toContain('GET /v1');
  });

  it('alerts: a low level and a drop of one team and week are one sentence, marked read together', async () => {
    const page = await admin.get('/console/alerts');
    const sentence =
      'Week of 9 Nov 2026, <bdi>Support</bdi>: mood averaged 2.20 from 6 answers, at or below the low level of 2.50 and 0.80 lower than the usual of the 4 weeks before (3.00).';
    expect(page.body.split(sentence)).toHaveLength(2);
    expect(page.body).not.toMatch(/LOW_MOOD|MOOD_DROP/);
    const first = /action="\/console\/alerts\/(al_[a-z]+)\/read">[\s\S]*?name="with" value="([^"]+)"/.exec(page.body)!;
    const read = await admin.submit('/console/alerts', `/console/alerts/${first[1]}/read`, { with: first[2] });
    expect(read.statusCode).toBe(200);
    expect(read.body).toContain('2 alerts marked read');
    expect((await listRecentAlerts(t.db, ORG, 10)).map((a) => a.readAt)).toEqual([NOW.toISOString(), NOW.toISOString()]);
    expect(read.body).toContain(`aria-label="Mark unread: Week of 9 Nov 2026, Support"`);
    const overview = await admin.get('/console/overview');
    expect(overview.body).toContain('No unread alerts.');
  });
});
