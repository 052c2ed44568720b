import type { AddressInfo } from 'node:net';
import { createServer } from 'node:net';
import type { Page, Request } from 'playwright-core';
import { SMTPServer } from 'smtp-server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readDataset } from '../fixtures/dataset.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { BROWSER_MISSING, launchConsoleBrowser, type ConsoleBrowser } from '../helpers/browser.js';
import { operatorActor } from '../../src/domain/audit.js';
import { createRespondent } from '../../src/domain/checkins/roster.js';
import { dirOf, format, LOCALES, type MessageKey } from '../../src/i18n/index.js';
import { startRoundSchedule } from '../../src/jobs/rounds.js';

/**
 * Issue 57's proof for the check-in page (CONTRACT section 12, *In the respondent's language*), in
 * Chromium at 360 pixels: a respondent answers in every locale, axe-core clean, with no element
 * wider than the phone and no text cut (Arabic right to left, Japanese, and the pseudo-locale whose
 * every message is 40% longer); the language menu changes the page without any request; and the
 * answers given in eleven languages are stored as pulses identical byte for byte but for their id.
 */
const freePort = () =>
  new Promise<number>((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address() as AddressInfo;
      s.close(() => resolve(port));
    });
  });
const decoded = (raw: string) => raw.replace(/=\r?\n/g, '').replace(/=([0-9A-F]{2})/g, (_, h: string) => String.fromCharCode(parseInt(h, 16)));
const silent = { info() {}, warn() {} };

/** What overflows: the page wider than the phone, or an element whose text is cut by its own box. */
const overflow = (page: Page) =>
  page.evaluate(() => {
    const out: string[] = [];
    if (document.documentElement.scrollWidth > window.innerWidth) out.push(`page ${document.documentElement.scrollWidth}px wide`);
    for (const el of document.querySelectorAll<HTMLElement>('body *')) {
      if (el.offsetParent === null || el.tagName === 'OPTION') continue;
      const r = el.getBoundingClientRect();
      if (r.right > window.innerWidth + 0.5 || r.left < -0.5) out.push(`${el.tagName}#${el.id} outside the viewport`);
      if (el.scrollWidth > el.clientWidth + 1 && getComputedStyle(el).overflowX !== 'visible') out.push(`${el.tagName}#${el.id} text cut`);
    }
    return out;
  });

