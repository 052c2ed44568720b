import { createServer, type AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { operatorActor } from '../../src/domain/audit.js';
import { verifyDomain } from '../../src/domain/sso/settings.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { BROWSER_MISSING, joinConsole, launchConsoleBrowser, type ConsoleBrowser } from '../helpers/browser.js';
import { startSamlIdp, type TestIdp } from '../helpers/saml-idp.js';

/**
 * Issue 55 in headless Chromium, SAML: an owner pastes a SAML IdP's metadata (the test IdP, samlify,
 * started here) on the Single sign-on page and gives the IdP our metadata; a person of the verified
 * domain types only their work address, the browser goes to the IdP, which posts its signed
 * assertion back to our assertion consumer service, and the person lands on the console signed in
 * with the role their group maps to. The IdP then sends the browser a signed logout request: the
 * session ends, and the next page is the sign-in page. axe-core at 360 and 1280 px, no CSP
 * violation, nothing leaves 127.0.0.1.
 */
const ORG = 'org_browser_saml';
const DOMAIN = 'contoso.example.com';

let t: TestApp;
let base: string;
let idp: TestIdp;
let cb: ConsoleBrowser;

describe.skipIf(BROWSER_MISSING)('single sign-on through SAML in Chromium', () => {
  beforeAll(async () => {
    const probe = createServer();
    await new Promise<void>((r) => probe.listen(0, '127.0.0.1', r));
    const { port } = probe.address() as AddressInfo;
    await new Promise<void>((r) => probe.close(() => r()));
    base = `http://127.0.0.1:${port}`;
    t = await createTestApp({
      clock: () => new Date(),
      env: { PUBLIC_BASE_URL: base, WEBHOOK_ALLOW_PRIVATE: 'true' },
      dataset: { organizations: [{ id: ORG, name: 'Contoso Pharmaceuticals', plan: 'business', createdAt: '2026-01-01T00:00:00.000Z' }] },
    });
    await t.app.listen({ host: '127.0.0.1', port });
    idp = startSamlIdp();
    await idp.listen();
    cb = await launchConsoleBrowser();
  }, 60_000);
  afterAll(async () => {
    await cb?.close();
    await idp?.close();
    await t?.close();
  });

  it('an owner connects the IdP by its metadata; a person signs in with the work address alone, and is out after the IdP logs them out', async () => {
    const { context, page } = await joinConsole(cb, base, t.db, ORG, { email: `owner@${DOMAIN}`, role: 'owner' });
    await page.getByRole('link', { name: 'Single sign-on' }).click();
    await page.waitForURL(`${base}/console/sso`);
    await page.getByLabel("Your identity provider's metadata (paste the XML)").fill(idp.metadataXml());
    await page.getByLabel('Group mapping').fill('pulse-owners = owner\npulse-admins = admin');
    await page.getByRole('button', { name: 'Save SAML connection' }).click();
    await page.waitForURL(`${base}/console/sso`);
    await expect.poll(() => page.getByRole('status').first().textContent()).toBe('The SAML connection is saved.');
    // The IdP is given our metadata, from the address the page shows.
    const ours = await page.evaluate(async (url) => (await fetch(url)).text(), `${base}/console/sso/saml/${ORG}/metadata`);
    expect(ours).toContain(`entityID="${base}/console/sso/saml/${ORG}/metadata"`);
    idp.trust(ours);
    await page.getByLabel('Domain', { exact: true }).fill(DOMAIN);
    await page.getByRole('button', { name: 'Add domain' }).click();
    await page.waitForURL(`${base}/console/sso`);
    await verifyDomain(t.db, ORG, DOMAIN, 'operator', operatorActor(), new Date());
    await page.reload();
    await expect.poll(() => page.getByText(`Connected to the identity provider ${idp.entityId}.`).count()).toBe(1);
    for (const width of [360, 1280]) {
      await page.setViewportSize({ width, height: 900 });
      await cb.audit(page, `single sign-on page with SAML at ${width}px`);
    }
    await context.close();

    const visitor = await cb.context();
    const p = await visitor.newPage();
    await p.goto(`${base}/console/sign-in`);
    idp.nextUser = { email: `ada@${DOMAIN}`, groups: ['pulse-admins'], sessionIndex: '_s-browser' };
    await p.getByLabel(/^email$/i).fill(`ada@${DOMAIN}`);
    await p.getByRole('button', { name: /^sign in$/i }).click();
    await p.waitForURL(`${base}/console/overview`);
    await expect.poll(() => p.locator('.who').textContent()).toBe(`ada@${DOMAIN}`);
    const [m] = await t.db.query<{ role: string }>({ name: 't.sb.role', text: `SELECT role FROM members WHERE org_id = $1 AND email = $2` } as never, [
      ORG,
      `ada@${DOMAIN}`,
    ]);
    expect(m.role).toBe('admin');
    for (const width of [360, 1280]) {
      await p.setViewportSize({ width, height: 900 });
      await cb.audit(p, `overview after SAML sign-in at ${width}px`);
    }

    // The IdP logs the person out: the browser carries its signed LogoutRequest to our single logout.
    const answered = p.waitForResponse((r) => r.url().startsWith(`${base}/console/sso/saml/${ORG}/slo`));
    await p.goto(idp.logoutRequestUrl({ nameId: `ada@${DOMAIN}`, sessionIndex: '_s-browser' }));
    expect((await answered).status()).toBe(302);
    await p.goto(`${base}/console/overview`);
    await p.waitForURL(`${base}/console/sign-in`);
    await visitor.close();
    expect(cb.violations).toEqual([]);
    expect(cb.leaving).toEqual([]);
    expect(cb.dialogs).toEqual([]);
  }, 90_000);
});
