import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { ERROR_STATUS } from '../../src/contract/errors.js';
import { hoistNamedSchemas } from '../../src/http/openapi.js';
import { createTestApp, type TestApp } from '../helpers/app.js';

type Op = {
  parameters?: { name: string; in: string; required?: boolean }[];
  requestBody?: { content: Record<string, { example?: unknown; examples?: unknown }> };
  responses: Record<string, { content?: Record<string, { schema: { $ref?: string }; example?: unknown; examples?: unknown }> }>;
};

/** What generators need from the document (issue 21). */
describe('OpenAPI document for generators', () => {
  let t: TestApp;
  let doc: {
    servers: { url: string }[];
    paths: Record<string, Record<string, Op>>;
    components: { schemas: Record<string, { properties?: Record<string, unknown> }> };
  };
  beforeAll(async () => {
    t = await createTestApp();
    doc = (await t.app.inject({ url: '/openapi.json' })).json();
  });
  afterAll(() => t.close());

  it('names a component for every resource and envelope, and answers with them', () => {
    for (const name of [
      'Pulse',
      'PulsePage',
      'Stats',
      'DailyStats',
      'CommentPage',
      'Alert',
      'AlertList',
      'Organization',
      'Action',
      'ActionList',
      'Team',
      'TeamList',
      'ApiError',
    ]) {
      expect(doc.components.schemas[name], name).toBeDefined();
    }
    const ok = (path: string, method = 'get') => doc.paths[path][method].responses['200'].content!['application/json'].schema;
    expect(ok('/pulses')).toEqual({ $ref: '#/components/schemas/PulsePage' });
    expect(ok('/stats')).toEqual({ $ref: '#/components/schemas/Stats' });
    expect(ok('/stats/daily')).toEqual({ $ref: '#/components/schemas/DailyStats' });
    expect(ok('/comments')).toEqual({ $ref: '#/components/schemas/CommentPage' });
    expect(ok('/alerts')).toEqual({ $ref: '#/components/schemas/AlertList' });
    expect(ok('/org')).toEqual({ $ref: '#/components/schemas/Organization' });
    expect(ok('/actions')).toEqual({ $ref: '#/components/schemas/ActionList' });
    expect(ok('/teams')).toEqual({ $ref: '#/components/schemas/TeamList' });
    expect(doc.components.schemas.PulsePage.properties!.items).toMatchObject({ items: { $ref: '#/components/schemas/Pulse' } });
    expect(doc.components.schemas.ActionList.properties!.items).toMatchObject({ items: { $ref: '#/components/schemas/Action' } });
  });

  it("gives ApiError's code (not Error, which generators turn into a type that shadows the built-in) the closed list of ERROR_STATUS", () => {
    const code = (doc.components.schemas.ApiError.properties!.error as { properties: { code: { enum: string[]; type: string } } }).properties.code;
    expect(code.type).toBe('string');
    expect(code.enum).toEqual(Object.keys(ERROR_STATUS));
  });

  it('requires Idempotency-Key on both POSTs, and has examples on every operation', () => {
    for (const path of ['/actions', '/teams']) {
      expect(doc.paths[path].post.parameters!.find((p) => p.name === 'idempotency-key')).toMatchObject({ in: 'header', required: true });
    }
    for (const [path, ops] of Object.entries(doc.paths)) {
      for (const [method, op] of Object.entries(ops)) {
        const media = op.responses['200'].content!['application/json'];
        expect(media.example ?? media.examples, `${method} ${path}: 200 example`).toBeDefined();
        if (op.requestBody) {
          const body = op.requestBody.content['application/json'];
          expect(body.example ?? body.examples, `${method} ${path}: body example`).toBeDefined();
        }
      }
    }
  });

  it('lists absolute servers when PUBLIC_BASE_URL is set, relative ones otherwise', async () => {
    expect(doc.servers.map((s) => s.url)).toEqual(['/v1', '/api/v1']);
    const other = await createTestApp({ env: { PUBLIC_BASE_URL: 'https://api.example.com/' } });
    try {
      const served = (await other.app.inject({ url: '/openapi.json' })).json();
      expect(served.servers.map((s: { url: string }) => s.url)).toEqual(['https://api.example.com/v1', 'https://api.example.com/api/v1']);
    } finally {
      await other.close();
    }
    expect(() => loadConfig({ PUBLIC_BASE_URL: 'ftp://api.example.com' })).toThrow(/PUBLIC_BASE_URL/);
    expect(() => loadConfig({ PUBLIC_BASE_URL: 'https://api.example.com/?x=1' })).toThrow(/PUBLIC_BASE_URL/);
  });

  it('refuses two different schemas under one component name', () => {
    const a = { title: 'Thing', type: 'object', properties: { a: { type: 'string' } } };
    const b = { title: 'Thing', type: 'object', properties: { b: { type: 'string' } } };
    expect(() => hoistNamedSchemas({ paths: { '/x': { get: { a, b } } } }, new Set(['Thing']))).toThrow(/two different schemas are titled Thing/);
    const same = hoistNamedSchemas({ paths: { '/x': { get: { a, again: { ...a } } } } }, new Set(['Thing'])) as unknown as {
      paths: Record<string, Record<string, Record<string, unknown>>>;
      components: { schemas: Record<string, unknown> };
    };
    expect(same.paths['/x'].get).toEqual({ a: { $ref: '#/components/schemas/Thing' }, again: { $ref: '#/components/schemas/Thing' } });
    expect(same.components.schemas.Thing).toEqual(a);
  });
});
