import type { AddressInfo } from 'node:net';
import { Secret, TOTP } from 'otpauth';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inviteMember } from '../../src/domain/members.js';
import { listAuditEvents } from '../../src/domain/audit.js';
import { operatorActor } from '../../src/domain/audit.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { consoleBaseUrl } from '../../src/config.js';
import { acceptInvitation, BROWSER_MISSING, HOSTILE, launchConsoleBrowser, PASSWORD, type ConsoleBrowser } from '../helpers/browser.js';

/**
 * The console in headless Chromium (issue 27's acceptance): accept an invitation, create a read
 * key and use it, roll and revoke keys, enroll two-factor and sign in with a code, invite a viewer
 * who can change nothing, sign out. axe-core measures every page (no serious or critical
 * violation), hostile text renders as text, no Content-Security-Policy violation, no request
 * leaves the service.
 */
const OP = operatorActor('192.0.2.200');

describe.skipIf(BROWSER_MISSING)('the console in a browser', () => {
  let t: TestApp;
  let base: string;
  let cb: ConsoleBrowser;

  beforeAll(async () => {
    t = await createTestApp({
      dataset: { organizations: [{ id: 'org_browser', name: HOSTILE, plan: 'business', createdAt: '2026-01-01T00:00:00.000Z' }] },
      env: { KEY_CACHE_TTL_MS: '1000' },
    });
    await t.app.listen({ host: '127.0.0.1', port: 0 });
    base = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
    cb = await launchConsoleBrowser();
  }, 60_000);

  afterAll(async () => {
    await cb?.close();
    await t?.close();
  }, 120_000);

  const context = () => cb.context();
  const audit = (page: Page, what: string) => cb.audit(page, what);

  const api = (key: string, path: string, init: RequestInit = {}) =>
    fetch(`${base}${path}`, { ...init, headers: { authorization: `Bearer ${key}`, ...(init.headers ?? {}) } });
  const codeAt = (secret: string, ms: number) =>
    new TOTP({ secret: Secret.fromBase32(secret), digits: 6, period: 30, algorithm: 'SHA1' }).generate({ timestamp: ms });

  it('an owner accepts the invitation, makes a read key, rolls and revokes keys, turns on two-factor, invites a viewer who can change nothing, and signs out', async () => {
    const inv = await inviteMember(t.db, 'org_browser', { email: 'owner@browser.example.com', role: 'owner' }, OP, new Date());
    const ctx = await context();
    const page = await ctx.newPage();

    await page.goto(`${base}/console/invitations/${inv.token}`);
    await audit(page, 'invitation');
    await page.getByLabel('Password', { exact: true }).fill(PASSWORD);
    await page.getByRole('button', { name: /accept invitation/i }).click();
    await page.waitForURL(`${base}/console/overview`);
    await audit(page, 'overview');
    // The organization's hostile name is shown as text.
    expect(await page.locator('.org').textContent()).toBe(HOSTILE);
    expect(cb.dialogs).toEqual([]);

    await page
      .getByRole('navigation')
      .getByRole('link', { name: /^api keys$/i })
      .click();
    await page.getByRole('heading', { name: /^api keys$/i }).waitFor();
    await audit(page, 'keys (empty)');
    if (process.env.DBG) console.log(await page.content());
    await page.getByLabel(/^name$/i).fill(HOSTILE);
    await page.getByLabel(/^scope$/i).selectOption('read');
    await page.getByRole('button', { name: /^create key$/i }).click();
    const readKey = (await page.getByLabel('New API key').textContent())!.trim();
    expect(readKey).toMatch(/^cp_live_[A-Za-z0-9]{40}$/);
    await audit(page, 'keys (created)');
    expect(await page.locator('tbody td').first().textContent()).toBe(HOSTILE);
    // Built from PUBLIC_BASE_URL, else the listener's configured HOST and PORT, never from the Host header (issue 41).
    expect(await page.locator('#curl-line').textContent()).toBe(`curl -s -H "Authorization: Bearer ${readKey}" ${consoleBaseUrl(t.config)}/v1/stats`);
    expect((await api(readKey, '/v1/stats')).status).toBe(200);
    const post = await api(readKey, '/v1/teams', {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'idempotency-key': 'browser-test-1' },
      body: JSON.stringify({ name: 'X' }),
    });
    expect(post.status).toBe(403);
    expect((await post.json()).error.code).toBe('insufficient_scope');
    // The secret is shown once: the page reloaded shows its prefix only.
    await page.goto(`${base}/console/keys`);
    expect(await page.content()).not.toContain(readKey);

    // Roll "in 1 hour": both keys work until then.
    await page
      .getByLabel(/expires$/i)
      .first()
      .selectOption('1h');
    await page
      .getByRole('button', { name: /^roll$/i })
      .first()
      .click();
    const rolled = (await page.getByLabel('New API key').textContent())!.trim();
    expect(rolled).not.toBe(readKey);
    expect((await api(readKey, '/v1/stats')).status).toBe(200);
    expect((await api(rolled, '/v1/stats')).status).toBe(200);
    const [old] = await t.db.query<{ expires_at: Date; created_at: Date }>(
      {
        name: 't.rolled',
        text: `SELECT k.expires_at, n.created_at FROM api_keys k, api_keys n WHERE k.org_id = 'org_browser' AND k.expires_at IS NOT NULL AND n.org_id = k.org_id AND n.expires_at IS NULL AND n.revoked_at IS NULL`,
      } as never,
      [],
    );
    expect(old.expires_at.getTime() - old.created_at.getTime()).toBe(3_600_000);

    // Revoke the new one: refused within 5 seconds.
    await page
      .getByRole('button', { name: /^revoke/i })
      .first()
      .click(); // the newest row: the rolled key
    await page.getByText(/revoked: clients using it get 401/i).waitFor();
    const started = Date.now();
    while ((await api(rolled, '/v1/stats')).status !== 401) {
      expect(Date.now() - started).toBeLessThan(5_000);
      await new Promise((r) => setTimeout(r, 200));
    }

    // Two-factor: enroll from the account page.
    await page
      .getByRole('navigation')
      .getByRole('link', { name: /^account$/i })
      .click();
    await audit(page, 'account');
    await page.getByRole('link', { name: /turn on two-factor/i }).click();
    await audit(page, 'enroll');
    const secret = (await page.locator('#totp-secret').textContent())!.replace(/\s+/g, '');
    // The first factor asks for the password again (issue 52, L5).
    await page.getByLabel(/^current password$/i).fill(PASSWORD);
    await page.getByLabel(/^code$/i).fill(codeAt(secret, Date.now()));
    await page.getByRole('button', { name: /turn on two-factor/i }).click();
    await page.getByRole('heading', { name: /recovery codes/i }).waitFor();
    await audit(page, 'recovery codes');

    // Invite a viewer.
    await page
      .getByRole('navigation')
      .getByRole('link', { name: /^members$/i })
      .click();
    await audit(page, 'members');
    await page.getByLabel(/^email$/i).fill('viewer@browser.example.com');
    await page
      .getByLabel(/^role$/i)
      .last()
      .selectOption('viewer');
    await page.getByRole('button', { name: /^invite$/i }).click();
    const shownLink = (await page.locator('#invitation-link').textContent())!.trim();
    // From the listener's configured address (this test listens on another port), never the Host header.
    expect(shownLink).toMatch(new RegExp(`^${consoleBaseUrl(t.config)}/console/invitations/[A-Za-z0-9_-]{32}$`));
    const link = shownLink.replace(consoleBaseUrl(t.config), base);

    // Sign out, then in again with the password and a (new) code.
    await page.getByRole('button', { name: /^sign out$/i }).click();
    await page.waitForURL(`${base}/console/sign-in`);
    await audit(page, 'sign-in');
    await page.getByLabel(/^email$/i).fill('owner@browser.example.com');
    await page.getByLabel(/^password$/i).fill(PASSWORD);
    await page.getByRole('button', { name: /^sign in$/i }).click();
    await page.waitForURL(`${base}/console/two-factor`);
    await audit(page, 'two-factor');
    await page.getByLabel(/^code$/i).fill(codeAt(secret, Date.now() + 30_000));
    await page.getByRole('button', { name: /^verify$/i }).click();
    await page.waitForURL(`${base}/console/overview`);

    await page
      .getByRole('navigation')
      .getByRole('link', { name: /^api keys$/i })
      .click();
    // The page renders (docs/console.png, the keys page, comes from pages-browser.test.ts: an
    // organization with a plausible name, not this one's hostile one).
    expect((await page.screenshot({ fullPage: true })).length).toBeGreaterThan(1000);

    // The viewer: reads every page, changes nothing (refused by the server, not only hidden).
    const vctx = await context();
    const viewer = await vctx.newPage();
    await acceptInvitation(viewer, link);
    await viewer
      .getByRole('navigation')
      .getByRole('link', { name: /^api keys$/i })
      .click();
    await audit(viewer, 'keys (viewer)');
    expect(await viewer.getByRole('button', { name: /^create key$/i }).count()).toBe(0);
    expect(
      await viewer
        .getByRole('navigation')
        .getByRole('link', { name: /^members$/i })
        .count(),
    ).toBe(0);
    const token = await viewer.locator('input[name="_csrf"]').first().inputValue();
    const statuses = await viewer.evaluate(async (csrf) => {
      const form = (o: Record<string, string>) => ({ method: 'POST', body: new URLSearchParams({ _csrf: csrf, ...o }) });
      return Promise.all([
        fetch('/console/keys', form({ name: 'sneaky', scope: 'read_write' })).then((r) => r.status),
        fetch('/console/members/invite', form({ email: 'x@browser.example.com', role: 'owner' })).then((r) => r.status),
        fetch('/console/members/two-factor', form({ required: 'true' })).then((r) => r.status),
      ]);
    }, token);
    expect(statuses).toEqual([403, 403, 403]);
    const [{ n }] = await t.db.query<{ n: number }>({ name: 't.sneaky', text: `SELECT count(*)::int AS n FROM api_keys WHERE name = 'sneaky'` } as never, []);
    expect(n).toBe(0);
    await viewer.getByRole('button', { name: /^sign out$/i }).click();
    await viewer.waitForURL(`${base}/console/sign-in`);

    // The audit log has every change made above, with its actor and address; its page shows them.
    const { items } = await listAuditEvents(t.db, 'org_browser', { limit: 100 });
    const seen = items.map((e) => `${e.action} by ${e.actor.label} from ${e.address}`).reverse();
    const owner = 'owner@browser.example.com from 127.0.0.1';
    expect(seen).toEqual([
      'member.invited by operator from 192.0.2.200',
      `member.joined by ${owner}`,
      `key.created by ${owner}`,
      `key.rolled by ${owner}`,
      `key.revoked by ${owner}`,
      `member.two_factor_enabled by ${owner}`,
      `member.invited by ${owner}`,
      `member.signed_in by ${owner}`,
      'member.joined by viewer@browser.example.com from 127.0.0.1',
    ]);
    expect(JSON.stringify(items)).not.toContain(readKey);
    expect(JSON.stringify(items)).not.toContain(rolled);
    await page
      .getByRole('navigation')
      .getByRole('link', { name: /^audit log$/i })
      .click();
    await audit(page, 'audit log');
    expect(await page.locator('tbody tr').count()).toBe(9);
    await page
      .getByRole('navigation')
      .getByRole('link', { name: /^api keys$/i })
      .click();
    expect(await page.locator('tbody tr td:nth-child(4)').allTextContents()).toEqual(['owner@browser.example.com', 'owner@browser.example.com']);

    expect(cb.violations).toEqual([]);
    expect(cb.leaving).toEqual([]);
    expect(cb.dialogs.filter((d) => /^\d$/.test(d))).toEqual([]); // no alert() ran
    await ctx.close();
    await vctx.close();
  }, 120_000);
});
