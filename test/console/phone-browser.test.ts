import type { AddressInfo } from 'node:net';
import { Secret, TOTP } from 'otpauth';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { BROWSER_MISSING, joinConsole, launchConsoleBrowser, PASSWORD, type ConsoleBrowser } from '../helpers/browser.js';

/**
 * Issue 41, the HR lead's list, at 360 px in headless Chromium with axe-core: the QR code, codes
 * typed with spaces, Sign out on required enrollment, new keys default to read, the keys and
 * members tables fit the phone (the page never scrolls sideways), and the Members page's role
 * buttons have distinct names.
 */
const PHONE = { width: 360, height: 740 };

describe.skipIf(BROWSER_MISSING)('the console on a phone', () => {
  let t: TestApp;
  let base: string;
  let cb: ConsoleBrowser;

  beforeAll(async () => {
    t = await createTestApp({ dataset: { organizations: [{ id: 'org_phone', name: 'Phone Co', plan: 'business', createdAt: '2026-01-01T00:00:00.000Z' }] } });
    await t.app.listen({ host: '127.0.0.1', port: 0 });
    base = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
    cb = await launchConsoleBrowser();
  }, 60_000);

  afterAll(async () => {
    await cb?.close();
    await t?.close();
  }, 120_000);

  const fitsWidth = (page: Page) => page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth);
  const codeAt = (secret: string, ms: number) =>
    new TOTP({ secret: Secret.fromBase32(secret), digits: 6, period: 30, algorithm: 'SHA1' }).generate({ timestamp: ms });

  it("the HR lead's list at 360 px", async () => {
    const { page } = await joinConsole(cb, base, t.db, 'org_phone', { email: 'hr.lead@phone.example.com', role: 'owner' });
    const other = await joinConsole(cb, base, t.db, 'org_phone', { email: 'alice@phone.example.com', role: 'admin' });
    await joinConsole(cb, base, t.db, 'org_phone', { email: 'bob@phone.example.com', role: 'viewer' });
    await page.setViewportSize(PHONE);
    await other.page.setViewportSize(PHONE);

    // Keys: a new key is read-only unless chosen otherwise; the table fits the phone.
    await page.goto(`${base}/console/keys`);
    expect(await page.getByLabel(/^scope$/i).inputValue()).toBe('read');
    await page.getByLabel(/^name$/i).fill('a phone key with a rather long name');
    await page.getByRole('button', { name: /^create key$/i }).click();
    await page.getByLabel('New API key').waitFor();
    expect(page.url()).toBe(`${base}/console/keys`);
    expect(await page.locator('#keys-caption + thead + tbody td:nth-child(3)').first().textContent()).toBe('read');
    expect(await fitsWidth(page)).toBe(true);
    await cb.audit(page, 'keys at 360 px');

    // Members: each role button named after its member; the page fits.
    await page.goto(`${base}/console/members`);
    for (const email of ['hr.lead@phone.example.com', 'alice@phone.example.com', 'bob@phone.example.com']) {
      expect(await page.getByRole('button', { name: `Change role of ${email}` }).count()).toBe(1);
    }
    expect(await page.getByRole('button', { name: 'Change role', exact: true }).count()).toBe(0);
    expect(await fitsWidth(page)).toBe(true);
    await cb.audit(page, 'members at 360 px');

    // Two-factor: a QR code and the key as text; the code typed as the app shows it, with a space.
    await page.goto(`${base}/console/two-factor/enroll`);
    const qr = page.getByRole('img', { name: 'QR code of your two-factor setup key' });
    await qr.waitFor();
    expect(await qr.evaluate((img: HTMLImageElement) => img.complete && img.naturalWidth > 0)).toBe(true);
    const secret = (await page.locator('#totp-secret').textContent())!.replace(/\s+/g, '');
    expect(secret).toMatch(/^[A-Z2-7]{32}$/);
    expect(await fitsWidth(page)).toBe(true);
    await cb.audit(page, 'enrollment at 360 px');
    const code = codeAt(secret, Date.now());
    await page.getByLabel(/^current password$/i).fill(PASSWORD);
    await page.getByLabel(/^code$/i).fill(`${code.slice(0, 3)} ${code.slice(3)}`);
    await page.getByRole('button', { name: /turn on two-factor/i }).click();
    await page.waitForURL(`${base}/console/two-factor/recovery-codes`);
    expect((await page.locator('#recovery-codes').textContent())!.trim().split('\n')).toHaveLength(10);
    await cb.audit(page, 'recovery codes at 360 px');

    // Requiring two-factor: alice, signed in already, lands on enrollment, which has Sign out.
    await page.goto(`${base}/console/members`);
    await page.getByRole('button', { name: 'Require two-factor for every member' }).click();
    await page.getByText('Two-factor authentication is now required for every member.').waitFor();
    await other.page.goto(`${base}/console/keys`);
    await other.page.waitForURL(`${base}/console/two-factor/enroll`);
    await cb.audit(other.page, 'required enrollment at 360 px');
    await other.page.getByRole('main').getByRole('button', { name: 'Sign out' }).click();
    await other.page.waitForURL(`${base}/console/sign-in`);

    expect(cb.violations).toEqual([]);
    expect(cb.leaving).toEqual([]);
  }, 240_000);
});
