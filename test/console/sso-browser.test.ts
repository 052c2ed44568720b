import { createServer, type AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { operatorActor } from '../../src/domain/audit.js';
import { verifyDomain } from '../../src/domain/sso/settings.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { BROWSER_MISSING, joinConsole, launchConsoleBrowser, type ConsoleBrowser } from '../helpers/browser.js';
import { startIdp, type IdpClient, type TestIdp } from '../helpers/oidc-idp.js';

/**
 * Issue 55 in headless Chromium: an owner connects an OpenID Connect IdP (oidc-provider, started
 * here) on the Single sign-on page; a person of the verified domain types only their work address
 * on the sign-in page, goes through the IdP and lands on the console signed in (the SameSite=Strict
 * session cookie set by the IdP's redirect is sent on the next page). axe-core at 360 and 1280 px on
 * the new pages, no CSP violation, nothing leaves 127.0.0.1.
 */
const ORG = 'org_browser_sso';
const DOMAIN = 'northwind.example.com';

let t: TestApp;
let base: string;
let idp: TestIdp;
let cb: ConsoleBrowser;
let client: IdpClient;

describe.skipIf(BROWSER_MISSING)('single sign-on in Chromium', () => {
  beforeAll(async () => {
    const probe = createServer();
    await new Promise<void>((r) => probe.listen(0, '127.0.0.1', r));
    const { port } = probe.address() as AddressInfo;
    await new Promise<void>((r) => probe.close(() => r()));
    base = `http://127.0.0.1:${port}`;
    t = await createTestApp({
      clock: () => new Date(),
      env: { PUBLIC_BASE_URL: base, WEBHOOK_ALLOW_PRIVATE: 'true' },
      dataset: { organizations: [{ id: ORG, name: 'Northwind Traders', plan: 'business', createdAt: '2026-01-01T00:00:00.000Z' }] },
    });
    await t.app.listen({ host: '127.0.0.1', port });
    client = { clientId: 'northwind-pulse', clientSecret: 'northwind-secret-0123456789', redirectUri: `${base}/console/sso/${ORG}/oidc/callback` };
    idp = await startIdp({ clients: [client] });
    idp.users.set('u-grace', { email: `grace@${DOMAIN}`, groups: ['pulse-admins'] });
    cb = await launchConsoleBrowser();
  }, 60_000);
  afterAll(async () => {
    await cb?.close();
    await idp?.close();
    await t?.close();
  });

  it('an owner connects the IdP; a person of the domain signs in with the work address alone; the pages pass axe at 360 and 1280 px', async () => {
    const { context, page } = await joinConsole(cb, base, t.db, ORG, { email: `owner@${DOMAIN}`, role: 'owner' });
    await page.getByRole('link', { name: 'Single sign-on' }).click();
    await page.waitForURL(`${base}/console/sso`);
    await expect.poll(() => page.locator('#sso-redirect-uri').textContent()).toBe(client.redirectUri);
    await page.getByLabel('Issuer URL').fill(idp.issuer);
    await page.getByLabel('Client ID').fill(client.clientId);
    await page.getByLabel('Client secret').fill(client.clientSecret);
    await page.getByLabel('Groups and roles').fill('pulse-admins = admin\npulse-readers = viewer');
    await page.getByRole('button', { name: 'Save connection' }).click();
    await page.waitForURL(`${base}/console/sso`);
    await expect.poll(() => page.getByRole('status').first().textContent()).toBe('The OpenID Connect connection is saved.');
    await page.getByLabel('Domain', { exact: true }).fill(DOMAIN);
    await page.getByRole('button', { name: 'Add domain' }).click();
    await page.waitForURL(`${base}/console/sso`);
    await expect.poll(() => page.getByRole('cell', { name: `_climate-pulse.${DOMAIN}` }).count()).toBe(1);
    await verifyDomain(t.db, ORG, DOMAIN, 'operator', operatorActor(), new Date());
    await page.reload();
    for (const width of [360, 1280]) {
      await page.setViewportSize({ width, height: 900 });
      await cb.audit(page, `single sign-on page at ${width}px`);
    }
    await context.close();

    const visitor = await cb.context();
    const p = await visitor.newPage();
    await p.goto(`${base}/console/sign-in`);
    for (const width of [360, 1280]) {
      await p.setViewportSize({ width, height: 900 });
      await cb.audit(p, `sign-in page at ${width}px`);
    }
    idp.nextUser = 'u-grace';
    await p.getByLabel(/^email$/i).fill(`grace@${DOMAIN}`);
    await p.getByRole('button', { name: /^sign in$/i }).click();
    await p.waitForURL(`${base}/console/overview`);
    await expect.poll(() => p.locator('.who').textContent()).toBe(`grace@${DOMAIN}`);
    const [m] = await t.db.query<{ role: string }>({ name: 't.b.role', text: `SELECT role FROM members WHERE org_id = $1 AND email = $2` } as never, [
      ORG,
      `grace@${DOMAIN}`,
    ]);
    expect(m.role).toBe('admin');

    // A callback nobody began: the refusal page, in plain words.
    await p.goto(`${base}/console/sso/${ORG}/oidc/callback?code=x&state=not-a-sign-in-of-this-browser`);
    await expect.poll(() => p.getByRole('heading', { level: 1 }).textContent()).toBe('Sign-in did not complete');
    for (const width of [360, 1280]) {
      await p.setViewportSize({ width, height: 900 });
      await cb.audit(p, `refused sign-in page at ${width}px`);
    }
    await visitor.close();
    expect(cb.violations).toEqual([]);
    expect(cb.leaving).toEqual([]);
    expect(cb.dialogs).toEqual([]);
  }, 90_000);
});
