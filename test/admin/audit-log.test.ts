import { createHash } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { InjectOptions } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from '../../src/db/executor.js';
import { createCliDatabase, runCliInProcess as cli } from '../helpers/cli.js';
import { startReceiver, type Receiver } from '../helpers/receiver.js';
import { createAdminTest, TOKEN, type AdminTest } from './helpers.js';

/**
 * The audit log (issue 31, item 4; CONTRACT.md sections 10 and 11): every change to an
 * organization, through the operator API or the public API, leaves exactly one row naming its
 * actor, written in the transaction of the change; a refused or rolled-back change leaves none, an
 * idempotent replay no second one; no row holds a secret, key, hash or comment text; erasing the
 * organization removes its rows, a soft delete keeps them.
 */
const ORG = '/admin/v1/organizations';
const KEY_A = 'cp_test_audit_a_0123456789';
const KEY_B = 'cp_test_second_0123456789';
const PREFIX_A = 'cp_test_audi'; // displayPrefix: the first 12 characters of a key that is not cp_live_
const COMMENT = 'a private comment about Dana zq7';
const MODERATED = 'pulse_moderated_zq9';
const pulse = (id: string, extra: Record<string, unknown> = {}) => ({
  id,
  level: 3,
  reason: 'workload',
  comment: `${COMMENT} ${id}`,
  moderationStatus: 'CLEAN' as const,
  subteamId: null,
  createdAt: '2026-11-02T09:00:00.000Z',
  ...extra,
});

interface Row {
  org_id: string;
  id: string;
  created_at: Date;
  actor_kind: string;
  actor_id: string | null;
  actor_label: string;
  action: string;
  target_kind: string;
  target_id: string | null;
  address: string | null;
  details: Record<string, unknown>;
}