describe.skipIf(BROWSER_MISSING)('the check-in page in every language, in Chromium', () => {
  let t: TestApp;
  let base: string;
  let cb: ConsoleBrowser;
  let smtp: SMTPServer;
  const inbox: { to: string; raw: string }[] = [];
  const now = new Date('2026-11-23T09:30:00.000Z');
  const ORG = 'org_acme';
  const links: string[] = [];

  beforeAll(async () => {
    smtp = new SMTPServer({
      authOptional: true,
      disabledCommands: ['STARTTLS', 'AUTH'],
      onData(stream, session, callback) {
        const chunks: Buffer[] = [];
        stream.on('data', (c: Buffer) => chunks.push(c));
        stream.on('end', () => {
          inbox.push({ to: session.envelope.rcptTo[0].address, raw: decoded(Buffer.concat(chunks).toString('utf8')) });
          callback();
        });
      },
    });
    await new Promise<void>((resolve) => smtp.listen(0, '127.0.0.1', () => resolve()));
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    t = await createTestApp({
      dataset: readDataset(),
      clock: () => now,
      env: { SMTP_URL: `smtp://127.0.0.1:${(smtp.server.address() as AddressInfo).port}`, MAIL_FROM: 'Acme <checkin@acme.test>', PUBLIC_BASE_URL: base },
    });
    for (let i = 1; i <= LOCALES.length; i++)
      await createRespondent(t.db, ORG, { email: `web${i}@acme.test`, team: 'Web' }, operatorActor(), new Date('2026-10-01T00:00:00.000Z'));
    await t.app.listen({ host: '127.0.0.1', port });
    const schedule = await startRoundSchedule({ db: t.db, config: t.config, log: silent, now: () => now, intervalMs: 3_600_000 });
    await schedule.runOnce();
    await schedule.stop();
    for (const m of inbox) links.push(new RegExp(`${base}/checkin/o/${ORG}#[A-Za-z0-9_-]{32}`).exec(m.raw)![0]);
    cb = await launchConsoleBrowser();
  }, 120_000);

  afterAll(async () => {
    await cb?.close();
    await t?.close();
    await new Promise<void>((resolve) => (smtp ? smtp.close(() => resolve()) : resolve()));
  });

  it('answers in every locale at 360 pixels, axe-core clean, nothing cut; the pulses are the same bytes', async () => {
    expect(links).toHaveLength(LOCALES.length);
    const bodies: Record<string, unknown>[] = [];
    for (const [i, locale] of LOCALES.entries()) {
      const phone = await cb.browser.newContext({ viewport: { width: 360, height: 740 }, locale: 'en-US' });
      await phone.clock.setFixedTime(now);
      await phone.route('**/*', (route) => (new URL(route.request().url()).hostname === '127.0.0.1' ? route.continue() : route.abort()));
      phone.on('request', (r: Request) => r.url().endsWith('/checkin/answer') && bodies.push(JSON.parse(r.postData()!)));
      const page = await phone.newPage();
      // The mail's link carries the respondent's language in its fragment, after the token.
      await page.goto(`${links[i]}&lang=${locale}`);
      const t3 = (key: MessageKey, values?: Record<string, string | number>) => format(locale, key, values);
      const level = page.getByRole('radio', { name: `3 · ${t3('checkin.level.3')}` });
      await level.waitFor({ state: 'visible' });
      expect(await page.evaluate(() => [document.documentElement.lang, document.documentElement.dir])).toEqual([
        locale === 'en-XA' ? 'en' : locale,
        dirOf(locale),
      ]);
      expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe(t3('checkin.title'));
      expect(await page.locator('#team').textContent()).toBe(t3('checkin.team', { name: 'Web' }));
      expect(await page.locator('#team-size').textContent()).toBe(t3('checkin.teamSize', { people: LOCALES.length, joined: 0 }));
      expect(await page.getByLabel(t3('checkin.language')).inputValue()).toBe(locale);
      await cb.audit(page, `check-in page (${locale})`);
      expect(await overflow(page), locale).toEqual([]);
      if (['ar', 'ja', 'en-XA'].includes(locale)) await page.screenshot({ fullPage: true });
      await level.check();
      await page.getByLabel(t3('checkin.comment', { max: 2000 })).fill('Same words in every language.');
      await page.getByRole('button', { name: t3('checkin.submit') }).click();
      await page.getByRole('heading', { name: t3('checkin.thanksTitle') }).waitFor({ state: 'visible' });
      expect(await page.locator('#thanks-text').textContent()).toBe(t3('checkin.thanks'));
      expect(await overflow(page), `${locale} thanks`).toEqual([]);
      await phone.close();
    }
    expect(cb.violations).toEqual([]);
    expect(cb.leaving).toEqual([]);
    // The answers carried no language: the same fields and values, but for the token.
    expect(bodies).toHaveLength(LOCALES.length);
    const withoutToken = bodies.map(({ message: _m, signature: _s, ...rest }) => JSON.stringify(rest));
    expect(new Set(withoutToken).size).toBe(1);
    // And the stored pulses are the same bytes but for their id.
    const rows = await t.db.query<Record<string, unknown>>({ name: 'test.same_pulses', text: 'SELECT * FROM pulses WHERE org_id = $1 AND comment = $2' }, [
      ORG,
      'Same words in every language.',
    ]);
    expect(rows).toHaveLength(LOCALES.length);
    const stored = rows.map(({ id: _id, ...rest }) => JSON.stringify(rest));
    expect(new Set(stored).size).toBe(1);
  }, 300_000);

  it('the language menu changes every word in the page, and nothing reaches the service', async () => {
    const phone = await cb.browser.newContext({ viewport: { width: 360, height: 740 } });
    await phone.clock.setFixedTime(now);
    const page = await phone.newPage();
    await page.goto(`${base}/checkin/about#lang=tr`);
    await page.getByRole('heading', { name: format('tr', 'about.title'), level: 1 }).waitFor();
    const requests: string[] = [];
    page.on('request', (r: Request) => requests.push(`${r.method()} ${r.url()}`));
    for (const locale of ['de', 'ar', 'tr']) {
      await page.getByLabel(format(locale === 'de' ? 'tr' : locale === 'ar' ? 'de' : 'ar', 'checkin.language')).selectOption(locale);
      expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe(format(locale, 'about.title'));
      expect(await page.locator('p').nth(1).textContent()).toBe(format(locale, 'about.p1'));
      expect(await page.evaluate(() => document.documentElement.dir)).toBe(dirOf(locale));
      expect(new URL(page.url()).hash).toBe(`#lang=${locale}`);
      await cb.audit(page, `about page (${locale})`);
    }
    expect(requests).toEqual([]);
    expect(cb.violations).toEqual([]);
    await phone.close();
  });
});
