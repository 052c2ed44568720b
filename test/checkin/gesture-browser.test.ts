import { createServer, type AddressInfo } from 'node:net';
import type { BrowserContext, Request } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readDataset } from '../fixtures/dataset.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { BROWSER_MISSING, launchConsoleBrowser, type ConsoleBrowser } from '../helpers/browser.js';
import { sql } from '../../src/db/executor.js';
import { operatorActor } from '../../src/domain/audit.js';
import { createRespondent } from '../../src/domain/checkins/roster.js';
import { runRounds } from '../../src/domain/checkins/rounds.js';
import { linkToken } from './helpers.js';

/**
 * Issue 51 in Chromium (the page's own script; its outcome does not depend on the engine, so it
 * runs in the PGlite pass): the token is obtained at the first gesture, never on load, so a mail
 * scanner that runs the page uses nothing up; a link opened again says what happened; the page
 * works out the week from the device's clock and refuses a key of another week; a team with
 * newcomers starts with "Don't attach my team" chosen and says why; answers without a team that
 * could be narrowed to fewer than 5 people are said to be so before anything is sent.
 */
const freePort = () =>
  new Promise<number>((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address() as AddressInfo;
      s.close(() => resolve(port));
    });
  });

describe.skipIf(BROWSER_MISSING)('the check-in page: a token on a gesture, the week by its own clock, a team one can leave', () => {
  let t: TestApp;
  let base: string;
  let cb: ConsoleBrowser;
  const now = new Date('2026-11-24T10:00:00.000Z');
  const ORG = 'org_acme';
  const mails: { to: string; text: string }[] = [];
  const link = (to: string) => `${base}/checkin/o/${ORG}#${linkToken(mails.find((m) => m.to === to)!.text)}`;
  const phone = async (at: Date = now): Promise<{ context: BrowserContext; posts: string[] }> => {
    const context = await cb.browser.newContext({ viewport: { width: 360, height: 740 } });
    await context.route('**/*', (route) => (new URL(route.request().url()).hostname === '127.0.0.1' ? route.continue() : route.abort()));
    await context.clock.setFixedTime(at);
    const posts: string[] = [];
    context.on('request', (r: Request) => r.method() === 'POST' && posts.push(new URL(r.url()).pathname.replace(ORG, '{org}')));
    return { context, posts };
  };

  beforeAll(async () => {
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    t = await createTestApp({ dataset: readDataset(), clock: () => now, env: { PUBLIC_BASE_URL: base } });
    const long = new Date('2026-09-01T00:00:00.000Z');
    // Web: five of long standing and one who joined last week. Solo: a team of one, under the organization's key.
    for (let i = 1; i <= 5; i++) await createRespondent(t.db, ORG, { email: `web${i}@acme.test`, team: 'Web' }, operatorActor(), long);
    await createRespondent(t.db, ORG, { email: 'new@acme.test', team: 'Web' }, operatorActor(), new Date('2026-11-18T00:00:00.000Z'));
    await createRespondent(t.db, ORG, { email: 'solo@acme.test', team: 'Solo' }, operatorActor(), long);
    await runRounds(t.db, { linkFor: (o, tok) => `${base}/checkin/o/${o}#${tok}`, send: async (m) => void mails.push(m) }, now);
    await t.app.listen({ host: '127.0.0.1', port });
    cb = await launchConsoleBrowser();
  }, 120_000);
  afterAll(async () => {
    await cb?.close();
    await t?.close();
  });

  const state = async (to: string) => {
    const { createHash } = await import('node:crypto');
    const hash = createHash('sha256')
      .update(linkToken(mails.find((m) => m.to === to)!.text)!)
      .digest();
    return (
      await t.db.query<{ state: number }>(sql('t.gesture.state', 'SELECT state FROM checkin_round_links WHERE org_id = $1 AND token_hash = $2'), [ORG, hash])
    )[0]!.state;
  };

  it('a page loaded by a mail scanner obtains no token; the reader who comes later is told, and answers with the first gesture', async () => {
    const scanner = await phone();
    const page = await scanner.context.newPage();
    await page.goto(link('web1@acme.test'));
    await page.getByRole('radio', { name: '3 · Okay' }).waitFor({ state: 'visible' });
    await page.waitForTimeout(300);
    expect(scanner.posts).toEqual(['/checkin/o/{org}/open']);
    expect(await state('web1@acme.test')).toBe(1); // opened, nothing issued
    await scanner.context.close();

    const reader = await phone();
    const again = await reader.context.newPage();
    await again.goto(link('web1@acme.test'));
    await expect.poll(() => again.getByRole('alert').textContent()).toContain('was opened before (perhaps by your mail program checking it');
    // Web has a newcomer: the page says so and starts with the team left out, saying why.
    expect(await again.locator('#team-size').textContent()).toBe(
      "Your team has 6 people on this week's check-in; one of them joined it in the last four weeks.",
    );
    expect(await again.getByRole('radio', { name: "Don't attach my team" }).isChecked()).toBe(true);
    expect(await again.locator('#attach-why').isVisible()).toBe(true);
    // Without a team, the answer stands with Solo's one person by default: the page warns before anything is sent.
    expect(await again.locator('#small-org').textContent()).toBe(
      'Careful: only 1 person answers without a team by default, so an answer without a team could be narrowed to fewer than 5 people.',
    );
    await cb.audit(again, 'check-in page with a newcomer');
    expect(reader.posts).toEqual(['/checkin/o/{org}/open']);
    await again.getByRole('radio', { name: 'Attach my team (Web)' }).check();
    expect(await again.locator('#small-org').isVisible()).toBe(false);
    await expect.poll(() => reader.posts).toEqual(['/checkin/o/{org}/open', '/checkin/o/{org}/issue']);
    await again.getByRole('radio', { name: '4 · Good' }).check();
    await again.getByRole('button', { name: 'Send my answer' }).click();
    await again.getByRole('heading', { name: 'Thank you' }).waitFor({ state: 'visible' });
    expect(reader.posts).toEqual(['/checkin/o/{org}/open', '/checkin/o/{org}/issue', '/checkin/answer']);
    await reader.context.close();

    // The same link on another device: it says plainly what happened and what to do, and sends nothing more.
    const other = await phone();
    const third = await other.context.newPage();
    await third.goto(link('web1@acme.test'));
    await expect.poll(() => third.getByRole('alert').textContent()).toContain('If that was not you, ask the people who run the check-ins for a new link.');
    expect(await third.locator('#answer').isHidden()).toBe(true);
    expect(other.posts).toEqual(['/checkin/o/{org}/open']);
    await other.context.close();
    expect(cb.violations).toEqual([]);
    expect(cb.leaving).toEqual([]);
  });

  it("a device whose clock is in another week refuses to answer: the service cannot hand it a week's key of its own", async () => {
    const late = await phone(new Date('2026-12-16T10:00:00.000Z'));
    const page = await late.context.newPage();
    await page.goto(link('web2@acme.test'));
    await expect.poll(() => page.getByRole('alert').textContent()).toContain("the date on this device is not in this link's week");
    expect(await page.locator('#answer').isHidden()).toBe(true);
    expect(late.posts).toEqual(['/checkin/o/{org}/open']);
    await late.context.close();
    // In the grace hours after the week, the week's key is still the one: the page answers.
    const grace = await phone(new Date('2026-12-01T10:00:00.000Z'));
    const ok = await grace.context.newPage();
    await ok.goto(link('web2@acme.test'));
    await ok.getByRole('radio', { name: '2 · Bad' }).waitFor({ state: 'visible' });
    // Opened above by the device in the wrong week, which sent nothing more: the page says so, and answers.
    expect(await ok.getByRole('alert').textContent()).toContain('was opened before');
    expect(await ok.locator('#answer').isVisible()).toBe(true);
    await grace.context.close();
  });
});
