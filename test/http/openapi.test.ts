import { readFileSync } from 'node:fs';
import SwaggerParser from '@apidevtools/swagger-parser';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_OPENAPI_PATH, generateAdminOpenApi, generateOpenApi, OPENAPI_PATH } from '../../scripts/write-openapi.js';
import { KEYS, NOW, readDataset } from '../fixtures/dataset.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { expectDocumented, expectDocumentedEvent } from '../helpers/openapi.js';

describe('OpenAPI document', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ dataset: readDataset(), now: NOW });
  });
  afterAll(() => t.close());

  it('is served without a key, identical at its three addresses', async () => {
    const bodies = await Promise.all(['/openapi.json', '/v1/openapi.json', '/api/v1/openapi.json'].map((url) => t.app.inject({ url })));
    for (const r of bodies) {
      expect(r.statusCode).toBe(200);
      expect(r.headers['content-type']).toBe('application/json; charset=utf-8');
      expect(r.body).toBe(bodies[0].body);
    }
    const doc = bodies[0].json();
    expect(doc.openapi).toBe('3.1.0');
    expect(doc.info.version).toBe('1.0.0');
    expect(doc.servers.map((s: { url: string }) => s.url)).toEqual(['/v1', '/api/v1']);
  });

  it('validates as OpenAPI 3.1 with swagger-parser', async () => {
    const doc = (await t.app.inject({ url: '/openapi.json' })).json();
    await expect(SwaggerParser.validate(structuredClone(doc))).resolves.toBeTruthy();
  });

  it('documents every route the app serves under /v1, with every error status', async () => {
    const doc = (await t.app.inject({ url: '/openapi.json' })).json();
    const expected = {
      '/pulses': ['get'],
      '/stats': ['get'],
      '/stats/daily': ['get'],
      '/comments': ['get'],
      '/alerts': ['get'],
      '/org': ['get'],
      '/actions': ['get', 'post'],
      '/actions/{id}': ['patch'],
      '/teams': ['get', 'post'],
    };
    expect(Object.fromEntries(Object.entries(doc.paths).map(([p, ops]) => [p, Object.keys(ops as object).sort()]))).toEqual(expected);
    for (const [path, ops] of Object.entries(expected)) {
      for (const op of ops) {
        const statuses = Object.keys(doc.paths[path][op].responses).sort();
        const writes = op === 'post';
        const notModified = op === 'get' ? ['304'] : [];
        expect(statuses, `${op} ${path}`).toEqual(['200', ...notModified, '400', '401', '403', '404', '409', '429', '500', '503']);
        if (writes) {
          // The server requires it (400 idempotency_key_required), so the document does too.
          expect(doc.paths[path][op].parameters.find((p: { name: string }) => p.name === 'idempotency-key')).toMatchObject({ in: 'header', required: true });
        }
      }
    }
    expect(doc.components.securitySchemes.bearerAuth).toEqual(expect.objectContaining({ type: 'http', scheme: 'bearer' }));
    expect(doc.paths['/actions'].get.responses['200'].content['application/json'].schema).toEqual({ $ref: '#/components/schemas/ActionList' });
    expect(doc.components.schemas.Action.required).toContain('$id');
  });

  it('documents every route the app registers under /v1 and /api/v1 (derived from the router)', async () => {
    const doc = (await t.app.inject({ url: '/openapi.json' })).json();
    const documented = new Set(Object.entries(doc.paths).flatMap(([p, ops]) => Object.keys(ops as object).map((m) => `${m.toUpperCase()} ${p}`)));
    const registered = new Map<string, Set<string>>([
      ['/v1', new Set()],
      ['/api/v1', new Set()],
    ]);
    // printRoutes prints a tree: "├── /v1/stats (GET, HEAD)" then "│   └── /daily (GET, HEAD)" for a child.
    const stack: string[] = [];
    for (const line of t.app.printRoutes({ commonPrefix: false }).split('\n')) {
      const m = /^([│ ]*)[├└]── (\S+)(?: \(([^)]+)\))?/.exec(line);
      if (!m) continue;
      const depth = m[1].length / 4;
      stack.length = depth;
      stack[depth] = m[2];
      const full = stack.join('');
      if (!m[3]) continue;
      const prefix = full.startsWith('/api/v1/') ? '/api/v1' : full.startsWith('/v1/') ? '/v1' : null;
      if (!prefix) continue;
      const path = full.slice(prefix.length).replace(/:([A-Za-z_]+)/g, '{$1}');
      if (path === '/openapi.json') continue;
      for (const method of m[3].split(',').map((x) => x.trim())) {
        if (method === 'HEAD' || method === 'OPTIONS') continue;
        registered.get(prefix)!.add(`${method} ${path}`);
      }
    }
    expect(registered.get('/v1')!.size).toBeGreaterThanOrEqual(8);
    expect([...registered.get('/v1')!].sort()).toEqual([...documented].sort());
    expect([...registered.get('/api/v1')!].sort()).toEqual([...documented].sort());
  });

  it('validates the literal $id property of actions (Ajv does not take it for a schema id)', async () => {
    const res = await t.app.inject({ url: '/v1/actions', headers: { authorization: `Bearer ${KEYS.acme}` } });
    await expectDocumented(t.app, 'GET', '/v1/actions', res);
    const items = res.json().items as Array<Record<string, unknown>>;
    const renamed = items.map(({ $id, ...a }) => ({ id: $id, ...a }));
    const forged = { ...res, json: () => ({ ...res.json(), items: renamed }), body: '{}' } as typeof res;
    await expect(expectDocumented(t.app, 'GET', '/v1/actions', forged)).rejects.toThrow(/does not match its schema/);
    const wrongType = { ...res, json: () => ({ ...res.json(), items: items.map((a) => ({ ...a, $id: 42 })) }), body: '{}' } as typeof res;
    await expect(expectDocumented(t.app, 'GET', '/v1/actions', wrongType)).rejects.toThrow(/does not match its schema/);
  });

  it("describes each webhook event in the top-level webhooks section, its body from the event's schema, and catches a body that breaks it", async () => {
    const doc = (await t.app.inject({ url: '/openapi.json' })).json();
    expect(Object.keys(doc.webhooks).sort()).toEqual(['action.created', 'action.updated', 'alert.created', 'ping']);
    const body = (name: string) => doc.webhooks[name].post.requestBody.content['application/json'].schema;
    expect(body('alert.created')).toEqual({ $ref: '#/components/schemas/AlertCreatedEvent' });
    expect(body('action.updated')).toEqual({ $ref: '#/components/schemas/ActionUpdatedEvent' });
    // `data` is the very schema GET /alerts and GET /actions answer with.
    expect(doc.components.schemas.AlertCreatedEvent.properties.data).toEqual({ $ref: '#/components/schemas/Alert' });
    expect(doc.components.schemas.ActionUpdatedEvent.properties.changes).toEqual({ $ref: '#/components/schemas/ActionChanges' });
    expect(Object.keys(doc.components.schemas.ActionChanges.properties).sort()).toEqual([
      'description',
      'endDate',
      'status',
      'subteamId',
      'subteamName',
      'title',
    ]);
    expect(doc.webhooks.ping.post.parameters.map((p: { name: string; required: boolean }) => `${p.name} ${p.required}`)).toEqual([
      'webhook-id true',
      'webhook-timestamp true',
      'webhook-signature true',
      'user-agent true',
    ]);
    const event = {
      type: 'action.updated',
      timestamp: '2026-11-23T10:12:31.204Z',
      data: {
        $id: 'act_7',
        title: 'Retro',
        description: null,
        startDate: '2026-11-21T09:00:00.000Z',
        endDate: null,
        status: 'done',
        subteamId: null,
        subteamName: null,
        createdAt: '2026-11-21T09:00:00.000Z',
      },
      changes: { status: { from: 'active', to: 'done' } },
    };
    await expectDocumentedEvent(t.app, JSON.stringify(event));
    await expect(expectDocumentedEvent(t.app, JSON.stringify({ ...event, changes: { status: { from: 'active', to: 'archived' } } }))).rejects.toThrow(
      /does not match its schema/,
    );
    await expect(expectDocumentedEvent(t.app, JSON.stringify({ ...event, changes: {} }))).rejects.toThrow(/does not match its schema/);
    await expect(expectDocumentedEvent(t.app, JSON.stringify({ ...event, type: 'action.deleted' }))).rejects.toThrow(/not in the OpenAPI document/);
  });

  it('catches a response that breaks its schema (the checker itself can fail)', async () => {
    const res = await t.app.inject({ url: '/v1/org', headers: { authorization: `Bearer ${KEYS.acme}` } });
    const forged = { ...res, statusCode: 200, json: () => ({ ...res.json(), extra: true }), body: '{}' } as typeof res;
    await expect(expectDocumented(t.app, 'GET', '/v1/org', forged)).rejects.toThrow(/does not match its schema/);
  });

  it('is committed as docs/openapi.json, as the code generates it', async () => {
    const committed = readFileSync(OPENAPI_PATH, 'utf8');
    expect(committed === (await generateOpenApi()), 'docs/openapi.json is stale: run `npm run openapi` and commit it').toBe(true);
  });

  it("the operator API's document is committed as docs/openapi-admin.json, as the code generates it", async () => {
    const committed = readFileSync(ADMIN_OPENAPI_PATH, 'utf8');
    expect(committed === (await generateAdminOpenApi()), 'docs/openapi-admin.json is stale: run `npm run openapi` and commit it').toBe(true);
  });
});
