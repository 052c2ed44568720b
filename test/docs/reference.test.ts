import { existsSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { chromium, type Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DOCS_CSP } from '../../src/public/docs.js';
import { KEYS, NOW, readDataset } from '../fixtures/dataset.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { screenshotPath } from '../helpers/browser.js';

const CHROMIUM = '/usr/bin/chromium';
const SCREENSHOT = screenshotPath('reference.png');
// `npm test` on a machine without Chromium skips this file; CI (CI set) never does: there a
// missing browser fails the test below.
const skip = !existsSync(CHROMIUM) && !process.env.CI;

describe.skipIf(skip)('/docs in a browser', () => {
  let t: TestApp;
  let base: string;
  let browser: Browser;

  beforeAll(async () => {
    expect(existsSync(CHROMIUM), `${CHROMIUM} is missing (.ci/run installs it)`).toBe(true);
    t = await createTestApp({ dataset: readDataset(), now: NOW });
    await t.app.listen({ host: '127.0.0.1', port: 0 });
    base = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: [
        '--headless',
        '--no-sandbox',
        '--disable-background-networking',
        '--disable-gpu',
        '--disable-component-update',
        '--disable-sync',
        '--no-first-run',
      ],
    });
  });
  // In a loaded .ci/run this hook ran past 60 s after both tests had passed: the browser closed in
  // 154 ms and app.close() took 67 s, most likely waiting for answers whose bodies the test had not
  // read (a 1.4 MB script among them; they are read now). Chromium's exit is not waited for past
  // 15 s; a slow close says which part was slow.
  afterAll(async () => {
    const started = Date.now();
    await Promise.race([browser?.close(), new Promise((resolve) => setTimeout(resolve, 15_000).unref())]);
    const closedBrowser = Date.now();
    await t?.close();
    if (Date.now() - started > 10_000) console.warn(`/docs test: browser closed in ${closedBrowser - started} ms, app in ${Date.now() - closedBrowser} ms`);
  }, 120_000);

  it('serves the reference with a Content-Security-Policy that allows only the service itself, without a key', async () => {
    for (const path of ['/docs', '/docs/', '/docs/static/swagger-initializer.js', '/docs/static/swagger-ui-bundle.js']) {
      const res = await fetch(base + path);
      expect(res.status, path).toBe(200);
      expect(res.headers.get('content-security-policy'), path).toBe(DOCS_CSP);
      await res.arrayBuffer(); // an unread body keeps its answer, and so app.close(), waiting
    }
    for (const copy of ['/docs/json', '/docs/yaml']) {
      const spec = await fetch(base + copy, { redirect: 'manual' });
      expect([spec.status, spec.headers.get('location')]).toEqual([302, '/openapi.json']);
      await spec.arrayBuffer();
    }
    expect(await (await fetch(`${base}/docs/static/swagger-initializer.js`)).text()).toContain("url: '/openapi.json'");
    // The policy belongs to the pages; the API's answers do not carry it.
    const api = await fetch(`${base}/openapi.json`);
    expect(api.headers.get('content-security-policy')).toBeNull();
    await api.arrayBuffer();
  });

  it('lists every operation, authorizes with a key, runs "try it" on GET /stats, and calls nothing but the service', async () => {
    const doc = (await (await fetch(`${base}/openapi.json`)).json()) as {
      paths: Record<string, Record<string, unknown>>;
      webhooks: Record<string, Record<string, unknown>>;
    };
    const operations = Object.entries(doc.paths).flatMap(([path, ops]) => Object.keys(ops).map((m) => `${m.toUpperCase()} ${path}`));
    expect(operations).toHaveLength(11);
    // The page lists the webhooks too (the events the service POSTs), each under its name.
    const events = Object.entries(doc.webhooks).flatMap(([name, ops]) => Object.keys(ops).map((m) => `${m.toUpperCase()} ${name}`));
    expect(events).toHaveLength(4);

    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const requests: string[] = [];
    const leaving: string[] = [];
    const cspViolations: string[] = [];
    // Anything not addressed to the service is recorded and never sent.
    await context.route('**/*', (route) => {
      const url = new URL(route.request().url());
      if (url.protocol === 'data:' || url.hostname === '127.0.0.1') return route.continue();
      leaving.push(url.href);
      return route.abort();
    });
    const page = await context.newPage();
    page.on('request', (r) => requests.push(r.url()));
    page.on('console', (m) => {
      if (/Content Security Policy/i.test(m.text())) cspViolations.push(m.text());
    });
    const statsCalls: { auth?: string }[] = [];
    page.on('request', (r) => {
      if (new URL(r.url()).pathname === '/v1/stats') statsCalls.push({ auth: r.headers().authorization });
    });

    await page.goto(`${base}/docs`);
    await page.locator('.opblock').first().waitFor();
    const shown = await page.locator('.opblock').evaluateAll((els) =>
      els.map((el) => {
        const method = el.querySelector('.opblock-summary-method')?.textContent ?? '';
        const path = el.querySelector('.opblock-summary-path')?.getAttribute('data-path') ?? '';
        return `${method} ${path}`;
      }),
    );
    expect([...shown].sort()).toEqual([...operations, ...events].sort());

    await page.locator('.auth-wrapper .authorize').click();
    await page.locator('.modal-ux input').first().fill(KEYS.acme);
    await page.locator('.modal-ux .auth-btn-wrapper .authorize').click();
    await page.locator('.modal-ux .btn-done').click();

    const stats = page.locator('#operations-statistics-getStats');
    await stats.locator('.opblock-summary').click();
    await stats.locator('.try-out__btn').click();
    await stats.locator('.execute').click();
    const status = stats.locator('.live-responses-table .response .response-col_status');
    await status.first().waitFor();
    expect((await status.first().textContent())?.trim()).toBe('200');
    expect(statsCalls).toEqual([{ auth: `Bearer ${KEYS.acme}` }]);
    await expect(stats.locator('.live-responses-table .response-col_description pre').first().textContent()).resolves.toContain('"minimumSample": 5');

    // The top of the page down to the answer of "try it".
    const answer = await stats.locator('.live-responses-table').first().boundingBox();
    const bottom = Math.ceil((answer?.y ?? 0) + (answer?.height ?? 0) + 24 + (await page.evaluate(() => window.scrollY)));
    await page.screenshot({ path: SCREENSHOT, fullPage: true, clip: { x: 0, y: 0, width: 1280, height: bottom } });
    await context.close();

    expect(leaving).toEqual([]);
    expect(cspViolations).toEqual([]);
    // The page renders the served document itself, not a copy of the plugin's.
    expect(requests).toContain(`${base}/openapi.json`);
    expect(requests.filter((u) => new URL(u).pathname.startsWith('/docs/json'))).toEqual([]);
    for (const url of requests) expect(new URL(url).hostname, url).toBe('127.0.0.1');
  });
});
