import { createServer, type AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';
import type { Request } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KEYS, readDataset } from '../fixtures/dataset.js';
import { createTestApp, get, type TestApp } from '../helpers/app.js';
import { BROWSER_MISSING, joinConsole, launchConsoleBrowser, type ConsoleBrowser } from '../helpers/browser.js';
import { DB_KIND } from '../helpers/db.js';
import { operatorActor } from '../../src/domain/audit.js';
import { createRespondent } from '../../src/domain/checkins/roster.js';
import { startRoundSchedule } from '../../src/jobs/rounds.js';

/**
 * The proof of issue 45 (CONTRACT.md section 12, "Proof"), on PGlite and on PostgreSQL: a roster of
 * 6 in one team; a round sent by two schedulers at once (two server processes) to a real SMTP
 * server started here, one mail per respondent; Chromium, 360 pixels wide, opens each link from
 * the received mail and answers; the pulses are in GET /v1/pulses and /v1/stats, and the comments
 * in GET /v1/comments once the week is released; a second answer with the same token is 409, a
 * second issuance refused; a page given a key that is not the published one answers nothing.
 */
interface Received {
  to: string[];
  raw: string;
}
const decoded = (raw: string) => raw.replace(/=\r?\n/g, '').replace(/=([0-9A-F]{2})/g, (_, h: string) => String.fromCharCode(parseInt(h, 16)));
const freePort = () =>
  new Promise<number>((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address() as AddressInfo;
      s.close(() => resolve(port));
    });
  });
const silent = { info() {}, warn() {} };

