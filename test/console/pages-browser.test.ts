import type { AddressInfo } from 'node:net';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from '../../src/db/executor.js';
import type { Dataset } from '../../src/domain/dataset.js';
import { isoWeekLabel } from '../../src/domain/time.js';
import { createTestApp, get, type TestApp } from '../helpers/app.js';
import { BROWSER_MISSING, joinConsole, launchConsoleBrowser, screenshotPath, type ConsoleBrowser } from '../helpers/browser.js';

/**
 * Issue 28 in headless Chromium: the overview's charts and tables match GET /stats/daily; an alert
 * marked read; an action created and moved to done; a comment hidden and shown again while
 * GET /pulses, `suppressed` and the statistics stay byte-identical. Hostile comments, names and
 * messages render as text on every page, axe-core finds nothing serious or critical (charts
 * included), no CSP violation, nothing leaves 127.0.0.1. Screenshots of each page go to docs/.
 */
const DAY = 86_400_000;
const KEY = 'cp_test_pages_browser_0123456789ab';
const COMMENTS = ['<script>alert(1)</script>', '<img src=x onerror=alert(3)>', 'w'.repeat(500), 'left \u202Eright override \u202Dend', 'fine 😀🎉👍🏽'];
const shot = (name: string) => screenshotPath(`console-${name}.png`);

/** The Monday of the week two weeks back (1970-01-05 was a Monday), and its dates. */
const mondayTwoWeeksBack = (now: number) => Math.floor((now - 14 * DAY - 4 * DAY) / (7 * DAY)) * 7 * DAY + 4 * DAY;
const commentWeek = (now: number) => {
  const m = mondayTwoWeeksBack(now);
  return { from: new Date(m).toISOString().slice(0, 10), to: new Date(m + 6 * DAY).toISOString().slice(0, 10) };
};

/** The organization of the screenshots: a plausible name (issue 53), hostile text where strangers write (comments). */
const ORG_NAME = 'Northwind Traders';

/**
 * Deterministic pulses of the last 40 working days (none on Saturdays and Sundays, so the daily
 * chart shows its gaps) for three teams: Customer Support answers 5-7 a day, Engineering 3-8 (its
 * days under 5 are hidden), Sales one every fourth day (every figure of it under 5). The week two weeks back holds
 * the hostile comments instead.
 */
function dataset(now: number): Dataset {
  const monday = mondayTwoWeeksBack(now);
  const pulses: NonNullable<NonNullable<Dataset['organizations']>[number]['pulses']> = [];
  const perDay: [string, (d: number) => number][] = [
    ['team_a', (d) => 5 + (d % 3)],
    ['team_b', (d) => 3 + (d % 6)],
    ['team_c', (d) => (d % 4 === 0 ? 1 : 0)],
  ];
  for (let d = 40; d >= 1; d--) {
    const day = Math.floor((now - d * DAY) / DAY) * DAY;
    const weekday = new Date(day).getUTCDay();
    if (weekday === 0 || weekday === 6 || (day >= monday && day < monday + 7 * DAY)) continue;
    for (const [team, count] of perDay) {
      for (let i = 0; i < count(d); i++) {
        pulses.push({
          id: `pb_${team}_${d}_${i}`,
          level: 1 + ((d * 7 + i * 3 + team.length) % 9 > 2 ? 2 + ((d + i) % 3) : (d + i) % 2),
          reason: null,
          comment: null,
          moderationStatus: 'CLEAN',
          subteamId: team,
          createdAt: new Date(day + 8 * 3_600_000 + i * 1_800_000).toISOString(),
        });
      }
    }
  }
  for (let i = 0; i < 8; i++) {
    pulses.push({
      id: `pb_w_${i}`,
      level: 2 + (i % 3),
      reason: null,
      comment: COMMENTS[i] ?? `plain words ${i}`,
      moderationStatus: 'CLEAN',
      subteamId: 'team_a',
      createdAt: new Date(monday + DAY + i * 3_600_000).toISOString(),
    });
  }
  const week = isoWeekLabel(new Date(monday + 7 * DAY));
  return {
    organizations: [
      {
        id: 'org_pb',
        name: ORG_NAME,
        plan: 'business',
        memberCount: 30,
        createdAt: '2026-01-01T00:00:00.000Z',
        deletedAt: null,
        apiKeys: [{ key: KEY, name: 'bi', revoked: false }],
        teams: [
          { id: 'team_a', name: 'Customer Support', createdAt: '2026-01-01T00:00:00.000Z' },
          { id: 'team_b', name: 'Engineering', createdAt: '2026-01-01T00:00:00.000Z' },
          { id: 'team_c', name: 'Sales', createdAt: '2026-01-01T00:00:00.000Z' },
        ],
        pulses,
        alerts: [
          {
            id: 'al_pb_low',
            type: 'LOW_MOOD',
            message: `Mood in Engineering averaged 2.40 in ${week} (21 pulses), at or below the low-mood level of 2.50.`,
            weekISO: week,
            subteamId: 'team_b',
            readAt: null,
            createdAt: new Date(now - 2 * DAY).toISOString(),
          },
          {
            id: 'al_pb_drop',
            type: 'MOOD_DROP',
            message: `Mood in Engineering averaged 2.40 in ${week}, 0.70 below its 4-week average of 3.10 (21 pulses).`,
            weekISO: week,
            subteamId: 'team_b',
            readAt: null,
            createdAt: new Date(now - 2 * DAY).toISOString(),
          },
        ],
      },
    ],
  };
}

