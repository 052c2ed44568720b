import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { demoDataset } from '../../src/domain/demo.js';
import { NOW } from '../fixtures/dataset.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { BROWSER_MISSING, launchConsoleBrowser, type ConsoleBrowser } from '../helpers/browser.js';

/**
 * Issue 29: "Try it out" on /docs, as filled in, on every operation, against the demo organization
 * that `npm start` creates (what a reader has in the first hour). GET /pulses carried the same
 * example in `from` and `to` (400), every GET sent a made-up If-None-Match, POST /teams a fixed
 * Idempotency-Key shared with POST /actions (409 idempotency_key_reused on a second try), and
 * POST /actions and PATCH /actions/{id} named a team and an action the demo does not have (400,
 * 404). Every GET now answers 200 as filled in; each POST pressed twice creates once and then
 * replays the first answer; PATCH moves the demo's active action to done.
 */
const DEMO_KEY = 'cp_test_demo_0123456789abcdef';

describe.skipIf(BROWSER_MISSING)('/docs: Try it out as filled in', () => {
  let t: TestApp;
  let base: string;
  let cb: ConsoleBrowser;

  beforeAll(async () => {
    t = await createTestApp({ dataset: demoDataset(NOW, { orgId: 'org_demo_docs', key: DEMO_KEY, seed: 29 }), now: NOW });
    await t.app.listen({ host: '127.0.0.1', port: 0 });
    base = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
    cb = await launchConsoleBrowser();
  }, 60_000);
  afterAll(async () => {
    await cb?.close();
    await t?.close();
  }, 120_000);

  it('every GET answers 200, each POST pressed twice creates once and replays, and PATCH changes the demo action', async () => {
    const doc = (await (await fetch(`${base}/openapi.json`)).json()) as {
      paths: Record<string, Record<string, { operationId: string; tags: string[] }>>;
    };
    const gets = Object.entries(doc.paths).flatMap(([path, ops]) => (ops.get ? [{ path, ...ops.get }] : []));
    expect(gets.length).toBe(8);
    const writes = Object.entries(doc.paths).flatMap(([path, ops]) =>
      Object.entries(ops)
        .filter(([m]) => m !== 'get')
        .map(([method, op]) => ({ path, method, ...op })),
    );
    expect(writes.map((w) => `${w.method} ${w.path}`).sort()).toEqual(['patch /actions/{id}', 'post /actions', 'post /teams']);
    const context = await cb.context();
    const page = await context.newPage();
    const answers: { method: string; path: string; status: number; replayed?: string; ifNoneMatch?: string }[] = [];
    page.on('response', async (r) => {
      const url = new URL(r.url());
      if (!url.pathname.startsWith('/v1/')) return;
      answers.push({
        method: r.request().method(),
        path: url.pathname,
        status: r.status(),
        replayed: r.headers()['idempotent-replayed'],
        ifNoneMatch: (await r.request().allHeaders())['if-none-match'],
      });
    });
    await page.goto(`${base}/docs`);
    await page.locator('.opblock').first().waitFor();
    await page.locator('.auth-wrapper .authorize').click();
    await page.locator('.modal-ux input').first().fill(DEMO_KEY);
    await page.locator('.modal-ux .auth-btn-wrapper .authorize').click();
    await page.locator('.modal-ux .btn-done').click();

    const execute = async (tag: string, operationId: string, times: number) => {
      const op = page.locator(`#operations-${tag}-${operationId}`);
      await op.locator('.opblock-summary').click();
      await op.locator('.try-out__btn').click();
      for (let i = 0; i < times; i++) {
        const before = answers.length;
        await op.locator('.execute, .btn.execute').first().click();
        await expect.poll(() => answers.length, { timeout: 10_000 }).toBeGreaterThan(before);
      }
      // Closed again, as a reader moves on: every open operation and its answer is drawn anew on each change.
      await op.locator('.opblock-summary').click();
    };
    for (const g of gets) await execute(g.tags[0], g.operationId, 1);
    // Each POST twice: the second press is a retry of the same request, replayed.
    for (const w of writes) await execute(w.tags[0], w.operationId, w.method === 'post' ? 2 : 1);

    const got = answers.filter((a) => a.method === 'GET');
    expect(got.map((a) => `${a.path} ${a.status}`).sort()).toEqual(gets.map((g) => `/v1${g.path} 200`).sort());
    expect(got.filter((a) => a.ifNoneMatch !== undefined)).toEqual([]);
    const posts = answers.filter((a) => a.method !== 'GET');
    expect(posts.map((a) => [a.method, a.path, a.status, a.replayed])).toEqual([
      ['POST', '/v1/actions', 200, undefined],
      ['POST', '/v1/actions', 200, 'true'],
      ['POST', '/v1/teams', 200, undefined],
      ['POST', '/v1/teams', 200, 'true'],
      ['PATCH', '/v1/actions/act_demo_1', 200, undefined],
    ]);
    // What the presses made: one action and one team (the replays made nothing), and the demo's action is done.
    const api = (path: string) => fetch(`${base}/v1${path}`, { headers: { authorization: `Bearer ${DEMO_KEY}` } }).then((r) => r.json());
    const actions = (await api('/actions')).items as { $id: string; title: string; status: string }[];
    expect(actions.filter((a) => a.title === 'Retro on workload')).toHaveLength(1);
    expect(actions.find((a) => a.$id === 'act_demo_1')?.status).toBe('done');
    expect(((await api('/teams')).items as { name: string }[]).filter((x) => x.name === 'Platform')).toHaveLength(1);
    await context.close();
    expect(cb.leaving).toEqual([]);
  });
});