describe.skipIf(BROWSER_MISSING)(`check-ins from the mail, in Chromium (${DB_KIND})`, () => {
  let t: TestApp;
  let base: string;
  let cb: ConsoleBrowser;
  let smtp: SMTPServer;
  const inbox: Received[] = [];
  let now = new Date('2026-11-23T09:30:00.000Z');
  const ORG = 'org_acme';
  const schedules: { stop(): Promise<void> }[] = [];
  const links = new Map<string, string>();

  beforeAll(async () => {
    smtp = new SMTPServer({
      authOptional: true,
      disabledCommands: ['STARTTLS', 'AUTH'],
      onData(stream, session, callback) {
        const chunks: Buffer[] = [];
        stream.on('data', (c: Buffer) => chunks.push(c));
        stream.on('end', () => {
          inbox.push({ to: session.envelope.rcptTo.map((r) => r.address), raw: decoded(Buffer.concat(chunks).toString('utf8')) });
          callback();
        });
      },
    });
    await new Promise<void>((resolve) => smtp.listen(0, '127.0.0.1', () => resolve()));
    const smtpPort = (smtp.server.address() as AddressInfo).port;
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    t = await createTestApp({
      dataset: readDataset(),
      clock: () => now,
      env: {
        SMTP_URL: `smtp://127.0.0.1:${smtpPort}`,
        MAIL_FROM: 'Climate Pulse <checkin@acme.test>',
        PUBLIC_BASE_URL: base,
        COMMENTS_RELEASE_DELAY_HOURS: '24',
      },
    });
    // On the roster since October: nobody joined Web in the four weeks before the round, so the page attaches the team by default.
    for (let i = 1; i <= 6; i++)
      await createRespondent(t.db, ORG, { email: `web${i}@acme.test`, team: 'Web' }, operatorActor(), new Date('2026-10-01T00:00:00.000Z'));
    await t.app.listen({ host: '127.0.0.1', port });
    cb = await launchConsoleBrowser();
  }, 120_000);

  afterAll(async () => {
    for (const s of schedules) await s.stop();
    await cb?.close();
    await t?.close();
    await new Promise<void>((resolve) => (smtp ? smtp.close(() => resolve()) : resolve()));
  });

  it("the HR lead previews the round, mails a test to themself, and sends this week's round now after a confirmation (issue 53)", async () => {
    const { context, page } = await joinConsole(cb, base, t.db, ORG, { email: 'hr@acme.test', role: 'admin' });
    await page.goto(`${base}/console/checkins`);
    await page.getByRole('heading', { name: 'Check-ins', level: 1 }).waitFor();
    expect(await page.getByLabel('Preview of the mail').textContent()).toContain("This week's check-in of Acme is open.");
    await cb.audit(page, 'Check-ins with SMTP, before the round');
    await page.getByRole('button', { name: 'Send a test mail to me (hr@acme.test)' }).click();
    await page.getByText('A test mail went to hr@acme.test.').waitFor();
    expect(inbox.map((m) => m.to)).toEqual([['hr@acme.test']]);
    const testLink = new RegExp(`${base}/console/checkins/test-link`).exec(inbox[0].raw)?.[0];
    expect(testLink, inbox[0].raw).toBeDefined();
    inbox.length = 0;
    await page.goto(testLink!);
    await page.getByRole('heading', { name: 'This is a test link', level: 1 }).waitFor();
    await cb.audit(page, 'the test link');
    await page.goto(`${base}/console/checkins`);
    await page.getByRole('link', { name: "Send this week's round now…" }).click();
    await page.getByRole('heading', { name: "Send this week's round now?", level: 1 }).waitFor();
    await cb.audit(page, 'the confirmation of send now');
    await page.getByRole('button', { name: 'Send to 6 people' }).click();
    await page.getByText("This week's round started: 6 mails go out within a minute.").waitFor();
    expect(await page.getByRole('row', { name: /0 mails sent, 6 waiting/ }).count()).toBe(1);
    await cb.audit(page, 'Check-ins, the round sent now');
    await context.close();
  });

  it('two processes send the round: one mail per respondent, through the real SMTP server', async () => {
    const a = await startRoundSchedule({ db: t.db, config: t.config, log: silent, now: () => now, intervalMs: 3_600_000 });
    const b = await startRoundSchedule({ db: t.db, config: t.config, log: silent, now: () => now, intervalMs: 3_600_000 });
    schedules.push(a, b);
    const [ra, rb] = await Promise.all([a.runOnce(), b.runOnce()]);
    expect(ra.mailed + rb.mailed).toBe(6);
    expect(ra.failed + rb.failed).toBe(0);
    expect(inbox.flatMap((m) => m.to).sort()).toEqual([1, 2, 3, 4, 5, 6].map((i) => `web${i}@acme.test`));
    for (const m of inbox) {
      const link = new RegExp(`${base}/checkin/o/${ORG}#[A-Za-z0-9_-]{32}`).exec(m.raw)?.[0];
      expect(link, m.raw).toBeDefined();
      links.set(m.to[0], link!);
    }
    expect(new Set(links.values()).size).toBe(6);
  });

  it('without JavaScript the page explains why and sends nothing', async () => {
    const noJs = await cb.browser.newContext({ javaScriptEnabled: false, viewport: { width: 360, height: 740 } });
    const posts: string[] = [];
    noJs.on('request', (r: Request) => r.method() !== 'GET' && posts.push(r.url()));
    const page = await noJs.newPage();
    await page.goto(links.get('web2@acme.test')!);
    expect(await page.getByText('This page needs JavaScript').isVisible()).toBe(true);
    expect(await page.locator('#answer').isVisible()).toBe(false);
    expect(posts).toEqual([]);
    await noJs.close();
  });

  it('the page refuses a key that is not the published one, and sends nothing', async () => {
    const context = await cb.context();
    const issued: string[] = [];
    context.on('request', (r: Request) => r.url().includes('/issue') && issued.push(r.url()));
    await context.route('**/checkin/keys/**', async (route) => {
      const real = await route.fetch();
      const body = (await real.json()) as { keys: { publicKey: string }[] };
      const other = (await t.app.inject({ method: 'GET', url: `/checkin/keys/${ORG}` })).json() as { keys: unknown[] };
      expect(other.keys).toHaveLength(2); // Web's key and the organization's
      // The same published list, but the key swapped for one the page was not given.
      body.keys = body.keys.map((k) => ({ ...k, publicKey: k.publicKey.slice(0, 60) + (k.publicKey[60] === 'A' ? 'B' : 'A') + k.publicKey.slice(61) }));
      await route.fulfill({ response: real, json: body });
    });
    await context.clock.setFixedTime(now);
    const page = await context.newPage();
    await page.goto(links.get('web1@acme.test')!);
    await expect.poll(() => page.getByRole('alert').textContent()).toContain('is not the one published for your team and week');
    expect(await page.locator('#answer').isHidden()).toBe(true);
    expect(issued).toEqual([]);
    expect(page.url()).toBe(`${base}/checkin/o/${ORG}#lang=en`); // the token left the address bar; the page's language stays
    await context.close();
  });

  it('each respondent answers from the link in their mail on a 360-pixel phone, by keyboard for one', async () => {
    const answers: Record<string, unknown>[] = [];
    for (const [i, email] of [...links.keys()].sort().entries()) {
      const context = await cb.context();
      await context.close();
      const phone = await cb.browser.newContext({ viewport: { width: 360, height: 740 } });
      // The page answers under the key of the week its own clock is in: the device's clock reads the test's time.
      await phone.clock.setFixedTime(now);
      await phone.route('**/*', (route) => (new URL(route.request().url()).hostname === '127.0.0.1' ? route.continue() : route.abort()));
      phone.on('request', (r: Request) => r.url().endsWith('/checkin/answer') && answers.push(JSON.parse(r.postData()!)));
      const page = await phone.newPage();
      await page.goto(links.get(email)!);
      const level = page.getByRole('radio', { name: `${(i % 5) + 1} · ${['Very bad', 'Bad', 'Okay', 'Good', 'Very good'][i % 5]}` });
      await level.waitFor({ state: 'visible' });
      expect(await page.getByRole('heading', { name: 'How was your week?' }).isVisible()).toBe(true);
      expect(await page.locator('#team').textContent()).toBe('Team: Web');
      if (i === 0) {
        await cb.audit(page, 'check-in page');
        // Keyboard alone: focus the first answer, pick with the arrows, type, pass the team's
        // choice (attached by default here) and the link to how it works, submit with Enter.
        expect(await page.getByRole('radio', { name: 'Attach my team (Web)' }).isChecked()).toBe(true);
        await page.getByRole('radio', { name: '1 · Very bad' }).focus();
        await page.keyboard.press('Space');
        await page.keyboard.press('Tab');
        await page.keyboard.type('Keyboard only, all good.');
        await page.keyboard.press('Tab');
        await page.keyboard.press('Tab');
        await page.keyboard.press('Tab');
        await page.keyboard.press('Enter');
      } else {
        await level.check();
        await page.getByLabel('Anything to add?').fill(`Comment ${i}`);
        await page.getByRole('button', { name: 'Send my answer' }).click();
      }
      await page.getByRole('heading', { name: 'Thank you' }).waitFor({ state: 'visible' });
      expect(await page.locator('#thanks-comment').textContent()).toContain('from December 1, 2026');
      const width = await page.evaluate(() => document.documentElement.scrollWidth);
      expect(width).toBeLessThanOrEqual(360);
      if (i === 0) await cb.audit(page, 'thank-you');
      await phone.close();
    }
    expect(answers).toHaveLength(6);
    // What the answer carried: the token and the answer, nothing of the link or the person.
    for (const a of answers) expect(Object.keys(a).sort()).toEqual(['comment', 'keyId', 'level', 'message', 'orgId', 'reason', 'signature', 'team']);
    expect(cb.violations).toEqual([]);
    expect(cb.leaving).toEqual([]);

    // A second answer with a spent token: 409.
    const again = await fetch(`${base}/checkin/answer`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(answers[2]) });
    expect(again.status).toBe(409);
    expect(((await again.json()) as { error: { code: string } }).error.code).toBe('invalid_transition');

    // A second issuance for the week, in a fresh browser: refused, and the page says so.
    const fresh = await cb.context();
    await fresh.clock.setFixedTime(now);
    const page = await fresh.newPage();
    await page.goto(links.get('web3@acme.test')!);
    await expect.poll(() => page.getByRole('alert').textContent()).toContain('already used to send an answer, or to start one');
    await fresh.close();
    const token = new URL(links.get('web3@acme.test')!).hash.slice(1);
    const reissue = await fetch(`${base}/checkin/o/${ORG}/issue`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ token, blindedMessage: 'AAAA' }),
    });
    expect(reissue.status).toBe(409);

    const pulses = await get(t.app, '/v1/pulses?from=2026-11-23T00:00:00.000Z&to=2026-11-30T00:00:00.000Z&limit=100', KEYS.acme);
    const items = (pulses.json() as { items: { level: number; subteamId: string; createdAt: string; moderationStatus: string }[] }).items;
    expect(items.map((p) => [p.level, p.subteamId, p.createdAt, p.moderationStatus]).sort()).toEqual(
      [1, 1, 2, 3, 4, 5].map((l) => [l, 'team_web', '2026-11-23T09:00:00.000Z', 'CLEAN']).sort(),
    );
    const stats = (await get(t.app, '/v1/stats', KEYS.acme)).json() as { weeklyPulseCount: number };
    expect(stats.weeklyPulseCount).toBeGreaterThanOrEqual(6);

    // After the week and its release delay, the comments are released as one cell of 6.
    now = new Date('2026-12-01T01:00:00.000Z');
    const comments = await get(t.app, '/v1/comments?from=2026-11-23&to=2026-11-29&subteamId=team_web&limit=100', KEYS.acme);
    expect(comments.statusCode).toBe(200);
    expect((comments.json() as { items: { comment: string }[] }).items.map((c) => c.comment).sort()).toEqual([
      'Comment 1',
      'Comment 2',
      'Comment 3',
      'Comment 4',
      'Comment 5',
      'Keyboard only, all good.',
    ]);
  });
});
