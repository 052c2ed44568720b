import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildAdminApp } from '../../src/admin/app.js';
import { TOKEN } from '../admin/helpers.js';
import { createTestApp, get, type TestApp } from '../helpers/app.js';
import { ConsoleClient, joinConsole } from '../helpers/console-client.js';

/**
 * The console's assets are real files served under their content's hash with a year's immutable
 * cache (an unknown name is the console's 404), and its forms are checked by the API's own schemas:
 * a form the schema refuses gets, in the console, the message the API gives for the same body.
 */
const T0 = new Date('2026-11-20T12:00:00.000Z');
const KEY = 'cp_test_assets_one_0123456789abcdef';
const IMMUTABLE = 'public, max-age=31536000, immutable';

let t: TestApp;
let operator: FastifyInstance;
let admin: ConsoleClient;
beforeAll(async () => {
  t = await createTestApp({
    now: T0,
    dataset: {
      organizations: [
        {
          id: 'org_assets',
          name: 'Assets',
          plan: 'business',
          memberCount: 20,
          createdAt: '2026-01-01T00:00:00.000Z',
          deletedAt: null,
          apiKeys: [{ key: KEY, name: 'k', revoked: false }],
        },
      ],
    },
  });
  operator = await buildAdminApp(t.config, { db: t.db, token: TOKEN });
  admin = await joinConsole(t, 'org_assets', 'admin@assets.example.com', 'admin', T0);
});
afterAll(async () => {
  await operator?.close();
  await t?.close();
});

const linked = (body: string) => [...body.matchAll(/(?:href|src)="(\/console\/assets\/[^"]+)"/g)].map((m) => m[1]);
const sha = (body: Buffer) => createHash('sha256').update(body).digest('hex');
const escaped = (text: string) => text.replaceAll("'", '&#39;');

describe("the console's assets", () => {
  it('every page links its stylesheets and scripts by content hash; each answers 200, immutable for a year, its hash its content', async () => {
    const signIn = await new ConsoleClient(t.app).get('/console/sign-in');
    const overview = await admin.get('/console/overview');
    const urls = [...new Set([...linked(signIn.body), ...linked(overview.body)])];
    expect(urls.map((u) => u.replace(/\.[0-9a-f]{16}\./, '.HASH.')).sort()).toEqual(
      ['charts.HASH.js', 'console.HASH.css', 'console.HASH.js', 'favicon.HASH.svg', 'uplot.HASH.css', 'uplot.HASH.js'].map((f) => `/console/assets/${f}`),
    );
    for (const url of urls) {
      const res = await t.app.inject({ method: 'GET', url });
      expect(res.statusCode, url).toBe(200);
      expect(res.headers['cache-control'], url).toBe(IMMUTABLE);
      expect(res.headers['content-type'], url).toBe(
        url.endsWith('.css') ? 'text/css; charset=utf-8' : url.endsWith('.svg') ? 'image/svg+xml' : 'text/javascript; charset=utf-8',
      );
      expect(res.headers['content-security-policy'], url).toContain("default-src 'self'");
      expect(res.headers['x-content-type-options'], url).toBe('nosniff');
      expect(url, 'the name holds the first 16 hex digits of the SHA-256 of the body').toContain(`.${sha(res.rawPayload).slice(0, 16)}.`);
    }
    // The files are the sources' own, byte for byte.
    const css = urls.find((u) => u.includes('/console.') && u.endsWith('.css'))!;
    expect(
      (await t.app.inject({ method: 'GET', url: css })).rawPayload.equals(readFileSync(new URL('../../src/console/assets/console.css', import.meta.url))),
    ).toBe(true);
  });

  it('an old or unknown hash, or a name without one, is the console 404 page, not cached', async () => {
    const [css] = linked((await new ConsoleClient(t.app).get('/console/sign-in')).body).filter((u) => u.endsWith('.css'));
    const hash = /\.([0-9a-f]{16})\./.exec(css)![1];
    for (const url of [
      '/console/assets/console.0000000000000000.css',
      `/console/assets/console.${hash}.js`,
      '/console/assets/console.css',
      `/console/assets/console.${hash.slice(0, 15)}.css`,
      `/console/assets/other.${hash}.css`,
    ]) {
      const res = await t.app.inject({ method: 'GET', url });
      expect(res.statusCode, url).toBe(404);
      expect(res.headers['cache-control'], url).toBe('no-store');
      expect(res.headers['content-type'], url).toBe('text/html; charset=utf-8');
      expect(res.body, url).toContain('There is no console page at this address.');
    }
  });
});

describe("forms checked by the API's own schemas", () => {
  const operatorPost = async (path: string, body: unknown) =>
    operator.inject({
      method: 'POST',
      url: path,
      headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
      payload: JSON.stringify(body),
    });

  it("a webhook URL longer than the endpoint body allows: the operator API's message, on the console page", async () => {
    const url = `https://hooks.example.com/${'a'.repeat(2100)}`;
    const api = await operatorPost('/admin/v1/organizations/org_assets/webhook-endpoints', { url });
    expect(api.statusCode).toBe(400);
    expect(api.json().error.message).toBe("Body field 'url' must NOT have more than 2048 characters.");
    const page = await admin.submit('/console/webhooks', '/console/webhooks', { url });
    expect(page.statusCode).toBe(400);
    expect(page.body).toContain(`<p class="notice error" role="alert">${escaped(api.json().error.message)}</p>`);
  });

  it("a resend time that is no date: the operator API's message for the same instant", async () => {
    const api = await operatorPost('/admin/v1/organizations/org_assets/webhook-deliveries/resend-failed', { since: '2026-13-01T00:00:00Z' });
    expect(api.statusCode).toBe(400);
    const page = await admin.submit('/console/webhooks', '/console/webhooks/resend-failed', { since: '2026-13-01T00:00' });
    expect(page.statusCode).toBe(400);
    expect(page.body).toContain(escaped(api.json().error.message));
  });

  it("a comments range that is no date: GET /v1/comments' message", async () => {
    const api = await get(t.app, '/v1/comments?from=2026-02-30', KEY);
    expect(api.statusCode).toBe(400);
    const page = await admin.get('/console/comments?from=2026-02-30');
    expect(page.statusCode).toBe(400);
    expect(page.body).toContain(`<p class="notice error" role="alert">${escaped(api.json().error.message)}</p>`);
  });
});
