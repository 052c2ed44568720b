import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, get, type TestApp } from '../helpers/app.js';

const KEY = 'cp_test_smoke_0123456789abcdef';

describe('smoke', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({
      dataset: {
        organizations: [
          {
            id: 'org_smoke',
            name: 'Smoke',
            plan: 'business',
            memberCount: 3,
            createdAt: '2026-01-05T09:00:00.000Z',
            apiKeys: [{ key: KEY }],
          },
        ],
      },
    });
  });
  afterAll(() => t.close());

  it('serves the organization of the key', async () => {
    const res = await get(t.app, '/v1/org', KEY);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ id: 'org_smoke', name: 'Smoke', memberCount: 3, createdAt: '2026-01-05T09:00:00.000Z' });
  });
});
