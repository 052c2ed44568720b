import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { acceptInvitation, BROWSER_MISSING, HOSTILE, launchConsoleBrowser, type ConsoleBrowser } from '../helpers/browser.js';
import { createCliDatabase } from '../helpers/cli.js';
import { DB_KIND } from '../helpers/db.js';
import { CLI, freePort, ROOT } from '../helpers/process.js';
import { format } from '../../src/i18n/index.js';

/**
 * Issue 45's "done when", as a newcomer does it, on the embedded database and on PostgreSQL: `npm
 * start` on an empty database (`serve --demo-if-empty`, a real process) prints the demo's key, the
 * console's invitation and the way to this week's check-in; in Chromium the new owner accepts the
 * invitation, opens the People page that was printed, adds themself to the roster, downloads the
 * week's links (no SMTP_URL), opens their own link on a 360-pixel phone, answers, and the pulse is
 * in GET /v1/pulses with the demo's key. Then the People page in its other states (a CSV file
 * refused with its line, a roster of teams over and under 5 with hostile text, settings saved,
 * participation counted, and at 360 px): axe-core finds no serious or critical violation in any
 * (WCAG 2.2 AA, CONTRACT.md section 11), no CSP violation, nothing leaves 127.0.0.1.
 */
const PHONE = { width: 360, height: 740 };