/** This week's and last week's rounds: Customer Support and Engineering answer as teams, Sales (3 people) without one. */
async function rounds(t: TestApp, now: number) {
  const thisWeek = new Date(Math.floor((now - 4 * DAY) / (7 * DAY)) * 7 * DAY + 4 * DAY).toISOString().slice(0, 10);
  const lastWeek = new Date(Date.parse(thisWeek) - 7 * DAY).toISOString().slice(0, 10);
  for (const [week, slots] of [
    [
      lastWeek,
      [
        ['team_a', 40, 34],
        ['team_b', 25, 21],
        ['', 3, 3],
      ],
    ],
    [
      thisWeek,
      [
        ['team_a', 40, 22],
        ['team_b', 25, 9],
        ['', 3, 1],
      ],
    ],
  ] as const) {
    await t.db.query(sql('t.round', 'INSERT INTO checkin_rounds (org_id, week, started_at) VALUES ($1, $2, $3)'), ['org_pb', week, `${week}T09:00:00.000Z`]);
    for (const [team, people, answered] of slots) {
      await t.db.query(
        sql(
          't.slot',
          'INSERT INTO checkin_round_slots (org_id, week, team_slot, respondents, recent_joiners, capacity, answered) VALUES ($1, $2, $3, $4, 0, $4, $5)',
        ),
        ['org_pb', week, team, people, answered],
      );
    }
  }
}

