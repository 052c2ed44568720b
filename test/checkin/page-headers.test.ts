import { afterAll, describe, expect, it } from 'vitest';
import { readDataset } from '../fixtures/dataset.js';
import { createTestApp, type TestApp } from '../helpers/app.js';

// The check-in page and the console send one set of page headers (src/http/html.ts): behind https
// the employees' page carries HSTS too, although its readers never open the console.
describe('the check-in page carries the pages’ headers', () => {
  const apps: TestApp[] = [];
  afterAll(async () => {
    for (const a of apps) await a.close();
  });

  it('behind https: HSTS, the CSP, no referrer, no framing, on the page, its script and the console alike', async () => {
    const t = await createTestApp({ dataset: readDataset(), env: { PUBLIC_BASE_URL: 'https://pulse.example.com' } });
    apps.push(t);
    const page = await t.app.inject({ method: 'GET', url: '/checkin/o/org_acme' });
    const script = /<script src="([^"]+)"/.exec(page.body)?.[1] ?? 'no script on the page';
    for (const url of ['/checkin/o/org_acme', script, '/console/sign-in']) {
      const res = await t.app.inject({ method: 'GET', url });
      expect(res.statusCode, url).toBe(200);
      expect(res.headers['strict-transport-security'], url).toBe('max-age=31536000; includeSubDomains');
      expect(res.headers['content-security-policy'], url).toBe(
        "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; frame-ancestors 'none'; form-action 'self'; base-uri 'none'",
      );
      expect(res.headers['referrer-policy'], url).toBe('no-referrer');
      expect(res.headers['x-frame-options'], url).toBe('DENY');
      expect(res.headers['cross-origin-opener-policy'], url).toBe('same-origin');
      expect(res.headers['cross-origin-resource-policy'], url).toBe('same-origin');
    }
  });

  it('over plain http: no HSTS (a laptop, a trial)', async () => {
    const t = await createTestApp({ dataset: readDataset() });
    apps.push(t);
    for (const url of ['/checkin/o/org_acme', '/console/sign-in']) {
      const res = await t.app.inject({ method: 'GET', url });
      expect(res.statusCode, url).toBe(200);
      expect(res.headers['strict-transport-security'], url).toBeUndefined();
    }
  });
});
