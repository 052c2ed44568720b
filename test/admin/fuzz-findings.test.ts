import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAdminTest, TOKEN, type AdminTest } from './helpers.js';

const ORG = '/admin/v1/organizations';

/**
 * What contract fuzzing of the operator API found (test/contract/fuzz-admin-lib.ts, `npm run fuzz
 * -- --api admin`), one regression test each.
 */
describe('operator API: fuzzing findings', () => {
  let t: AdminTest;
  beforeAll(async () => {
    t = await createAdminTest({
      dataset: { organizations: [{ id: 'org_a', name: 'A', plan: 'business', createdAt: '2026-01-01T00:00:00.000Z' }] },
    });
  });
  afterAll(() => t.close());

  it("the file import's 200 answer is documented as application/x-ndjson, the media type it has (the document said application/json)", async () => {
    const doc = (await t.call('GET', '/admin/v1/openapi.json')).json();
    const responses = doc.paths[`${ORG}/{orgId}/pulses/import`].post.responses;
    expect(Object.keys(responses['200'].content)).toEqual(['application/x-ndjson']);
    // Its errors are JSON, as every other answer of the operator API is.
    for (const status of ['400', '401', '404']) expect(Object.keys(responses[status].content), status).toEqual(['application/json']);
    for (const [path, methods] of Object.entries(doc.paths as Record<string, Record<string, { responses: Record<string, { content: object }> }>>)) {
      for (const [method, op] of Object.entries(methods)) {
        if (path.endsWith('/pulses/import')) continue;
        // The backup's 200 is the gzipped tar it streams; its errors are JSON like the rest.
        // The audit log's export is JSON lines or CSV, as asked (issue 52).
        const streamed =
          path === '/admin/v1/backup'
            ? { '200': ['application/gzip'] }
            : path.endsWith('/audit-events/export')
              ? { '200': ['application/x-ndjson', 'text/csv'] }
              : {};
        for (const [status, r] of Object.entries(op.responses)) {
          expect(Object.keys(r.content), `${method} ${path} ${status}`).toEqual((streamed as Record<string, string[]>)[status] ?? ['application/json']);
        }
      }
    }
    const pulse = { id: 'imp_1', level: 3, moderationStatus: 'CLEAN', createdAt: '2026-11-02T09:00:00.000Z' };
    const res = await t.admin.inject({
      method: 'POST',
      url: `${ORG}/org_a/pulses/import`,
      payload: `${JSON.stringify(pulse)}\n`,
      headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/x-ndjson' },
    });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('application/x-ndjson');
  });

  it('POST /admin/v1/alerts/run for the first and the last ISO weeks there are (0001-W01, 9999-W52) answers 200 and reads their pulses (was a 500: their days went to the database as year 0000 and +010000)', async () => {
    const pulse = (id: string, createdAt: string) => ({ id, level: 2, moderationStatus: 'CLEAN', createdAt });
    const ingested = await t.call('POST', `${ORG}/org_a/pulses`, {
      pulses: [pulse('first', '0001-01-01T00:00:00.000Z'), pulse('last', '9999-12-31T23:59:59.999Z')],
    });
    expect(ingested.statusCode, ingested.body).toBe(200);
    for (const weeks of [['0001-W01'], ['0001-W04'], ['9999-W52'], ['9999-W52', '0001-W01', '2026-W47']]) {
      const res = await t.call('POST', '/admin/v1/alerts/run', { weeks });
      expect(res.statusCode, `${weeks}: ${res.body}`).toBe(200);
      expect(res.json()).toMatchObject({ weeks: [...weeks].sort(), organizations: 1 });
    }
    // Weeks whose days hold no pulse of org_a: no organization to evaluate.
    expect((await t.call('POST', '/admin/v1/alerts/run', { weeks: ['0001-W06'] })).json()).toMatchObject({ organizations: 0 });
  });

  it('integer query values are bounded as text, as on the public API: limit=Infinity or 400 digits is 400 invalid_request naming the parameter (was a 500), and an exponent, hex or fraction is refused too', async () => {
    const url = (q: string) => `${ORG}/org_a/webhook-deliveries?${q}`;
    for (const value of ['Infinity', '-Infinity', '9'.repeat(400), `-${'9'.repeat(400)}`, '1e3', '1e1', '0x10', '1.0', '', 'NaN', encodeURIComponent('５')]) {
      const res = await t.call('GET', url(`limit=${value}`));
      expect(res.statusCode, value).toBe(400);
      expect(res.json().error.code, value).toBe('invalid_request');
      expect(res.json().error.message, value).toMatch(/^Query parameter 'limit' /);
    }
    for (const value of ['5', '+5', '005', '1000']) expect((await t.call('GET', url(`limit=${value}`))).statusCode, value).toBe(200);
    // A parameter given twice is refused by name, as on the public API.
    for (const q of ['limit=5&limit=5', 'failed=true&failed=false']) {
      expect((await t.call('GET', url(q))).json()).toEqual({
        error: { code: 'invalid_request', message: `Query parameter '${q.split('=')[0]}' is given more than once.` },
      });
    }
    expect((await t.call('DELETE', `${ORG}/org_a?erase=false&erase=false`)).json().error.message).toBe("Query parameter 'erase' is given more than once.");
  });

  it('a pulse of the years 1 to 99 sent again is unchanged, not 409 pulse_conflict, and reads back as sent (the embedded database read 0001-03-01 as 2001-01-03)', async () => {
    const pulses = ['0001-01-01T00:00:00.000Z', '0001-03-01T10:00:00.123Z', '0050-06-01T00:00:00.000Z', '0099-12-31T23:59:59.999Z'].map((createdAt, i) => ({
      id: `early_${i}`,
      level: 3,
      moderationStatus: 'CLEAN',
      createdAt,
    }));
    expect((await t.call('POST', `${ORG}/org_a/pulses`, { pulses })).json()).toEqual({ inserted: 4, unchanged: 0, inFrozenWeeks: 0 });
    const again = await t.call('POST', `${ORG}/org_a/pulses`, { pulses });
    expect(again.statusCode, again.body).toBe(200);
    expect(again.json()).toEqual({ inserted: 0, unchanged: 4, inFrozenWeeks: 0 });
    const rows = await t.db.query<{ id: string; created_at: Date }>({
      name: 'test.early',
      text: "SELECT id, created_at FROM pulses WHERE org_id = 'org_a' AND id LIKE 'early_%' ORDER BY id",
    });
    expect(rows.map((r) => new Date(r.created_at).toISOString())).toEqual(pulses.map((p) => p.createdAt));
  });
});
