import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Dataset } from '../../src/domain/dataset.js';
import { sql } from '../../src/db/executor.js';
import { operatorActor } from '../../src/domain/audit.js';
import { overviewInsight } from '../../src/domain/insight.js';
import { inviteMember } from '../../src/domain/members.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { CONSOLE_PASSWORD, ConsoleClient } from '../helpers/console-client.js';

/**
 * A manager's insight (issue 53, item 4): the Overview's figures of their teams only, and none of
 * the organization as a whole. In this organization last week's 8 pulses are Support's 6 and
 * Sales's 2: the organization's figure beside Support's would give Sales's two answers away, so a
 * manager of Support receives neither the organization's figure nor any pool of teams. The same
 * organization as test/console/overview-insight.test.ts, which shows what owners, admins and
 * viewers read of it.
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
let lead: ConsoleClient;
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
  const inv = await inviteMember(t.db, ORG, { email: 'support.lead@insight.example.com', role: 'manager', teams: ['team_a'] }, operatorActor(), NOW);
  lead = new ConsoleClient(t.app);
  await lead.submit(`/console/invitations/${inv.token}`, `/console/invitations/${inv.token}`, { password: CONSOLE_PASSWORD });
});
afterAll(async () => {
  await t?.close();
});

describe("a manager's insight", () => {
  it('holds no figure of the organization: no total, no organization row, no pooled change', async () => {
    const i = await overviewInsight(t.db, ORG, { fromDate: '2026-11-01', toDate: '2026-11-20' }, NOW, ['team_a']);
    expect(i.scoped).toBe(true);
    expect(i.participation.organization).toEqual({ thisWeek: null, lastWeek: null });
    // Their team's slot only: never another team's, nor the organization's own key (teams under 5, people without one).
    expect(i.participation.slots).toEqual([
      { teamId: 'team_a', teamName: 'Support', thisWeek: { invited: 10, answered: 7, rate: 0.7 }, lastWeek: { invited: 10, answered: 6, rate: 0.6 } },
    ]);
    expect(i.heatmap.organization).toEqual([]);
    expect(i.heatmap.teams).toEqual([{ id: 'team_a', name: 'Support', cells: [null, { count: 5, avg: 3 }, { count: 6, avg: 3.67 }, null] }]);
    expect(i.change.current).toBeNull();
    expect(i.change.previous).toBeNull();
    expect(i.high.share).toBeNull();
    // The change and the share at 4-5 of Support alone: 6 pulses last week (4,4,5,2,3,4), 10 in the four weeks before.
    expect(i.teamTrends).toEqual([
      {
        id: 'team_a',
        name: 'Support',
        change: { current: { count: 6, avg: 3.67 }, previous: { count: 10, avg: 3 } },
        high: { share: 4 / 6, previousShare: 0 },
      },
    ]);
  });

  it("a team's trend under 5 pulses is withheld like every figure (Sales: 2 pulses last week, none before)", async () => {
    const i = await overviewInsight(t.db, ORG, { fromDate: '2026-11-01', toDate: '2026-11-20' }, NOW, ['team_b']);
    expect(i.teamTrends).toEqual([{ id: 'team_b', name: 'Sales', change: { current: null, previous: null }, high: { share: null, previousShare: null } }]);
    expect(i.heatmap.teams).toEqual([{ id: 'team_b', name: 'Sales', cells: [null, null, null, null] }]);
  });

  it('the page says it in words, team by team, and nothing of the organization', async () => {
    const res = await lead.get('/console/overview?from=2026-11-01&to=2026-11-20');
    expect(res.statusCode).toBe(200);
    expect(res.body).toContain('<tr><th scope="row"><bdi>Support</bdi></th><td>70% (7 of 10)</td><td>60% (6 of 10)</td></tr>');
    expect(res.body).toContain(
      '<li><bdi>Support</bdi>: the average level was 3.67 from 6 pulses: 0.67 higher than the 3.00 of the four weeks before (10 pulses). 67% of its answers were 4 or 5, against 0% in the four weeks before.</li>',
    );
    for (const gone of ['people answered', 'Without a team', 'Whole organization', 'Sales', 'id="change"', 'id="high-share"', '8 pulses']) {
      expect(res.body, gone).not.toContain(gone);
    }
  });
});