describe('the audit log', () => {
  let t: AdminTest;
  let rx: Receiver;
  const secrets: string[] = [KEY_A, KEY_B, COMMENT];

  const rowsOf = (orgId: string) => t.db.query<Row>(sql('test.audit.rows', `SELECT * FROM audit_events WHERE org_id = $1 ORDER BY created_at, id`), [orgId]);

  /** Runs `change` and returns the one row it added to the organization's log (failing unless exactly one). */
  async function oneNew(orgId: string, change: () => Promise<unknown>): Promise<Row> {
    const before = new Set((await rowsOf(orgId)).map((r) => r.id));
    await change();
    const added = (await rowsOf(orgId)).filter((r) => !before.has(r.id));
    expect(added, `rows added to ${orgId}'s log`).toHaveLength(1);
    return added[0];
  }

  /** Runs `change` and checks that no organization's log gained a row. */
  async function noneNew(change: () => Promise<unknown>) {
    const count = sql('test.audit.count', `SELECT count(*)::int AS n FROM audit_events`);
    const [before] = await t.db.query<{ n: number }>(count);
    await change();
    const [after] = await t.db.query<{ n: number }>(count);
    expect(after.n, 'rows in audit_events').toBe(before.n);
  }

  const operator = (action: string, target_kind: string, target_id: string | null, details: Record<string, unknown> = {}) => ({
    actor_kind: 'operator',
    actor_id: null,
    actor_label: 'operator',
    action,
    target_kind,
    target_id,
    address: '127.0.0.1',
    details,
  });

  let keyAId: string;
  const pub = (method: InjectOptions['method'], url: string, body?: unknown, headers: Record<string, string> = {}, key = KEY_A) =>
    t.app.inject({
      method,
      url,
      remoteAddress: '203.0.113.7',
      headers: { authorization: `Bearer ${key}`, ...headers },
      ...(body === undefined ? {} : { payload: body as object }),
    } as InjectOptions);
  const byKey = (action: string, target_kind: string, target_id: string | null, details: Record<string, unknown> = {}) => ({
    actor_kind: 'key',
    actor_id: keyAId,
    actor_label: PREFIX_A,
    action,
    target_kind,
    target_id,
    address: '203.0.113.7',
    details,
  });

  beforeAll(async () => {
    rx = await startReceiver((path, n) => (path.startsWith('/gone') && n === 0 ? 410 : 500));
    t = await createAdminTest({
      env: { WEBHOOK_ALLOW_PRIVATE: 'true', WEBHOOK_TIMEOUT_MS: '2000' },
      dataset: {
        organizations: [
          {
            id: 'org_a',
            name: 'A',
            plan: 'business',
            createdAt: '2026-01-01T00:00:00.000Z',
            apiKeys: [
              { key: KEY_A, name: 'integration' },
              { key: KEY_B, name: 'second' },
            ],
            teams: [{ id: 'team_x', name: 'X', createdAt: '2026-01-01T00:00:00.000Z' }],
            pulses: [pulse(MODERATED)],
            alerts: [
              { id: 'al_1', type: 'LOW_MOOD', message: 'Low', weekISO: '2026-W44', subteamId: 'team_x', readAt: null, createdAt: '2026-11-03T06:00:00.000Z' },
            ],
          },
          {
            id: 'org_p',
            name: 'P',
            plan: 'business',
            createdAt: '2026-01-01T00:00:00.000Z',
            alerts: [
              { id: 'al_p', type: 'LOW_MOOD', message: 'Low', weekISO: '2026-W44', subteamId: null, readAt: null, createdAt: '2026-11-03T06:00:00.000Z' },
            ],
          },
        ],
      },
    });
    keyAId = (await t.call('GET', `${ORG}/org_a/keys`)).json().items.find((k: { name: string }) => k.name === 'integration').id;
    // The key hashes are secrets too (the lookup of a key), in every encoding.
    for (const k of [KEY_A, KEY_B]) {
      const h = createHash('sha256').update(k).digest();
      secrets.push(h.toString('hex'), h.toString('base64'));
    }
  });
  afterAll(async () => {
    await t?.close();
    await rx?.close();
  });

  it('the loaded dataset is not audited: the log starts empty', async () => {
    expect(await rowsOf('org_a')).toEqual([]);
  });

  it('every operator change leaves one row: the operator, from its address, with what and on what', async () => {
    // Organizations.
    let row = await oneNew('org_new', async () => expect((await t.call('POST', ORG, { id: 'org_new', name: 'New', plan: 'business' })).statusCode).toBe(201));
    expect(row).toMatchObject(operator('organization.created', 'organization', 'org_new', { name: 'New', plan: 'business', memberCount: 0 }));
    expect(Math.abs(row.created_at.getTime() - Date.now())).toBeLessThan(60_000);
    row = await oneNew('org_new', async () => expect((await t.call('PATCH', `${ORG}/org_new`, { name: 'New', plan: 'enterprise' })).statusCode).toBe(200));
    expect(row).toMatchObject(operator('organization.updated', 'organization', 'org_new', { changed: ['plan'], plan: 'enterprise' }));

    // Keys: the secret is in the answer only.
    let created: { id: string; key: string; prefix: string } = { id: '', key: '', prefix: '' };
    row = await oneNew('org_a', async () => {
      const res = await t.call('POST', `${ORG}/org_a/keys`, { name: 'ci', scope: 'read' });
      expect(res.statusCode).toBe(201);
      created = res.json();
    });
    secrets.push(created.key);
    expect(row).toMatchObject(operator('key.created', 'key', created.id, { name: 'ci', scope: 'read', prefix: created.prefix, expiresAt: null }));
    row = await oneNew('org_a', async () => expect((await t.call('DELETE', `${ORG}/org_a/keys/${created.id}`)).statusCode).toBe(200));
    expect(row).toMatchObject(operator('key.revoked', 'key', created.id, { name: 'ci', prefix: created.prefix, revokedAt: expect.stringMatching(/Z$/) }));

    // Pulses: counts, never a pulse or a comment.
    row = await oneNew('org_a', async () => {
      const res = await t.call('POST', `${ORG}/org_a/pulses`, { pulses: [pulse('live_1'), pulse('live_2'), pulse(MODERATED)] });
      expect(res.json()).toEqual({ inserted: 2, unchanged: 1, inFrozenWeeks: 0 });
    });
    expect(row).toMatchObject(operator('pulses.ingested', 'pulses', null, { inserted: 2, unchanged: 1, inFrozenWeeks: 0 }));
    row = await oneNew('org_a', async () => {
      const body = `${[pulse('file_1'), pulse('file_2', { level: 4 })].map((p) => JSON.stringify(p)).join('\n')}\n`;
      const res = await t.admin.inject({
        method: 'POST',
        url: `${ORG}/org_a/pulses/import`,
        payload: body,
        headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/x-ndjson' },
      });
      expect(JSON.parse(res.body.trim().split('\n').at(-1)!).summary).toMatchObject({ imported: 2, skipped: 0 });
    });
    expect(row).toMatchObject(operator('pulses.imported', 'pulses', null, { imported: 2, skipped: 0, rows: 2, format: 'ndjson', onError: 'abort' }));

    // Moderation: the row never names the pulse (docs/privacy.md); it says the status it set.
    row = await oneNew('org_a', async () =>
      expect((await t.call('PATCH', `${ORG}/org_a/pulses/${MODERATED}`, { moderationStatus: 'FLAGGED' })).json()).toMatchObject({ changed: true }),
    );
    expect(row).toMatchObject(operator('pulse.moderated', 'pulse', null, { status: 'FLAGGED', statusChanged: true }));
    row = await oneNew('org_a', async () =>
      expect((await t.call('PATCH', `${ORG}/org_a/pulses/${MODERATED}`, { moderationStatus: 'FLAGGED' })).json()).toMatchObject({ changed: false }),
    );
    expect(row).toMatchObject(operator('pulse.moderated', 'pulse', null, { status: 'FLAGGED', statusChanged: false }));
    secrets.push(MODERATED);

    // The read marker of an alert.
    row = await oneNew('org_a', async () => expect((await t.call('PATCH', `${ORG}/org_a/alerts/al_1`, { read: true })).statusCode).toBe(200));
    expect(row).toMatchObject(operator('alert.read', 'alert', 'al_1'));
    row = await oneNew('org_a', async () => expect((await t.call('PATCH', `${ORG}/org_a/alerts/al_1`, { read: false })).statusCode).toBe(200));
    expect(row).toMatchObject(operator('alert.unread', 'alert', 'al_1'));
  });

  it('webhook endpoints: added, tested, enabled, a delivery replayed, removed; the host only, never the URL or the secret', async () => {
    const url = `${rx.url}/gone?token=url-credential-zq5`;
    secrets.push('url-credential-zq5');
    let endpoint: { id: string; secret: string } = { id: '', secret: '' };
    let row = await oneNew('org_a', async () => {
      const res = await t.call('POST', `${ORG}/org_a/webhook-endpoints`, { url });
      expect(res.statusCode).toBe(201);
      endpoint = res.json();
    });
    secrets.push(endpoint.secret);
    const host = new URL(rx.url).host;
    expect(row).toMatchObject(operator('webhook_endpoint.created', 'webhook_endpoint', endpoint.id, { host, eventTypes: null }));

    // The first ping is answered 410: the endpoint is disabled; enabling it is a change.
    row = await oneNew('org_a', async () =>
      expect((await t.call('POST', `/admin/v1/webhook-endpoints/${endpoint.id}/test`)).json()).toMatchObject({ outcome: 'endpoint_disabled' }),
    );
    expect(row).toMatchObject(operator('webhook_endpoint.tested', 'webhook_endpoint', endpoint.id));
    row = await oneNew('org_a', async () =>
      expect((await t.call('POST', `/admin/v1/webhook-endpoints/${endpoint.id}/enable`)).json()).toMatchObject({ enabled: true }),
    );
    expect(row).toMatchObject(operator('webhook_endpoint.enabled', 'webhook_endpoint', endpoint.id, { host, wasEnabled: false }));

    // The second is answered 500: a failed delivery, replayed.
    let deliveryId = '';
    await oneNew('org_a', async () => {
      const ping = (await t.call('POST', `/admin/v1/webhook-endpoints/${endpoint.id}/test`)).json();
      expect(ping.outcome).toBe('failed');
      deliveryId = ping.deliveryId;
    });
    row = await oneNew('org_a', async () => expect((await t.call('POST', `/admin/v1/webhook-deliveries/${deliveryId}/replay`)).statusCode).toBe(200));
    expect(row).toMatchObject(operator('webhook_delivery.replayed', 'webhook_delivery', deliveryId, { eventType: 'ping', endpointId: endpoint.id }));

    row = await oneNew('org_a', async () => expect((await t.call('DELETE', `${ORG}/org_a/webhook-endpoints/${endpoint.id}`)).statusCode).toBe(200));
    expect(row).toMatchObject(operator('webhook_endpoint.removed', 'webhook_endpoint', endpoint.id, { host }));
  });

  it('every public change leaves one row naming the key by its prefix, from the client address; a replay leaves no second row', async () => {
    let teamId = '';
    let row = await oneNew('org_a', async () => {
      const res = await pub('POST', '/v1/teams', { name: 'Web' }, { 'idempotency-key': 'audit-team-1' });
      expect(res.statusCode).toBe(200);
      teamId = res.json().id;
    });
    expect(row).toMatchObject(byKey('team.created', 'team', teamId, { name: 'Web' }));
    await noneNew(async () => {
      const again = await pub('POST', '/v1/teams', { name: 'Web' }, { 'idempotency-key': 'audit-team-1' });
      expect([again.statusCode, again.headers['idempotent-replayed'], again.json().id]).toEqual([200, 'true', teamId]);
    });

    let actionId = '';
    row = await oneNew('org_a', async () => {
      const res = await pub('POST', '/api/v1/actions', { title: 'Retro', subteamId: teamId }, { 'idempotency-key': 'audit-action-1' });
      expect(res.statusCode).toBe(200);
      actionId = res.json().id;
    });
    expect(row).toMatchObject(byKey('action.created', 'action', actionId, { status: 'active', subteamId: teamId }));
    await noneNew(async () => {
      const again = await pub('POST', '/v1/actions', { title: 'Retro', subteamId: teamId }, { 'idempotency-key': 'audit-action-1' });
      expect([again.statusCode, again.headers['idempotent-replayed']]).toEqual([200, 'true']);
    });

    row = await oneNew('org_a', async () => expect((await pub('PATCH', `/v1/actions/${actionId}`, { status: 'done', title: 'Retro' })).statusCode).toBe(200));
    expect(row).toMatchObject(byKey('action.updated', 'action', actionId, { changed: ['status'], status: 'done' }));
    row = await oneNew('org_a', async () => expect((await pub('PATCH', `/v1/actions/${actionId}`, { description: 'Talk it through' })).statusCode).toBe(200));
    expect(row).toMatchObject(byKey('action.updated', 'action', actionId, { changed: ['description'] }));
    secrets.push('Talk it through');
  });

  it('a refused write (4xx) leaves no row, through either API', async () => {
    const reader = (await t.call('POST', `${ORG}/org_a/keys`, { name: 'reader', scope: 'read' })).json().key;
    secrets.push(reader);
    const refused: [string, () => Promise<{ statusCode: number }>, number][] = [
      ['an organization id taken', () => t.call('POST', ORG, { id: 'org_a', name: 'Again', plan: 'business' }), 400],
      ['an unknown plan', () => t.call('PATCH', `${ORG}/org_a`, { plan: 'nope' }), 400],
      ['an unknown organization', () => t.call('PATCH', `${ORG}/org_nope`, { name: 'X' }), 404],
      ['a key expiring in the past', () => t.call('POST', `${ORG}/org_a/keys`, { expiresAt: '2020-01-01T00:00:00Z' }), 400],
      ['an unknown key', () => t.call('DELETE', `${ORG}/org_a/keys/key_nope`), 404],
      ['an unknown pulse', () => t.call('PATCH', `${ORG}/org_a/pulses/nope`, { moderationStatus: 'CLEAN' }), 404],
      ['an unknown alert', () => t.call('PATCH', `${ORG}/org_a/alerts/al_nope`, { read: true }), 404],
      ['a webhook URL refused', () => t.call('POST', `${ORG}/org_a/webhook-endpoints`, { url: 'ftp://example.com' }), 400],
      ['an unknown endpoint', () => t.call('DELETE', `${ORG}/org_a/webhook-endpoints/whe_nope`), 404],
      ['an unknown delivery', () => t.call('POST', '/admin/v1/webhook-deliveries/whd_nope/replay'), 404],
      ['a team name taken', () => pub('POST', '/v1/teams', { name: 'web' }, { 'idempotency-key': 'audit-team-2' }), 409],
      ['an Idempotency-Key reused for another body', () => pub('POST', '/v1/teams', { name: 'Other' }, { 'idempotency-key': 'audit-team-1' }), 409],
      [
        'an action of an unknown team',
        () => pub('POST', '/v1/actions', { title: 'Nope', subteamId: 'team_nope' }, { 'idempotency-key': 'audit-action-2' }),
        400,
      ],
      ['a write with a read-only key', () => pub('POST', '/v1/teams', { name: 'Reader' }, { 'idempotency-key': 'audit-team-3' }, reader), 403],
    ];
    for (const [what, run, status] of refused) {
      await noneNew(async () => expect((await run()).statusCode, what).toBe(status));
    }
  });

  it('a change rolled back leaves no row: a batch refused whole, an import aborted, a failure after the row', async () => {
    const count = async () => (await t.db.query<{ n: number }>(sql('test.audit.pulses', `SELECT count(*)::int AS n FROM pulses WHERE org_id = 'org_a'`)))[0].n;
    const pulses = await count();
    await noneNew(async () => {
      const bad = await t.call('POST', `${ORG}/org_a/pulses`, { pulses: [pulse('roll_1'), pulse('roll_2', { level: 9 })] });
      expect(bad.json().error.message).toMatch(/'pulses\[1\]\.level'/);
      const conflict = await t.call('POST', `${ORG}/org_a/pulses`, { pulses: [pulse('roll_3'), pulse('live_1', { level: 1 })] });
      expect(conflict.statusCode).toBe(409);
      const body = `${JSON.stringify(pulse('roll_4'))}\n${JSON.stringify(pulse('roll_5', { level: 0 }))}\n`;
      const aborted = await t.admin.inject({
        method: 'POST',
        url: `${ORG}/org_a/pulses/import`,
        payload: body,
        headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/x-ndjson' },
      });
      expect(JSON.parse(aborted.body.trim().split('\n').at(-1)!).error.message).toMatch(/^import aborted/);
    });
    expect(await count()).toBe(pulses);

    // The row and the change are one transaction: when the row cannot be written, the change is not made either.
    await t.db.exec(`CREATE FUNCTION test_refuse_audit() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN IF NEW.details->>'name' = 'Doomed' THEN RAISE EXCEPTION 'refused by the test'; END IF; RETURN NEW; END $$`);
    await t.db.exec(`CREATE TRIGGER test_refuse_audit BEFORE INSERT ON audit_events FOR EACH ROW EXECUTE FUNCTION test_refuse_audit()`);
    try {
      await noneNew(async () => {
        expect((await pub('POST', '/v1/teams', { name: 'Doomed' }, { 'idempotency-key': 'audit-doomed-1' })).statusCode).toBe(500);
        expect((await t.call('POST', `${ORG}/org_a/keys`, { name: 'Doomed' })).statusCode).toBe(500);
      });
      expect((await pub('GET', '/v1/teams')).json().items.map((x: { name: string }) => x.name)).not.toContain('Doomed');
      expect((await t.call('GET', `${ORG}/org_a/keys`)).json().items.map((k: { name: string }) => k.name)).not.toContain('Doomed');
    } finally {
      // Two transactions: Citus runs no function command after a parallel one on a distributed table.
      await t.db.exec(`DROP TRIGGER test_refuse_audit ON audit_events`);
      await t.db.exec(`DROP FUNCTION test_refuse_audit()`);
    }
    // The key was not stored as used either: the same Idempotency-Key now creates the team.
    await oneNew('org_a', async () =>
      expect((await pub('POST', '/v1/teams', { name: 'Doomed' }, { 'idempotency-key': 'audit-doomed-1' })).statusCode).toBe(200),
    );
  });

  it('no column of any row holds a secret, a key, a hash, a URL credential, a pulse id of a moderation or a comment', async () => {
    const all = await t.db.query<{ j: string }>(sql('test.audit.json', `SELECT row_to_json(a)::text AS j FROM audit_events a`));
    expect(all.length).toBeGreaterThan(20);
    const text = all.map((r) => r.j).join('\n');
    for (const s of secrets) expect(text.includes(s), `the audit log holds ${JSON.stringify(s.slice(0, 12))}...`).toBe(false);
    expect(text).not.toMatch(/whsec_|cp_live_[0-9A-Za-z]{20}/);
  });

  it('pages newest first by (createdAt, id) with a cursor, filtered by actor kind and action, in the documented shape', async () => {
    for (let i = 0; i < 7; i++) expect((await t.call('PATCH', `${ORG}/org_p/alerts/al_p`, { read: i % 2 === 0 })).statusCode).toBe(200);
    const rows = (await rowsOf('org_p')).reverse(); // newest first
    expect(rows).toHaveLength(7);
    const pages: string[][] = [];
    let cursor: string | null = null;
    do {
      const res = await t.call('GET', `${ORG}/org_p/audit-events?limit=3${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
      expect(res.statusCode).toBe(200);
      const body = res.json();
      pages.push(body.items.map((e: { id: string }) => e.id));
      cursor = body.nextCursor;
    } while (cursor);
    expect(pages.map((p) => p.length)).toEqual([3, 3, 1]);
    expect(pages.flat()).toEqual(rows.map((r) => r.id));

    const first = (await t.call('GET', `${ORG}/org_p/audit-events?limit=1`)).json();
    const r = rows[0];
    expect(first).toEqual({
      items: [
        {
          id: r.id,
          createdAt: r.created_at.toISOString(),
          actor: { kind: 'operator', id: null, label: 'operator' },
          action: 'alert.read',
          target: { kind: 'alert', id: 'al_p' },
          address: '127.0.0.1',
          details: {},
        },
      ],
      nextCursor: `${r.created_at.toISOString()}|${r.id}`,
    });
    expect((await t.call('GET', `${ORG}/org_p/audit-events`)).json().items).toHaveLength(7); // default 50

    const a = (await t.call('GET', `${ORG}/org_a/audit-events?limit=100&actorKind=key`)).json();
    expect(a.items.length).toBeGreaterThan(3);
    expect(new Set(a.items.map((e: { actor: { label: string } }) => e.actor.label))).toEqual(new Set([PREFIX_A]));
    const reads = (await t.call('GET', `${ORG}/org_a/audit-events?action=alert.read`)).json();
    expect(reads.items.map((e: { action: string }) => e.action)).toEqual(['alert.read']);

    for (const [query, code] of [
      ['limit=0', 'invalid_request'],
      ['limit=101', 'invalid_request'],
      ['cursor=nope', 'invalid_cursor'],
      ['actorKind=robot', 'invalid_request'],
      ['extra=1', 'invalid_request'],
    ]) {
      const res = await t.call('GET', `${ORG}/org_p/audit-events?${query}`);
      expect([res.statusCode, res.json().error.code], query).toEqual([400, code]);
    }
    expect((await t.call('GET', `${ORG}/org_nope/audit-events`)).statusCode).toBe(404);
  });

  it('a soft delete keeps the log and adds to it; erasing the organization removes its rows', async () => {
    const before = (await rowsOf('org_new')).length;
    const row = await oneNew('org_new', async () => expect((await t.call('DELETE', `${ORG}/org_new`)).statusCode).toBe(200));
    expect(row).toMatchObject(operator('organization.deleted', 'organization', 'org_new'));
    expect(await rowsOf('org_new')).toHaveLength(before + 1);
    expect((await t.call('GET', `${ORG}/org_new/audit-events`)).json().items.map((e: { action: string }) => e.action)).toEqual([
      'organization.deleted',
      'organization.updated',
      'organization.created',
    ]);

    const others = (await rowsOf('org_p')).length;
    expect((await rowsOf('org_a')).length).toBeGreaterThan(0);
    expect((await t.call('DELETE', `${ORG}/org_a?erase=true`)).json()).toMatchObject({ erased: true });
    expect(await rowsOf('org_a')).toEqual([]);
    expect(await rowsOf('org_p')).toHaveLength(others);
    expect((await t.call('GET', `${ORG}/org_a/audit-events`)).statusCode).toBe(404);
  });
});

// The CLI runs in this process (runCliInProcess): what is tested is what it prints and records.
describe('climate-pulse audit', { timeout: 300_000 }, () => {
  let cdb: Awaited<ReturnType<typeof createCliDatabase>>;
  beforeAll(async () => {
    cdb = await createCliDatabase();
    const file = join(tmpdir(), `audit-ds-${process.pid}.json`);
    writeFileSync(file, JSON.stringify({ organizations: [{ id: 'org_c', name: 'C', plan: 'business', createdAt: '2026-01-01T00:00:00.000Z' }] }));
    expect((await cli(['load', file], cdb.env)).code).toBe(0);
  });
  afterAll(() => cdb?.close());

  it('prints the log newest first, one line per event; the CLI is the operator', async () => {
    expect((await cli(['orgs', 'update', '--org', 'org_c', '--name', 'Renamed'], cdb.env)).code).toBe(0);
    const created = await cli(['keys', 'create', '--org', 'org_c', '--name', 'ci'], cdb.env);
    expect(created.code).toBe(0);
    const secret = created.stdout.trim();

    const out = await cli(['audit', '--org', 'org_c'], cdb.env);
    expect(out.code).toBe(0);
    const lines = out.stdout.trimEnd().split('\n');
    const time = '\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\d\\.\\d{3}Z';
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatch(
      new RegExp(
        `^${time}  operator  key\\.created  key:key_[0-9A-Za-z]{16}  127\\.0\\.0\\.1  \\{"name":"ci","scope":"read_write","prefix":"${secret.slice(0, 14)}","expiresAt":null\\}$`,
      ),
    );
    expect(lines[1]).toMatch(
      new RegExp(`^${time}  operator  organization\\.updated  organization:org_c  127\\.0\\.0\\.1  \\{"name":"Renamed","changed":\\["name"\\]\\}$`),
    );
    expect(out.stdout).not.toContain(secret);

    const one = await cli(['audit', '--org', 'org_c', '--limit', '1', '--json'], cdb.env);
    expect(
      one.stdout
        .trimEnd()
        .split('\n')
        .map((l) => JSON.parse(l).action),
    ).toEqual(['key.created']);
    const filtered = await cli(['audit', '--org', 'org_c', '--action', 'organization.updated'], cdb.env);
    expect(filtered.stdout.trimEnd().split('\n')).toEqual([lines[1]]);
    const unknown = await cli(['audit', '--org', 'org_nope'], cdb.env);
    expect([unknown.code, unknown.stderr.trim()]).toEqual([1, 'climate-pulse: no organization "org_nope"']);
  });
});
