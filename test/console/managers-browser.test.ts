import type { AddressInfo } from 'node:net';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { consoleBaseUrl } from '../../src/config.js';
import type { Dataset } from '../../src/domain/dataset.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { acceptInvitation, BROWSER_MISSING, joinConsole, launchConsoleBrowser, screenshotPath, type ConsoleBrowser } from '../helpers/browser.js';

/**
 * Issue 53, item 6's last task in headless Chromium: an owner invites a manager for one team from
 * the Members page (without SMTP_URL, so the page shows the link), the manager accepts it and
 * sees their team only: the navigation of their pages, their team's figures, alerts and actions,
 * never the other team's or the organization's; another page is refused. axe-core finds nothing
 * serious or critical at 1280 and at 360 pixels, no CSP violation, nothing leaves 127.0.0.1.
 */
const DAY = 86_400_000;

function dataset(now: number): Dataset {
  const day = Math.floor((now - 2 * DAY) / DAY) * DAY + 9 * 3_600_000;
  const pulses = (team: string, n: number, level: number) =>
    Array.from({ length: n }, (_, i) => ({
      id: `pmb_${team}_${i}`,
      level: level + (i % 2),
      reason: null,
      comment: null,
      moderationStatus: 'CLEAN' as const,
      subteamId: team,
      createdAt: new Date(day + i * 600_000).toISOString(),
    }));
  return {
    organizations: [
      {
        id: 'org_mb',
        name: 'Northwind Traders',
        plan: 'business',
        memberCount: 30,
        createdAt: '2026-01-01T00:00:00.000Z',
        deletedAt: null,
        teams: [
          { id: 'team_a', name: 'Customer Support', createdAt: '2026-01-01T00:00:00.000Z' },
          { id: 'team_b', name: 'Engineering', createdAt: '2026-01-01T00:00:00.000Z' },
        ],
        pulses: [...pulses('team_a', 6, 3), ...pulses('team_b', 7, 1)],
        alerts: [
          {
            id: 'al_mb_b',
            type: 'LOW_MOOD',
            message: 'Engineering alert',
            weekISO: null,
            subteamId: 'team_b',
            readAt: null,
            createdAt: new Date(now - DAY).toISOString(),
          },
        ],
        actions: [
          {
            id: 'act_mb_a',
            title: 'Support rota review',
            status: 'active',
            subteamId: 'team_a',
            startDate: new Date(now - DAY).toISOString(),
            createdAt: new Date(now - DAY).toISOString(),
          },
          {
            id: 'act_mb_b',
            title: 'Engineering on-call fix',
            status: 'active',
            subteamId: 'team_b',
            startDate: new Date(now - DAY).toISOString(),
            createdAt: new Date(now - DAY).toISOString(),
          },
        ],
      },
    ],
  };
}

describe.skipIf(BROWSER_MISSING)('a manager in a browser', () => {
  let t: TestApp;
  let base: string;
  let cb: ConsoleBrowser;

  beforeAll(async () => {
    t = await createTestApp({ dataset: dataset(Date.now()) });
    await t.app.listen({ host: '127.0.0.1', port: 0 });
    base = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
    cb = await launchConsoleBrowser();
  }, 60_000);

  afterAll(async () => {
    await cb?.close();
    await t?.close();
  }, 120_000);

  /** axe at 1280 and at 360 pixels wide (the page loaded again at that width, as a phone loads it), back to 1280. */
  const auditBoth = async (page: Page, what: string) => {
    await cb.audit(page, `${what} at 1280`);
    await page.setViewportSize({ width: 360, height: 800 });
    await page.reload();
    await cb.audit(page, `${what} at 360`);
    // The page fits the phone's width (a table scrolls inside its own region).
    expect(await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth), `${what} fits 360 px`).toBe(true);
    await page.setViewportSize({ width: 1280, height: 900 });
    await page.reload();
  };

  it('an owner invites a manager of one team, who accepts and sees only that team', async () => {
    const { page: owner } = await joinConsole(cb, base, t.db, 'org_mb', { email: 'owner@mb.example.com', role: 'owner' });
    await owner
      .getByRole('navigation')
      .getByRole('link', { name: /^members$/i })
      .click();
    await owner.waitForURL(`${base}/console/members`);
    await auditBoth(owner, 'members');
    await owner.getByLabel(/^email$/i).fill('lead@mb.example.com');
    await owner.getByLabel(/^role$/i).selectOption('manager');
    await owner.getByRole('checkbox', { name: 'Customer Support' }).check();
    await owner.getByRole('button', { name: /^invite$/i }).click();
    await owner.waitForURL(`${base}/console/members`);
    expect(await owner.getByRole('status').first().textContent()).toContain('Invitation for lead@mb.example.com (manager of Customer Support) created.');
    expect(await owner.getByRole('row', { name: /lead@mb\.example\.com/ }).textContent()).toContain('manager of Customer Support');
    const shown = (await owner.locator('#invitation-link').textContent())!.trim();
    await owner.screenshot({ path: screenshotPath('console-members-manager.png'), fullPage: true });
    await auditBoth(owner, 'members after the invitation');
    const link = shown.replace(consoleBaseUrl(t.config), base);
    expect(link.startsWith(`${base}/console/invitations/`)).toBe(true);

    const context = await cb.context();
    const lead = await context.newPage();
    await acceptInvitation(lead, link);
    const nav = await lead.getByRole('navigation').getByRole('link').allTextContents();
    expect(nav.map((s) => s.trim())).toEqual(['Overview', 'Alerts', 'Actions', 'Comments', 'Account', 'Sessions']);
    const main = (await lead.getByRole('main').textContent())!;
    expect(main).toContain('How your teams are doing');
    expect(await lead.locator('#heatmap tbody th').allTextContents()).toEqual(['Customer Support']);
    expect(main).not.toContain('Engineering');
    expect(main).not.toContain('Whole organization');
    expect(main).toContain('Support rota review');
    await lead.screenshot({ path: screenshotPath('console-manager-overview.png'), fullPage: true });
    await auditBoth(lead, 'manager overview');

    for (const name of ['Alerts', 'Actions', 'Comments']) {
      await lead.getByRole('navigation').getByRole('link', { name, exact: true }).click();
      await lead.waitForURL(new RegExp(`/console/${name.toLowerCase()}`));
      expect(await lead.getByRole('main').textContent()).not.toContain('Engineering');
      await auditBoth(lead, `manager ${name}`);
    }
    expect(await lead.getByLabel('Team').inputValue()).toBe('team_a');

    const refused = await lead.goto(`${base}/console/keys`);
    expect(refused?.status()).toBe(403);
    expect(await lead.getByRole('heading', { level: 1 }).textContent()).toBe('Not allowed');
    await auditBoth(lead, 'a page a manager may not see');

    expect(cb.violations).toEqual([]);
    expect(cb.leaving).toEqual([]);
    expect(cb.dialogs).toEqual([]);
  }, 120_000);
});