describe.skipIf(BROWSER_MISSING)("the organization's pages in a browser", () => {
  let t: TestApp;
  let base: string;
  let cb: ConsoleBrowser;
  const start = Date.now();

  beforeAll(async () => {
    t = await createTestApp({ dataset: dataset(start) });
    await rounds(t, start);
    await t.app.listen({ host: '127.0.0.1', port: 0 });
    base = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
    cb = await launchConsoleBrowser();
  }, 60_000);
  afterAll(async () => {
    await cb?.close();
    await t?.close();
  }, 120_000);

  /** The rows of a chart's table, as the page shows them. */
  const tableRows = (page: Page, id: string) =>
    page.$$eval(`#${id} tbody tr`, (rows) =>
      (rows as HTMLTableRowElement[]).map((r) => ({
        date: r.cells[0].querySelector('time')!.dateTime,
        count: Number(r.cells[1].textContent),
        avg: Number(r.cells[2].textContent),
      })),
    );

  it('an admin reads the overview, marks an alert read, moves an action to done, hides a comment and shows it again', async () => {
    const { page } = await joinConsole(cb, base, t.db, 'org_pb', { email: 'admin@pb.example.com', role: 'admin' });

    // Overview: the organization's chart is drawn from a table that is GET /stats/daily's answer for
    // the range the developers' disclosure names (and the running text never does).
    for (const link of [null, 'year']) {
      if (link) await Promise.all([page.waitForURL(/overview\?from=/), page.getByRole('link', { name: link, exact: true }).click()]);
      await page.waitForSelector('[data-chart-for="days-org"] canvas');
      expect(await page.locator('[data-chart-for] canvas').count()).toBeGreaterThanOrEqual(2);
      const query = /GET \/v1\/stats\/daily\?(from=[0-9TZ:.-]+Z&to=[0-9TZ:.-]+Z)/.exec(
        (await page.locator('#for-developers code').first().textContent()) ?? '',
      )![1];
      const daily = await get(t.app, `/v1/stats/daily?${query}`, KEY);
      expect(daily.statusCode).toBe(200);
      expect(await tableRows(page, 'days-org')).toEqual(daily.json().days);
      expect(daily.json().days.length).toBeGreaterThan(12);
      expect(await page.locator('main > p, main > section p').allTextContents()).not.toContainEqual(expect.stringContaining('GET /v1'));
      await cb.audit(page, `overview ${link ?? 'default'}`);
    }
    await page.goto(`${base}/console/overview`);
    await page.waitForSelector('[data-chart-for="days-org"] canvas');
    await expect(page.getByRole('img', { name: /Chart of All of Northwind Traders/ })).toBeDefined();
    // Participation as a rate, the change and the share in sentences, the heatmap's hidden cells said.
    expect(await page.getByText(/^Last week \(from .*\): 58 of 68 people answered \(85%\)\.$/).count()).toBe(1);
    expect(await page.locator('#change').textContent()).toMatch(/^In the week from .*, the average level was \d\.\d\d from \d+ pulses: .* four weeks from/);
    expect(await page.locator('#high-share').textContent()).toMatch(/^\d+% of last week's answers were 4 or 5/);
    expect(await page.getByRole('rowheader', { name: 'Sales' }).count()).toBe(1);
    expect(await page.locator('#heatmap tr', { hasText: 'Sales' }).locator('td.h0').count()).toBeGreaterThan(3);
    await page.screenshot({ path: shot('overview'), fullPage: true });
    // One team's chart, chosen with the select (the page past the inline bound works the same way).
    await page.getByLabel('Team chart').selectOption('team_a');
    await Promise.all([page.waitForURL(/team=team_a/), page.getByRole('button', { name: 'Show' }).click()]);
    await page.waitForSelector('[data-chart-for="days-team-0"] canvas');
    expect(await page.locator('[data-chart-for] canvas').count()).toBe(2); // the organization's and Customer Support's
    expect(await page.locator('#teams-summary tbody tr').count()).toBe(3);
    await cb.audit(page, 'overview, one team chosen');

    // Alerts: unread marked, then read: GET /alerts shows readAt.
    await page.getByRole('link', { name: 'Alerts', exact: true }).click();
    await page.waitForURL(/\/console\/alerts$/);
    expect(await page.getByRole('cell', { name: 'Unread' }).count()).toBe(1);
    expect(await page.getByRole('cell', { name: /^Week of .*, Engineering: mood averaged 2\.40 from 21 answers, at or below the low level/ }).count()).toBe(1);
    await cb.audit(page, 'alerts');
    await page.screenshot({ path: shot('alerts') });
    await page.getByRole('button', { name: /^Mark read: Week of .*, Engineering$/ }).click();
    await page.getByText('2 alerts marked read').waitFor();
    expect((await get(t.app, '/v1/alerts', KEY)).json().items.map((a: { readAt: string | null }) => a.readAt === null)).toEqual([false, false]);

    // Actions: create one for a team, then move it to done.
    await page.getByRole('link', { name: 'Actions', exact: true }).click();
    await page.getByLabel('Title', { exact: true }).fill('Retro on <workload>');
    await page.getByLabel('Team (optional)').selectOption('team_a');
    await page.getByRole('button', { name: 'Create action' }).click();
    await page.getByText('Action “Retro on <workload>” created.').waitFor();
    await page.getByText('Edit Retro on <workload>').click();
    await page.getByLabel('Status').selectOption('done');
    await page.getByRole('button', { name: 'Save action' }).click();
    await page.getByText('Action “Retro on <workload>” saved.').waitFor();
    const [action] = (await get(t.app, '/v1/actions', KEY)).json().items;
    expect(action).toMatchObject({ title: 'Retro on <workload>', status: 'done', subteamId: 'team_a' });
    await cb.audit(page, 'actions');
    await page.screenshot({ path: shot('actions') });

    // Comments: the released week with the hostile texts, as text; hide one and show it again.
    await page.getByRole('link', { name: 'Comments', exact: true }).click();
    const week = commentWeek(start);
    await page.getByLabel('From').fill(week.from);
    await page.getByLabel('To').fill(week.to);
    await page.getByRole('button', { name: 'Show' }).click();
    await page.waitForURL(/comments\?from=/);
    const range = `?from=${week.from}&to=${week.to}`;
    const apiRange = `${range.replace(/^\?/, '')}&limit=100`;
    const snapshot = async () => ({
      comments: (await get(t.app, `/v1/comments?${apiRange}`, KEY)).json(),
      pulses: (await get(t.app, `/v1/pulses?from=${new Date(start - 60 * DAY).toISOString()}&limit=200`, KEY)).body,
      stats: (await get(t.app, '/v1/stats', KEY)).json(),
      daily: (await get(t.app, `/v1/stats/daily?from=${new Date(start - 60 * DAY).toISOString()}&to=${new Date(start).toISOString()}`, KEY)).body,
    });
    const before = await snapshot();
    expect(before.comments.items).toHaveLength(8);
    for (const c of COMMENTS) expect(await page.getByText(c, { exact: true }).count(), c).toBe(1);
    await cb.audit(page, 'comments');
    await page.screenshot({ path: shot('comments') });
    const shown = await page.locator('ol.comments li bdi').allTextContents();
    expect(shown).toEqual(before.comments.items.map((c: { comment: string }) => c.comment));

    await page.getByRole('button', { name: 'Hide comment 3' }).click();
    await page.getByText('Comment hidden').waitFor();
    const hidden = await snapshot();
    expect(hidden.comments.items).toEqual(before.comments.items.filter((_: unknown, i: number) => i !== 2));
    expect(hidden.comments.suppressed).toBe(before.comments.suppressed);
    expect(hidden.pulses).toBe(before.pulses);
    expect(hidden.stats).toEqual({ ...before.stats, weeklyPulseCount: hidden.stats.weeklyPulseCount, weeklyAvgLevel: hidden.stats.weeklyAvgLevel });
    expect(hidden.daily).toBe(before.daily);
    await cb.audit(page, 'comments after hiding');
    await page.getByRole('button', { name: 'Show again comment 1' }).click();
    await page.getByText('Comment shown again').waitFor();
    expect((await snapshot()).comments).toEqual(before.comments);

    // The audit log shows each of these changes by this member.
    await page.getByRole('link', { name: 'Audit log', exact: true }).click();
    for (const what of ['Alert marked read', 'Action created', 'Action changed', 'Comment hidden', 'Comment shown again']) {
      expect(await page.getByRole('cell', { name: what, exact: true }).count(), what).toBeGreaterThan(0);
    }
    await cb.audit(page, 'audit log');
    expect(await page.getByRole('button', { name: 'Export' }).count()).toBe(1);

    // API keys: a key made, then rolled with the form's default, a day of overlap (issue 53).
    await page.getByRole('link', { name: 'API keys', exact: true }).click();
    await page.getByLabel('Name', { exact: true }).fill('Power BI dashboard');
    await page.getByRole('button', { name: 'Create key' }).click();
    const made = (await page.getByLabel('New API key').textContent())!.trim();
    expect(await page.getByLabel('Old key of Power BI dashboard expires').inputValue()).toBe('24h');
    await page.getByRole('button', { name: 'Roll' }).first().click();
    await page.getByText(/rolled; the old one keeps working until/).waitFor();
    const rolledAt = Date.now();
    const expires = (await get(t.app, '/v1/stats', made)).statusCode;
    expect(expires).toBe(200);
    const [old] = await t.db.query<{ expires_at: Date }>(
      sql('t.old_key', `SELECT expires_at FROM api_keys WHERE org_id = 'org_pb' AND name = 'Power BI dashboard' AND expires_at IS NOT NULL`),
      [],
    );
    expect(Math.abs(old.expires_at.getTime() - (rolledAt + 86_400_000))).toBeLessThan(60_000);
    await cb.audit(page, 'keys');
    await page.goto(`${base}/console/keys`);
    await page.screenshot({ path: screenshotPath('console.png'), fullPage: true });

    // Sessions: this one, marked; signing out everywhere else leaves it.
    await page.getByRole('link', { name: 'Sessions', exact: true }).click();
    await page.waitForURL(/\/console\/sessions$/);
    expect(await page.getByRole('cell', { name: 'this one', exact: true }).count()).toBe(1);
    expect(await page.getByRole('button', { name: 'Sign out everywhere', exact: true }).count()).toBe(1);
    await cb.audit(page, 'sessions');
    await page.screenshot({ path: shot('sessions') });
  });

  it('a viewer reads every page, sees no control that changes anything, and nothing ran or left', async () => {
    const { page } = await joinConsole(cb, base, t.db, 'org_pb', { email: 'viewer@pb.example.com', role: 'viewer' });
    for (const name of ['Overview', 'Alerts', 'Actions', 'Comments']) {
      await page.getByRole('link', { name, exact: true }).click();
      await page.waitForLoadState('load');
      expect(await page.locator('main form[method="post"]').count(), name).toBe(0);
      await cb.audit(page, `viewer ${name}`);
    }
    expect(cb.dialogs).toEqual([]);
    expect(cb.violations).toEqual([]);
    expect(cb.leaving).toEqual([]);
  });
});
