import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { sql } from '../../src/db/executor.js';
import { operatorActor } from '../../src/domain/audit.js';
import { createDemo } from '../../src/domain/demo.js';
import { demoSchedule } from '../../src/domain/demo-checkins.js';
import { createRespondent, rosterPage } from '../../src/domain/checkins/roster.js';
import { exportWeekLinks, participation, runRounds } from '../../src/domain/checkins/rounds.js';
import { roundStatuses } from '../../src/domain/checkins/round-status.js';

/**
 * The demo organization's check-ins (issue 53, item 5's "a newcomer sees check-ins at work"): a
 * roster and last week's round with its answers, made through the service's own operations; this
 * week's round not started until its day, so that the README's walkthrough (add yourself to
 * Engineering, download the week's links) puts you on this week's round, alone in Engineering.
 */
const NOW = new Date('2026-11-25T10:00:00.000Z'); // a Wednesday

describe('the demo organization has check-ins at work', () => {
  let t: TestDatabase;
  let orgId: string;
  let demo: Awaited<ReturnType<typeof createDemo>>;

  beforeAll(async () => {
    t = await createTestDatabase();
    demo = await createDemo(t.db, NOW);
    orgId = demo.orgId;
  }, 120_000);
  afterAll(async () => t?.close());

  it('has a roster of four teams, none in Engineering, with the team under 5 counted in the total', async () => {
    expect(demo.respondents).toBe(23);
    const page = await rosterPage(t.db, orgId, { search: null, page: 1, pageSize: 50 }, NOW);
    expect(page.rosterSize).toBe(23);
    expect(page.teams.map((x) => [x.name, x.respondents, x.answersAsTeam, x.recentJoins])).toEqual([
      ['Customer Support', 8, true, 0],
      ['Design', 5, true, 0],
      ['People & Ops', 3, false, 0],
      ['Sales', 7, true, 0],
    ]);
  });

  it("has last week's round, answered by most, each count shown only from 5", async () => {
    expect(demo.checkinAnswers).toBe(17);
    const cells = (await participation(t.db, orgId, NOW)).filter((c) => c.week === '2026-11-16');
    const byTeam = Object.fromEntries(cells.map((c) => [c.teamName ?? '(organization)', [c.invited, c.opened, c.answered]]));
    expect(byTeam).toEqual({
      'Customer Support': [8, 7, 6],
      Sales: [7, 6, 5],
      Design: [5, 5, null],
      '(organization)': [null, null, null],
    });
    const rounds = await roundStatuses(t.db, orgId, NOW);
    expect(rounds.map((r) => r.week)).toEqual(['2026-11-16']);
    // The answers are pulses of the round's week, at whole hours, in the teams of 5 or more or without a team.
    const pulses = await t.db.query<{ subteam_id: string | null; n: number }>(
      sql(
        't.demo-pulses',
        `SELECT subteam_id, count(*)::int AS n FROM pulses WHERE org_id = $1 AND created_at >= '2026-11-16' AND created_at < '2026-11-23'
           AND date_trunc('hour', created_at) = created_at AND extract(minute FROM created_at) = 0 GROUP BY subteam_id ORDER BY subteam_id`,
      ),
      [orgId],
    );
    expect(pulses.reduce((n, p) => n + p.n, 0)).toBeGreaterThanOrEqual(17);
  });

  it('keeps no link: nothing waits to be mailed, and no row ties a person to a link', async () => {
    const [outbox] = await t.db.query<{ n: number }>(sql('t.outbox', 'SELECT count(*)::int AS n FROM checkin_outbox WHERE org_id = $1'), [orgId]);
    expect(outbox!.n).toBe(0);
  });

  it("leaves this week's round to its day, so that the README's walkthrough puts you on it, alone in Engineering", async () => {
    expect(demoSchedule(NOW)).toEqual({ weekday: 4, hour: 9, timeZone: 'UTC', reminderWeekday: 6 });
    expect(demoSchedule(new Date('2026-11-29T10:00:00.000Z'))).toEqual({ weekday: 7, hour: 23, timeZone: 'UTC', reminderWeekday: null });
    // The round job runs (no mail): nothing is due before Thursday 09:00.
    await runRounds(t.db, { linkFor: (o, k) => `http://x/checkin/o/${o}#${k}` }, new Date(NOW.getTime() + 60_000));
    expect((await roundStatuses(t.db, orgId, NOW)).map((r) => r.week)).toEqual(['2026-11-16']);
    await createRespondent(t.db, orgId, { email: 'me@example.com', team: 'Engineering' }, operatorActor(null), NOW);
    const file = await exportWeekLinks(t.db, orgId, { linkFor: (o, k) => `http://x/checkin/o/${o}#${k}`, mails: false }, operatorActor(null), NOW);
    expect(file.week).toBe('2026-11-23');
    expect(file.links).toHaveLength(24);
    expect(file.links.find((l) => l.email === 'me@example.com')?.team).toBe('Engineering');
    const cells = (await participation(t.db, orgId, NOW)).filter((c) => c.week === '2026-11-23');
    expect(cells.find((c) => c.teamName === 'Engineering')).toBeUndefined();
  });
});
