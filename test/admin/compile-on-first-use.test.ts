import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance, InjectOptions } from 'fastify';
import { buildAdminApp } from '../../src/admin/app.js';
import { loadConfig } from '../../src/config.js';
import { loadDataset } from '../../src/domain/dataset.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';

/**
 * The CLI's in-process operator app compiles each route's validator and serializer on first use
 * (it answers a request or two and exits); a listening server compiles them at ready. Both must
 * answer every request alike: the same status, body and content type, errors included.
 */
const ORG = '/admin/v1/organizations';
const REQUESTS: InjectOptions[] = [
  { method: 'GET', url: ORG },
  { method: 'GET', url: `${ORG}/org_a` },
  { method: 'GET', url: `${ORG}?limit=0` },
  { method: 'GET', url: `${ORG}?limit=abc` },
  { method: 'GET', url: `${ORG}?nope=1` },
  { method: 'POST', url: ORG, payload: { name: 42, plan: 'business' } },
  { method: 'POST', url: ORG, payload: { name: 'B', plan: 'business', extra: true } },
  { method: 'POST', url: `${ORG}/org_a/keys`, payload: { name: 'x', scopes: ['nope'] } },
  { method: 'POST', url: `${ORG}/org_a/pulses`, payload: [{ id: 'p1', level: 9 }] },
  { method: 'PATCH', url: `${ORG}/org_a`, payload: { plan: 7 } },
  { method: 'GET', url: `${ORG}/org_a/keys` },
  { method: 'PUT', url: '/admin/v1/plans/team', payload: { includesApi: 'yes' } },
  { method: 'GET', url: `${ORG}/org_a/audit-events?limit=2` },
  { method: 'GET', url: '/admin/v1/nope' },
  { method: 'POST', url: ORG, payload: { id: 'org_b', name: 'B', plan: 'business' } },
];

describe('the operator app compiled on first use', () => {
  let tdb: TestDatabase;
  let eager: FastifyInstance;
  let lazy: FastifyInstance;
  beforeAll(async () => {
    tdb = await createTestDatabase();
    await loadDataset(tdb.db, {
      organizations: [
        { id: 'org_a', name: 'A', plan: 'business', createdAt: '2026-01-01T00:00:00.000Z', apiKeys: [{ key: 'cp_test_a_0123456789abcdef', name: 'ci' }] },
      ],
    });
    const config = loadConfig({ LOG_LEVEL: 'silent' });
    const now = () => new Date('2026-11-25T12:00:00.000Z');
    eager = await buildAdminApp(config, { db: tdb.db, now });
    lazy = await buildAdminApp(config, { db: tdb.db, now, compileOnFirstUse: true });
  });
  afterAll(async () => {
    await eager?.close();
    await lazy?.close();
    await tdb?.close();
  });

  it('answers every request as the app compiled at ready does, errors included', async () => {
    const statuses: number[] = [];
    for (const req of REQUESTS) {
      const a = await eager.inject(req);
      // A create succeeds once per id: the lazy app creates its own organization, named alike.
      const b = await lazy.inject(
        req.url === ORG && req.method === 'POST' && (req.payload as { id?: string }).id
          ? { ...req, payload: { ...(req.payload as object), id: 'org_c' } }
          : req,
      );
      statuses.push(b.statusCode);
      expect(
        { status: b.statusCode, type: b.headers['content-type'], body: b.body.replace(/"(createdAt|id)":"org_[^"]*"|"createdAt":"[^"]*"/g, '') },
        `${req.method} ${req.url}`,
      ).toEqual({
        status: a.statusCode,
        type: a.headers['content-type'],
        body: a.body.replace(/"(createdAt|id)":"org_[^"]*"|"createdAt":"[^"]*"/g, ''),
      });
    }
    // Successes and refusals were both compared, so each kind of compiled function ran.
    expect(statuses).toEqual([200, 200, 400, 400, 400, 400, 400, 400, 400, 400, 200, 400, 200, 404, 201]);
  });
});
