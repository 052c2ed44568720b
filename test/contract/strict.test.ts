import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KEYS, NOW, readDataset } from '../fixtures/dataset.js';
import { createTestApp, type TestApp } from '../helpers/app.js';

/** The strict contract (CONTRACT.md sections 1 and 4): the examples of issue 10, each refused. */
describe('strict contract', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ dataset: readDataset(), now: NOW });
  });
  afterAll(() => t.close());

  let n = 0;
  const write = (method: 'POST' | 'PATCH', url: string, body: unknown) =>
    t.app.inject({
      method,
      url,
      payload: JSON.stringify(body),
      headers: { authorization: `Bearer ${KEYS.acme}`, 'content-type': 'application/json', 'idempotency-key': `strict-test-${++n}` },
    });

  const countOf = async (url: string) => (await t.app.inject({ url, headers: { authorization: `Bearer ${KEYS.acme}` } })).json().items.length;

  describe('JSON body values are never converted', () => {
    const cases: [string, 'POST' | 'PATCH', string, unknown, string][] = [
      ['a number as team name', 'POST', '/v1/teams', { name: 42 }, "Body field 'name' must be string."],
      ['a boolean as team name', 'POST', '/v1/teams', { name: true }, "Body field 'name' must be string."],
      ['a number as action title', 'POST', '/v1/actions', { title: 12345 }, "Body field 'title' must be string."],
      ['a boolean as action title', 'POST', '/v1/actions', { title: true }, "Body field 'title' must be string."],
      ['a boolean as description', 'POST', '/v1/actions', { title: 'Ok', description: true }, "Body field 'description' must be string."],
      ['a number as subteamId', 'POST', '/v1/actions', { title: 'Ok', subteamId: 7 }, "Body field 'subteamId' must be string."],
      ['a number as endDate', 'POST', '/v1/actions', { title: 'Ok', endDate: 1893456000000 }, "Body field 'endDate' must be string."],
      ['a number as title on PATCH', 'PATCH', '/v1/actions/ac_1', { title: 12345 }, "Body field 'title' must be string."],
      ['a boolean as description on PATCH', 'PATCH', '/v1/actions/ac_1', { description: false }, "Body field 'description' must be string."],
      [
        'an empty string as null subteamId stays a string',
        'PATCH',
        '/v1/actions/ac_1',
        { subteamId: '' },
        "Body field 'subteamId' must NOT have fewer than 1 characters.",
      ],
    ];
    it.each(cases)('%s -> 400 invalid_request', async (_name, method, url, body, message) => {
      const teams = await countOf('/v1/teams');
      const actions = await countOf('/v1/actions');
      const res = await write(method, url, body);
      expect(res.statusCode).toBe(400);
      expect(res.json()).toEqual({ error: { code: 'invalid_request', message } });
      expect(await countOf('/v1/teams')).toBe(teams);
      expect(await countOf('/v1/actions')).toBe(actions);
    });

    it('the same requests with strings are accepted', async () => {
      const team = await write('POST', '/v1/teams', { name: '42' });
      expect(team.statusCode).toBe(200);
      expect(team.json()).toEqual({ id: expect.stringMatching(/^team_/), name: '42' });
      const action = await write('POST', '/v1/actions', { title: '12345', description: 'true' });
      expect(action.statusCode).toBe(200);
      const listed = (await t.app.inject({ url: '/v1/actions', headers: { authorization: `Bearer ${KEYS.acme}` } })).json().items;
      expect(listed.find((a: { $id: string }) => a.$id === action.json().id)).toMatchObject({ title: '12345', description: 'true' });
    });
  });

  describe('unknown query parameters are refused on every operation', () => {
    const gets = ['/v1/stats', '/v1/org', '/v1/teams', '/v1/actions', '/v1/pulses', '/v1/stats/daily', '/v1/alerts', '/v1/comments'];
    it.each(gets)('GET %s?foo=1 -> 400 invalid_request', async (path) => {
      for (const prefix of ['', '/api']) {
        const res = await t.app.inject({ url: `${prefix}${path}?foo=1`, headers: { authorization: `Bearer ${KEYS.acme}` } });
        expect(res.statusCode).toBe(400);
        expect(res.json()).toEqual({ error: { code: 'invalid_request', message: "Unknown query parameter 'foo'." } });
      }
    });

    it('GET /stats without parameters still answers 200', async () => {
      const res = await t.app.inject({ url: '/v1/stats', headers: { authorization: `Bearer ${KEYS.acme}` } });
      expect(res.statusCode).toBe(200);
    });

    it.each([
      ['POST', '/v1/teams', { name: 'Query team' }],
      ['POST', '/v1/actions', { title: 'Query action' }],
      ['PATCH', '/v1/actions/ac_1', { title: 'Query action' }],
    ] as const)('%s %s?foo=1 -> 400 invalid_request, nothing written', async (method, url, body) => {
      const teams = await countOf('/v1/teams');
      const actions = await countOf('/v1/actions');
      const res = await write(method, `${url}?foo=1`, body);
      expect(res.statusCode).toBe(400);
      expect(res.json()).toEqual({ error: { code: 'invalid_request', message: "Unknown query parameter 'foo'." } });
      expect(await countOf('/v1/teams')).toBe(teams);
      expect(await countOf('/v1/actions')).toBe(actions);
    });
  });

  it('query strings are still parsed to their declared type', async () => {
    const res = await t.app.inject({ url: '/v1/alerts?limit=3', headers: { authorization: `Bearer ${KEYS.acme}` } });
    expect(res.statusCode).toBe(200);
    expect(res.json().items).toHaveLength(3);
  });

  it("the OpenAPI document lists the seed's statuses on every operation, each with the error schema", async () => {
    const doc = (await t.app.inject({ url: '/openapi.json' })).json() as {
      paths: Record<
        string,
        Record<string, { operationId: string; responses: Record<string, { description: string; content: Record<string, { schema: unknown }> }> }>
      >;
    };
    const ops = Object.values(doc.paths).flatMap((p) => Object.values(p));
    expect(ops.map((o) => o.operationId).sort()).toEqual([
      'createAction',
      'createTeam',
      'getDailyStats',
      'getOrg',
      'getStats',
      'listActions',
      'listAlerts',
      'listComments',
      'listPulses',
      'listTeams',
      'updateAction',
    ]);
    for (const op of ops) {
      // GETs also document 304, the answer to a matching If-None-Match (issue 21).
      const notModified = op.operationId.startsWith('list') || op.operationId.startsWith('get') ? ['304'] : [];
      expect(Object.keys(op.responses).sort(), op.operationId).toEqual(['200', ...notModified, '400', '401', '403', '404', '409', '429', '500', '503']);
      for (const status of ['400', '401', '403', '404', '409', '429', '500', '503']) {
        expect(op.responses[status].content['application/json'].schema, `${op.operationId} ${status}`).toEqual({ $ref: '#/components/schemas/ApiError' });
        expect(op.responses[status].description.length, `${op.operationId} ${status}`).toBeGreaterThan(10);
      }
    }
    expect(doc.paths['/teams'].post.responses['409'].description).toMatch(/team_name_taken/);
    expect(doc.paths['/actions'].post.responses['409'].description).toMatch(/idempotency_key_reused/);
    expect(doc.paths['/stats'].get.responses['409'].description).toMatch(/Not returned by this operation/);
  });
});