describe.skipIf(BROWSER_MISSING)(`a first check-in from npm start, and the People page under axe (${DB_KIND})`, { timeout: 300_000 }, () => {
  let cdb: Awaited<ReturnType<typeof createCliDatabase>>;
  let server: ChildProcess;
  let out = '';
  let base: string;
  let cb: ConsoleBrowser;
  let admin: Page;

  beforeAll(async () => {
    cdb = await createCliDatabase();
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    server = spawn(process.execPath, [CLI, 'serve', '--demo-if-empty'], {
      cwd: ROOT,
      env: { ...process.env, ...cdb.env, PORT: String(port), HOST: '127.0.0.1', LOG_LEVEL: 'warn', ALERTS_INTERVAL_MINUTES: '0' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    server.stdout!.on('data', (d) => (out += d));
    server.stderr!.on('data', (d) => (out += d));
    for (const until = Date.now() + 240_000; !/checkins links --org \S+\n/.test(out); await new Promise((r) => setTimeout(r, 100))) {
      if (server.exitCode !== null || Date.now() > until) throw new Error(`npm start printed no way to the check-in:\n${out}`);
    }
    cb = await launchConsoleBrowser();
  }, 300_000);

  afterAll(async () => {
    await cb?.close();
    if (server && server.exitCode === null) {
      server.kill('SIGTERM');
      await new Promise((r) => server.once('exit', r));
    }
    await cdb?.close();
  }, 120_000);

  it("follows what npm start printed: the People page, oneself on the roster, the week's link on a phone, the pulse in the API", async () => {
    const key = /API key \(shown once\): (cp_live_\w+)/.exec(out)?.[1];
    const org = /Demo organization (org_demo_\w+)/.exec(out)?.[1];
    const invitation = /Console: open (\S+) to become the owner/.exec(out)?.[1];
    const people = /^Check-ins: add yourself to the roster on the console's People page, (\S+), and answer this week's check-in:$/m.exec(out)?.[1];
    expect([key, org, invitation, people].every(Boolean), out).toBe(true);
    expect(people).toBe(`${base}/console/people`);
    // The hint names the database it was printed for (issue 54): this test's own.
    expect(out).toMatch(
      new RegExp(
        `without SMTP_URL no mail goes; download the week's links on the Check-ins page, ${base}/console/checkins \\(CSV\\), or print them: (DATA_DIR|DATABASE_URL)=\\S+ npx climate-pulse checkins links --org ${org}\n`,
      ),
    );

    const context = await cb.context();
    admin = await context.newPage();
    await acceptInvitation(admin, invitation!);
    await admin.goto(people!);
    expect(await admin.getByRole('heading', { name: 'People', level: 1 }).isVisible()).toBe(true);
    await cb.audit(admin, 'People, no one yet');

    await admin.getByLabel('Email', { exact: true }).fill('me@example.com');
    await admin.getByLabel('Team (optional)').fill('Engineering');
    await admin.getByRole('button', { name: 'Add person' }).click();
    await admin.getByText('me@example.com added.').waitFor();
    expect(await admin.getByRole('row', { name: /me@example\.com Engineering Added by hand the organization \(no team\)/ }).count()).toBe(1);
    await cb.audit(admin, 'People, one person added');

    await admin.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: 'Check-ins', exact: true }).click();
    await admin.getByRole('heading', { name: 'Check-ins', level: 1 }).waitFor();
    await cb.audit(admin, 'Check-ins, no round yet, no SMTP');
    const [download] = await Promise.all([admin.waitForEvent('download'), admin.getByRole('button', { name: "Download this week's links (CSV)" }).click()]);
    expect(download.suggestedFilename()).toMatch(/^checkin-links-\d{4}-\d\d-\d\d\.csv$/);
    const rows = readFileSync((await download.path())!, 'utf8')
      .trim()
      .split('\r\n');
    // The demo's 23 people (issue 53: a roster and last week's round) and you.
    expect(rows).toHaveLength(25);
    expect(rows[0]).toBe('email,team,link');
    const mineRow = rows.find((r) => r.startsWith('me@example.com,'));
    const link = new RegExp(`^me@example\\.com,Engineering,(${base}/checkin/o/${org}#[A-Za-z0-9_-]{32})$`).exec(mineRow ?? '')?.[1];
    expect(link, mineRow).toBeDefined();

    // The employee's phone: the link from the file, one answer.
    const phone = await cb.context();
    const page = await phone.newPage();
    await page.setViewportSize(PHONE);
    await page.goto(link!);
    const good = page.getByRole('radio', { name: '4 · Good' });
    await good.waitFor({ state: 'visible' });
    expect(await page.getByRole('heading', { name: 'How was your week?' }).isVisible()).toBe(true);
    expect(await page.locator('#team').textContent()).toContain('counts for the whole organization');
    await cb.audit(page, 'check-in page at 360 px');
    await good.check();
    await page.getByLabel('Anything to add?').fill('My first check-in.');
    await page.getByRole('button', { name: 'Send my answer' }).click();
    await page.getByRole('heading', { name: 'Thank you' }).waitFor({ state: 'visible' });
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(PHONE.width);
    await phone.close();

    // The pulse, with the demo's key: no team (one person in Engineering), level 4, at the hour.
    const hour = new Date(Math.floor(Date.now() / 3_600_000) * 3_600_000);
    const res = await fetch(`${base}/v1/pulses?from=${new Date(hour.getTime() - 3_600_000).toISOString()}&limit=200`, {
      headers: { authorization: `Bearer ${key}` },
    });
    expect(res.status).toBe(200);
    const items = ((await res.json()) as { items: { level: number; subteamId: string | null; createdAt: string }[] }).items;
    const mine = items.filter((p) => p.subteamId === null);
    expect(mine).toHaveLength(1);
    expect(mine[0].level).toBe(4);
    expect([hour.toISOString(), new Date(hour.getTime() - 3_600_000).toISOString()]).toContain(mine[0].createdAt);

    // The Check-ins page counts the week: one invited, shown as fewer than 5; the round's status.
    await admin.reload();
    expect(await admin.getByRole('row', { name: /\(no team\) fewer than 5 fewer than 5 fewer than 5/ }).count()).toBe(2); // this week's, and the demo's last week
    expect(await admin.getByRole('row', { name: /links handed out as a file/ }).count()).toBe(2); // this week's, and the demo's last week
    await cb.audit(admin, 'Check-ins, after a round');
    await admin.goto(people!);
  });

  it('the People page and the Check-ins page in their other states: no serious or critical axe violation, at 1280 and 360 px', async () => {
    // An HRIS export as a file: extra columns, one bad line; every error listed, the text kept, nothing changed.
    const lines = [
      'Employee ID,Name,E-mail,Department,Start date',
      ...[1, 2, 3, 4, 5, 6].map((i) => `${i},Web ${i},web${i}@example.com,Web,2024-01-0${i}`),
      '7,Me,me@example.com,Engineering,2024-02-01',
      `8,Odd,odd@example.com,${HOSTILE.replace(/[",]/g, '')},2024-03-01`,
      '9,Broken,broken line,Web,2024-04-01',
    ];
    await admin.getByLabel(/^CSV file with a header row/).setInputFiles({ name: 'export.csv', mimeType: 'text/csv', buffer: Buffer.from(lines.join('\n')) });
    await admin.getByRole('button', { name: 'Replace roster' }).click();
    await admin.getByText("Line 10: 'email' must be an email address.").waitFor();
    expect(await admin.getByLabel('Or paste the CSV here').inputValue()).toBe(lines.join('\n'));
    expect(await admin.getByRole('row', { name: /me@example\.com/ }).count()).toBe(1);
    await cb.audit(admin, 'People, a refused file');

    // The kept text, corrected in place, goes through.
    await admin.getByLabel('Or paste the CSV here').fill(lines.slice(0, -1).join('\n'));
    await admin.getByRole('button', { name: 'Replace roster' }).click();
    await admin.getByText('Roster replaced: 7 added, 23 removed, 0 moved, 1 unchanged.').waitFor();
    expect(await admin.getByRole('row', { name: /^Web 6 6 as the team/ }).count()).toBe(1);
    await cb.audit(admin, 'People, a roster of three teams');

    // A move by the button named with the person, back to the same search.
    await admin.getByLabel('Search by email or team').fill('web');
    await admin.getByRole('button', { name: 'Search', exact: true }).click();
    await admin.getByLabel('New team for web1@example.com').fill('Data');
    await admin.getByRole('button', { name: 'Move web1@example.com', exact: true }).click();
    await admin.getByText('web1@example.com: team changed; it applies from the next round.').waitFor();
    expect(new URL(admin.url()).search).toBe('?q=web');
    await cb.audit(admin, 'People, a search and a move');

    await admin.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: 'Check-ins', exact: true }).click();
    await admin.getByLabel('Day of the round').selectOption('Tuesday');
    await admin.getByLabel(/^Time zone/).fill('Paris');
    await admin.getByLabel('Reasons offered, one per line (optional)').fill('workload\nteam');
    await admin.getByLabel('Words that make an answer arrive flagged, one per line').fill('idiot');
    await admin.getByRole('button', { name: 'Save check-in settings' }).click();
    await admin.getByText('Check-in settings saved.').waitFor();
    expect(await admin.getByLabel(/^Time zone/).inputValue()).toBe('Europe/Paris');
    await cb.audit(admin, 'Check-ins, settings saved');

    await admin.setViewportSize(PHONE);
    await admin.reload();
    await cb.audit(admin, 'Check-ins at 360 px');
    await admin.goto(`${base}/console/people`);
    await admin.reload();
    await cb.audit(admin, 'People at 360 px');
    expect(cb.dialogs).toEqual([]);
    expect(cb.violations).toEqual([]);
    expect(cb.leaving).toEqual([]);
  });

  it('tells an employee over the per-address limit to wait a minute, in words (issue 53)', async () => {
    const phone = await cb.context();
    const page = await phone.newPage();
    await page.setViewportSize(PHONE);
    await page.route('**/checkin/o/*/open', (route) =>
      route.fulfill({
        status: 429,
        contentType: 'application/json',
        headers: { 'retry-after': '60' },
        body: JSON.stringify({ error: { code: 'rate_limited', message: 'Too many requests; try again in a minute.' } }),
      }),
    );
    const org = /Demo organization (org_demo_\w+)/.exec(out)![1];
    await page.goto(`${base}/checkin/o/${org}#${'x'.repeat(32)}`);
    await page.getByRole('alert').filter({ hasText: 'Too many check-ins came from your network' }).waitFor();
    expect(await page.getByRole('alert').textContent()).toBe(format('en', 'checkin.limited'));
    await cb.audit(page, 'check-in page over the limit, at 360 px');
    await phone.close();
    expect(cb.violations).toEqual([]);
  });
});
