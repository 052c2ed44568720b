import type { AddressInfo } from 'node:net';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Dataset } from '../../src/domain/dataset.js';
import { createTestApp, get, type TestApp } from '../helpers/app.js';
import { BROWSER_MISSING, HOSTILE, joinConsole, launchConsoleBrowser, screenshotPath, type ConsoleBrowser } from '../helpers/browser.js';

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

/** Deterministic pulses of the last 40 days for two teams; the week two weeks back holds the hostile comments. */
function dataset(now: number): Dataset {
  const monday = mondayTwoWeeksBack(now);
  const pulses: NonNullable<NonNullable<Dataset['organizations']>[number]['pulses']> = [];
  for (let d = 40; d >= 1; d--) {
    for (let i = 0; i < 1 + (d % 4); i++) {
      const at = now - d * DAY + i * 3_600_000;
      if (at >= monday && at < monday + 7 * DAY) continue;
      pulses.push({
        id: `pb_${d}_${i}`,
        level: 1 + ((d + i) % 5),
        reason: null,
        comment: null,
        moderationStatus: 'CLEAN',
        subteamId: i % 2 === 0 ? 'team_a' : 'team_b',
        createdAt: new Date(at).toISOString(),
      });
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
  return {
    organizations: [
      {
        id: 'org_pb',
        name: HOSTILE,
        plan: 'business',
        memberCount: 30,
        createdAt: '2026-01-01T00:00:00.000Z',
        deletedAt: null,
        apiKeys: [{ key: KEY, name: 'bi', revoked: false }],
        teams: [
          { id: 'team_a', name: `Team ${HOSTILE}`, createdAt: '2026-01-01T00:00:00.000Z' },
          { id: 'team_b', name: 'Team B', createdAt: '2026-01-01T00:00:00.000Z' },
        ],
        pulses,
        alerts: [
          {
            id: 'al_pb',
            type: 'MOOD_DROP',
            message: `Mood fell in ${HOSTILE}`,
            weekISO: null,
            subteamId: 'team_a',
            readAt: null,
            createdAt: new Date(now - 2 * DAY).toISOString(),
          },
        ],
      },
    ],
  };
}

describe.skipIf(BROWSER_MISSING)("the organization's pages in a browser", () => {
  let t: TestApp;
  let base: string;
  let cb: ConsoleBrowser;
  const start = Date.now();

  beforeAll(async () => {
    t = await createTestApp({ dataset: dataset(start) });
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
        date: r.cells[0].textContent,
        count: Number(r.cells[1].textContent),
        avg: Number(r.cells[2].textContent),
      })),
    );

  it('an admin reads the overview, marks an alert read, moves an action to done, hides a comment and shows it again', async () => {
    const { page } = await joinConsole(cb, base, t.db, 'org_pb', { email: 'admin@pb.example.com', role: 'admin' });

    // Overview: every chart is drawn, from a table that is GET /stats/daily's answer for the range it names.
    for (const link of [null, 'year']) {
      if (link) await Promise.all([page.waitForURL(/overview\?from=/), page.getByRole('link', { name: link, exact: true }).click()]);
      await page.waitForSelector('[data-chart-for="days-org"] canvas');
      expect(await page.locator('[data-chart-for] canvas').count()).toBeGreaterThanOrEqual(3);
      const query = /GET \/v1\/stats\/daily\?(from=[0-9TZ:.-]+Z&to=[0-9TZ:.-]+Z)/.exec((await page.locator('main p').first().textContent()) ?? '')![1];
      const daily = await get(t.app, `/v1/stats/daily?${query}`, KEY);
      expect(daily.statusCode).toBe(200);
      expect(await tableRows(page, 'days-org')).toEqual(daily.json().days);
      expect(daily.json().days.length).toBeGreaterThan(20);
      await cb.audit(page, `overview ${link ?? 'default'}`);
    }
    await expect(page.getByRole('img', { name: /Chart of All of/ })).toBeDefined();
    expect(await page.getByText(`Team ${HOSTILE}`, { exact: true }).count()).toBeGreaterThan(0);
    await page.screenshot({ path: shot('overview'), fullPage: false });
    // One team's chart, chosen with the select (the page past the inline bound works the same way).
    await page.getByLabel('Team chart').selectOption('team_b');
    await Promise.all([page.waitForURL(/team=team_b/), page.getByRole('button', { name: 'Show' }).click()]);
    await page.waitForSelector('[data-chart-for="days-team-1"] canvas');
    expect(await page.locator('[data-chart-for] canvas').count()).toBe(2); // the organization's and Team B's
    expect(await page.locator('#teams-summary tbody tr').count()).toBe(2);
    await cb.audit(page, 'overview, one team chosen');

    // Alerts: unread marked, then read: GET /alerts shows readAt.
    await page.getByRole('link', { name: 'Alerts', exact: true }).click();
    await page.waitForURL(/\/console\/alerts$/);
    expect(await page.getByRole('cell', { name: 'Unread' }).count()).toBe(1);
    await cb.audit(page, 'alerts');
    await page.getByRole('button', { name: /^Mark read/ }).click();
    await page.getByText('Alert marked read').waitFor();
    expect((await get(t.app, '/v1/alerts', KEY)).json().items[0].readAt).not.toBeNull();
    await page.screenshot({ path: shot('alerts') });

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
    for (const what of ['alert.read', 'action.created', 'action.updated', 'comment.hidden', 'comment.shown']) {
      expect(await page.getByRole('cell', { name: what, exact: true }).count(), what).toBeGreaterThan(0);
    }
    await cb.audit(page, 'audit log');
    expect(await page.getByRole('button', { name: 'Export' }).count()).toBe(1);

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
