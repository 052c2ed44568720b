import { Registry } from 'prom-client';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from '../../src/db/executor.js';
import { insertAlerts, recentAlerts } from '../../src/db/repositories/alerts.js';
import { insertEndpoint, listDeliveries, listEndpoints, replayDelivery } from '../../src/db/repositories/webhooks.js';
import type { Dataset } from '../../src/domain/dataset.js';
import { createEndpoint, checkWebhookUrl, newWebhookSecret, recordAlertCreated, retryDelayMs, parseRetryAfter } from '../../src/domain/webhook-deliveries.js';
import { WebhookWorker } from '../../src/jobs/webhooks.js';
import { DEFAULT_THRESHOLDS, runAlertEngine } from '../../src/domain/alert-engine.js';
import { loadDataset } from '../../src/domain/dataset.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { expectDocumentedEvent } from '../helpers/openapi.js';
import { startReceiver, waitFor, type Receiver, type Received } from '../helpers/receiver.js';

const ORGS = ['main', 'other', 'retry', 'later', 'final', 'gone', 'redirect', 'txfail', 'badurl', 'slow'] as const;
const key = (org: string) => `cp_test_webhooks_${org}_0123456789abcdef`;
const COMMENT = 'comment-text-that-must-never-travel';

const dataset = (): Dataset => ({
  organizations: ORGS.map((org) => ({
    id: `org_${org}`,
    name: org,
    plan: 'business',
    createdAt: '2026-01-01T00:00:00.000Z',
    apiKeys: [{ key: key(org) }],
    teams: [{ id: `team_${org}`, name: `Team ${org}`, createdAt: '2026-01-01T00:00:00.000Z' }],
    pulses: [1, 2, 3, 4, 5, 6].map((i) => ({
      id: `p_${org}_${i}`,
      level: 3,
      reason: null,
      comment: `${COMMENT} ${i}`,
      moderationStatus: 'CLEAN' as const,
      subteamId: `team_${org}`,
      createdAt: '2026-11-02T08:00:00.000Z',
    })),
  })),
});

const RETRY_MS = [150, 150];

/** Routes by path: /<org>/<n> answers by the script registered for the path. */
const scripts = new Map<string, (n: number) => number | { status: number; headers?: Record<string, string> } | 'hang'>();

describe('webhook delivery', () => {
  let t: TestApp;
  let rx: Receiver;
  let worker: WebhookWorker;
  const registry = new Registry();
  const secrets = new Map<string, string>();

  const endpoint = async (org: string, path: string, eventTypes: null | ('action.created' | 'action.updated' | 'alert.created')[] = null) => {
    const e = await createEndpoint(t.db, `org_${org}`, { url: `${rx.url}${path}`, eventTypes, allowPrivate: true, now: new Date() });
    secrets.set(path, e.secret);
    return e;
  };
  const postAction = (org: string, idem: string, body: object) =>
    t.app.inject({
      method: 'POST',
      url: '/v1/actions',
      payload: body,
      headers: { authorization: `Bearer ${key(org)}`, 'idempotency-key': idem },
    });
  const getItems = async (org: string, path: string) =>
    (await t.app.inject({ url: path, headers: { authorization: `Bearer ${key(org)}` } })).json().items as Record<string, unknown>[];
  /** Verifies with the library a receiver would use, and returns the parsed payload. */
  const verified = (r: Received) =>
    new Webhook(secrets.get(r.path)!).verify(r.body, r.headers as Record<string, string>) as { type: string; timestamp: string; data: Record<string, unknown> };

  beforeAll(async () => {
    t = await createTestApp({ dataset: dataset() });
    rx = await startReceiver((path, n) => scripts.get(path)?.(n) ?? 200);
    worker = new WebhookWorker(t.db, { pollMs: 20, timeoutMs: 1000, retryScheduleMs: RETRY_MS, registry, allowPrivate: true });
    worker.start();
  });
  afterAll(async () => {
    await worker.close();
    await rx.close();
    await t.close();
  });

  it('sends action.created and action.updated signed, with data equal to GET /actions; a PATCH that changes nothing sends none', async () => {
    await endpoint('main', '/main');
    await endpoint('other', '/other');
    const created = await postAction('main', 'webhook-create-1', { title: 'Retro', subteamId: 'team_main' });
    expect(created.statusCode).toBe(200);
    const id = created.json().id as string;
    expect(await waitFor(() => rx.on('/main').length === 1)).toBe(true);

    const [first] = rx.on('/main');
    expect(first.headers['content-type']).toBe('application/json');
    expect(first.headers['webhook-id']).toMatch(/^msg_[0-9A-Za-z]{16}$/);
    expect(Math.abs(Number(first.headers['webhook-timestamp']) - Date.now() / 1000)).toBeLessThan(10);
    expect(first.headers['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/]+=*$/);
    const event = verified(first);
    const [item] = await getItems('main', '/v1/actions');
    expect(item.$id).toBe(id);
    expect(event).toEqual({ type: 'action.created', timestamp: item.createdAt, data: item });
    expect(Object.keys(JSON.parse(first.body))).toEqual(['type', 'timestamp', 'data']);

    const patched = await t.app.inject({
      method: 'PATCH',
      url: `/v1/actions/${id}`,
      payload: { title: 'Retro, part 2', subteamId: null },
      headers: { authorization: `Bearer ${key('main')}` },
    });
    expect(patched.statusCode).toBe(200);
    expect(await waitFor(() => rx.on('/main').length === 2)).toBe(true);
    const updated = verified(rx.on('/main')[1]);
    expect(updated.type).toBe('action.updated');
    expect(updated.data).toEqual((await getItems('main', '/v1/actions'))[0]);
    expect(updated.data).toMatchObject({ $id: id, title: 'Retro, part 2', subteamId: null, subteamName: null });
    expect(rx.on('/main')[1].headers['webhook-id']).not.toBe(first.headers['webhook-id']);

    const same = await t.app.inject({
      method: 'PATCH',
      url: `/v1/actions/${id}`,
      payload: { title: 'Retro, part 2' },
      headers: { authorization: `Bearer ${key('main')}` },
    });
    expect(same.statusCode).toBe(200);
    // A replayed POST creates nothing and raises nothing either.
    expect((await postAction('main', 'webhook-create-1', { title: 'Retro', subteamId: 'team_main' })).headers['idempotent-replayed']).toBe('true');
    await new Promise((r) => setTimeout(r, 300));
    expect(rx.on('/main').length).toBe(2);
    expect(rx.on('/other').length).toBe(0); // another organization's endpoint hears nothing of it
  });

  it('sends alert.created with the alert as GET /alerts shows it, and only its fields', async () => {
    await endpoint('main', '/main-alerts', ['alert.created']);
    await t.db.transaction(async (tx) => {
      await insertAlerts(tx, 'org_main', [
        {
          id: 'al_w1',
          type: 'MOOD_DROP',
          message: 'Mood fell 20% in Team main',
          weekISO: '2026-W47',
          subteamId: 'team_main',
          readAt: null,
          createdAt: '2026-11-21T06:00:00.000Z',
        },
      ]);
      const [alert] = await recentAlerts(tx, 'org_main', 1);
      await recordAlertCreated(tx, 'org_main', { ...alert, subteamId: 'team_main' } as typeof alert, new Date());
    });
    expect(await waitFor(() => rx.on('/main-alerts').length === 1)).toBe(true);
    const [alert] = await getItems('main', '/v1/alerts');
    expect(verified(rx.on('/main-alerts')[0])).toEqual({ type: 'alert.created', timestamp: expect.stringMatching(/Z$/), data: alert });
    expect(alert).toEqual({
      id: 'al_w1',
      type: 'MOOD_DROP',
      message: 'Mood fell 20% in Team main',
      weekISO: '2026-W47',
      subteamName: 'Team main',
      readAt: null,
      createdAt: '2026-11-21T06:00:00.000Z',
    });
    // The endpoint subscribed to alerts only; /main (all types) got the alert too.
    expect(await waitFor(() => rx.on('/main').length === 3)).toBe(true);
    expect(verified(rx.on('/main')[2]).type).toBe('alert.created');
    await new Promise((r) => setTimeout(r, 200));
    expect(rx.on('/main-alerts').length).toBe(1);
  });

  it('the alert engine writes alert.created in the transaction that raises the alert, once per alert', async () => {
    await loadDataset(t.db, {
      organizations: [
        {
          id: 'org_engine',
          name: 'engine',
          plan: 'business',
          createdAt: '2026-01-01T00:00:00.000Z',
          apiKeys: [{ key: key('engine') }],
          teams: [{ id: 'team_engine', name: 'Team engine', createdAt: '2026-01-01T00:00:00.000Z' }],
          pulses: [1, 2, 3, 4, 5, 6].map((i) => ({
            id: `p_engine_${i}`,
            level: 1,
            reason: null,
            comment: `${COMMENT} ${i}`,
            moderationStatus: 'CLEAN' as const,
            subteamId: 'team_engine',
            createdAt: '2026-11-03T08:00:00.000Z',
          })),
        },
      ],
    });
    await endpoint('engine', '/engine');
    const run = () =>
      runAlertEngine(t.db, { thresholds: DEFAULT_THRESHOLDS, weeks: [new Date('2026-11-02T00:00:00.000Z')], orgIds: ['org_engine'], clock: () => new Date() });
    expect((await run()).raised.map((a) => a.type)).toEqual(['LOW_MOOD', 'LOW_MOOD']); // the team, and the organization
    expect((await run()).raised).toEqual([]);
    expect(await waitFor(() => rx.on('/engine').length === 2)).toBe(true);
    const alerts = await getItems('engine', '/v1/alerts');
    const sent = rx.on('/engine').map((r) => verified(r));
    expect(sent.map((e) => e.type)).toEqual(['alert.created', 'alert.created']);
    expect(new Set(sent.map((e) => JSON.stringify(e.data)))).toEqual(new Set(alerts.map((a) => JSON.stringify(a))));
    await new Promise((r) => setTimeout(r, 200));
    expect(rx.on('/engine').length).toBe(2);
  });

  it('a receiver that answers 500 twice, then 200, gets the event three times with one webhook-id', async () => {
    scripts.set('/retry', (n) => (n < 2 ? 500 : 200));
    await endpoint('retry', '/retry');
    expect((await postAction('retry', 'webhook-retry-1', { title: 'Retry me' })).statusCode).toBe(200);
    expect(await waitFor(() => rx.on('/retry').length === 3)).toBe(true);
    const got = rx.on('/retry');
    expect(new Set(got.map((r) => r.headers['webhook-id'])).size).toBe(1);
    expect(new Set(got.map((r) => r.body)).size).toBe(1);
    for (const r of got) expect(verified(r).type).toBe('action.created');
    // Waits follow the schedule (150 ms +-10%).
    expect(got[1].at - got[0].at).toBeGreaterThanOrEqual(130);
    expect(await waitFor(async () => (await listDeliveries(t.db, 'org_retry', { limit: 5 }))[0].status === 'succeeded')).toBe(true);
    const [d] = await listDeliveries(t.db, 'org_retry', { limit: 5 });
    expect(d).toMatchObject({
      status: 'succeeded',
      attempts: 3,
      lastStatusCode: 200,
      lastError: null,
      type: 'action.created',
      eventId: got[0].headers['webhook-id'],
    });
    expect(d.id).toMatch(/^whd_[0-9a-f]{32}$/);
    await new Promise((r) => setTimeout(r, 400));
    expect(rx.on('/retry').length).toBe(3);
  });

  it('honours Retry-After', async () => {
    scripts.set('/later', (n) => (n === 0 ? { status: 503, headers: { 'retry-after': '1' } } : 200));
    await endpoint('later', '/later');
    expect((await postAction('later', 'webhook-later-1', { title: 'Later' })).statusCode).toBe(200);
    expect(await waitFor(() => rx.on('/later').length === 2)).toBe(true);
    const [a, b] = rx.on('/later');
    expect(b.at - a.at).toBeGreaterThanOrEqual(950);
    expect(parseRetryAfter('120')).toBe(120_000);
    expect(parseRetryAfter(new Date(Date.now() + 60_000).toUTCString())).toBeGreaterThan(55_000);
    expect(parseRetryAfter('soon')).toBeUndefined();
    expect(parseRetryAfter('999999999')).toBe(24 * 3600_000);
  });

  it('after the last retry the delivery fails; a replay sends it again with the same webhook-id', async () => {
    let healthy = false;
    scripts.set('/final', () => (healthy ? 200 : 500));
    await endpoint('final', '/final');
    expect((await postAction('final', 'webhook-final-1', { title: 'Doomed' })).statusCode).toBe(200);
    expect(await waitFor(async () => (await listDeliveries(t.db, 'org_final', { status: 'failed', limit: 5 })).length === 1)).toBe(true);
    expect(rx.on('/final').length).toBe(1 + RETRY_MS.length);
    const [failed] = await listDeliveries(t.db, 'org_final', { status: 'failed', limit: 5 });
    expect(failed).toMatchObject({ status: 'failed', attempts: 3, lastStatusCode: 500, lastError: 'HTTP 500', nextAttemptAt: null });

    healthy = true;
    expect(await replayDelivery(t.db, 'org_final', failed.id)).toBe(true);
    expect(await waitFor(() => rx.on('/final').length === 4)).toBe(true);
    expect(rx.on('/final')[3].headers['webhook-id']).toBe(rx.on('/final')[0].headers['webhook-id']);
    expect(await waitFor(async () => (await listDeliveries(t.db, 'org_final', { limit: 5 }))[0].status === 'succeeded')).toBe(true);
    expect(await replayDelivery(t.db, 'org_final', failed.id)).toBe(false); // only failed deliveries are replayed
  });

  it('410 disables the endpoint: its pending deliveries fail and later events skip it', async () => {
    scripts.set('/gone', () => 410);
    const gone = await endpoint('gone', '/gone');
    await endpoint('gone', '/gone-alive');
    expect((await postAction('gone', 'webhook-gone-1', { title: 'Gone' })).statusCode).toBe(200);
    expect(await waitFor(async () => !(await listEndpoints(t.db, 'org_gone')).find((e) => e.id === gone.id)!.enabled)).toBe(true);
    const e = (await listEndpoints(t.db, 'org_gone')).find((x) => x.id === gone.id)!;
    expect(e).toMatchObject({ enabled: false, disabledReason: 'HTTP 410 Gone', disabledAt: expect.stringMatching(/Z$/) });
    expect((await postAction('gone', 'webhook-gone-2', { title: 'Gone again' })).statusCode).toBe(200);
    expect(await waitFor(() => rx.on('/gone-alive').length === 2)).toBe(true);
    await new Promise((r) => setTimeout(r, 300));
    expect(rx.on('/gone').length).toBe(1);
    const failed = await listDeliveries(t.db, 'org_gone', { status: 'failed', limit: 5 });
    expect(failed.map((d) => [d.endpointId, d.lastStatusCode, d.lastError])).toEqual([[gone.id, 410, 'HTTP 410: endpoint disabled']]);
  });

  it('does not follow redirects', async () => {
    scripts.set('/redirect', () => ({ status: 302, headers: { location: `${rx.url}/redirect-target` } }));
    await endpoint('redirect', '/redirect');
    expect((await postAction('redirect', 'webhook-redirect-1', { title: 'Redirected' })).statusCode).toBe(200);
    expect(await waitFor(async () => (await listDeliveries(t.db, 'org_redirect', { status: 'failed', limit: 5 })).length === 1)).toBe(true);
    expect(rx.on('/redirect').length).toBe(3);
    expect(rx.on('/redirect-target').length).toBe(0);
    expect((await listDeliveries(t.db, 'org_redirect', { limit: 5 }))[0].lastError).toBe('HTTP 302 (redirects are not followed)');
  });

  it('an action whose transaction fails after the insert raises no event', async () => {
    await endpoint('txfail', '/txfail');
    // A real database failure after createAction (and its outbox row) ran: completing the
    // idempotency record, the transaction's last statement, raises.
    await t.db.exec(`
      CREATE FUNCTION fail_idempotency_completion() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF NEW.org_id = 'org_txfail' THEN RAISE EXCEPTION 'injected failure after the action was inserted'; END IF;
        RETURN NEW;
      END $$;
      CREATE TRIGGER fail_idempotency_completion BEFORE UPDATE ON idempotency_records
        FOR EACH ROW EXECUTE FUNCTION fail_idempotency_completion();`);
    try {
      const res = await postAction('txfail', 'webhook-txfail-1', { title: 'Never happened' });
      expect(res.statusCode).toBe(500);
      expect(res.json().error.code).toBe('internal_error');
    } finally {
      // Two transactions: on Citus, dropping a trigger of a distributed table runs on its shards in
      // parallel, after which Citus refuses function DDL in the same transaction.
      await t.db.exec('DROP TRIGGER fail_idempotency_completion ON idempotency_records');
      await t.db.exec('DROP FUNCTION fail_idempotency_completion()');
    }
    expect(await getItems('txfail', '/v1/actions')).toEqual([]);
    expect(await t.db.query(sql('t.events', `SELECT id FROM webhook_events WHERE org_id = 'org_txfail'`))).toEqual([]);
    await new Promise((r) => setTimeout(r, 300));
    expect(rx.on('/txfail').length).toBe(0);

    // The same request, once the transaction can commit: the action and its one event.
    expect((await postAction('txfail', 'webhook-txfail-1', { title: 'Never happened' })).statusCode).toBe(200);
    expect(await waitFor(() => rx.on('/txfail').length === 1)).toBe(true);
    expect(verified(rx.on('/txfail')[0]).data.title).toBe('Never happened');
  });

  it('checks the URL rule again before sending, and times out a receiver that does not answer', async () => {
    await insertEndpoint(t.db, 'org_badurl', {
      id: 'whe_bad',
      url: 'http://192.0.2.1/hook',
      secret: newWebhookSecret(),
      eventTypes: null,
      createdAt: new Date(),
    });
    expect((await postAction('badurl', 'webhook-badurl-1', { title: 'Bad URL' })).statusCode).toBe(200);
    expect(await waitFor(async () => (await listDeliveries(t.db, 'org_badurl', { status: 'failed', limit: 5 })).length === 1)).toBe(true);
    expect((await listDeliveries(t.db, 'org_badurl', { limit: 5 }))[0]).toMatchObject({
      attempts: 1,
      lastError: 'the URL must be https:// (http:// only to loopback, in tests, with WEBHOOK_ALLOW_PRIVATE=true)',
    });

    scripts.set('/slow', () => 'hang');
    await endpoint('slow', '/slow');
    expect((await postAction('slow', 'webhook-slow-1', { title: 'Slow' })).statusCode).toBe(200);
    expect(await waitFor(async () => (await listDeliveries(t.db, 'org_slow', { limit: 5 }))[0]?.lastError === 'timed out after 1000 ms')).toBe(true);
  });

  it('reports deliveries by outcome and the age of the oldest pending one', async () => {
    const text = await registry.metrics();
    const count = (outcome: string) => Number(new RegExp(`webhook_deliveries_total\\{outcome="${outcome}"\\} (\\d+)`).exec(text)?.[1]);
    expect(count('succeeded')).toBeGreaterThanOrEqual(9);
    expect(count('retry')).toBeGreaterThanOrEqual(2 + 1 + 2 + 2); // retry, later, final, redirect
    expect(count('failed')).toBeGreaterThanOrEqual(3);
    expect(count('endpoint_disabled')).toBe(1);
    // With no worker running, an event stays pending and the gauge shows its age.
    await worker.close();
    expect((await postAction('other', 'webhook-other-1', { title: 'Pending' })).statusCode).toBe(200);
    await new Promise((r) => setTimeout(r, 1100));
    const gauge = /^webhook_oldest_pending_seconds (\S+)$/m.exec(await registry.metrics())![1];
    expect(Number(gauge)).toBeGreaterThanOrEqual(1);
  });

  it('never carries comment text', () => {
    expect(rx.received.length).toBeGreaterThan(10);
    for (const r of rx.received) expect(r.body).not.toContain(COMMENT);
  });

  it("every body sent is its event as the served OpenAPI document's webhooks section describes it", async () => {
    const types = new Set<string>();
    for (const r of rx.received) {
      await expectDocumentedEvent(t.app, r.body);
      types.add(JSON.parse(r.body).type);
    }
    expect([...types].sort()).toEqual(['action.created', 'action.updated', 'alert.created']);
  });
});

describe('webhook rules', () => {
  it('accepts https:// to public hosts, and http:// only to loopback with WEBHOOK_ALLOW_PRIVATE', () => {
    for (const ok of ['https://hooks.example.com/x', 'https://8.8.8.8/x']) {
      expect(checkWebhookUrl(ok).toString()).toBe(new URL(ok).toString());
    }
    for (const ok of ['http://127.0.0.1:8080/h', 'http://127.5.6.7/', 'http://localhost:3000/h', 'http://[::1]:9000/h', 'https://10.0.0.1/x']) {
      expect(checkWebhookUrl(ok, { allowPrivate: true }).toString()).toBe(new URL(ok).toString());
    }
    const HTTPS_ONLY = 'the URL must be https:// (http:// only to loopback, in tests, with WEBHOOK_ALLOW_PRIVATE=true)';
    for (const [bad, message] of [
      ['http://example.com/h', HTTPS_ONLY],
      ['http://127.0.0.1:8080/h', HTTPS_ONLY],
      ['http://128.0.0.1/h', HTTPS_ONLY],
      ['http://127.0.0.1.example.com/h', HTTPS_ONLY],
      ['http://[::2]/h', HTTPS_ONLY],
      ['ftp://127.0.0.1/h', 'the URL must be https:// (got ftp:)'],
      ['https://user:pw@example.com/', 'the URL must not carry credentials'],
      ['not a url', 'not a URL: "not a url"'],
    ]) {
      expect(() => checkWebhookUrl(bad)).toThrow(message);
    }
    for (const bad of ['http://example.com/h', 'http://128.0.0.1/h', 'http://[::2]/h'])
      expect(() => checkWebhookUrl(bad, { allowPrivate: true })).toThrow(HTTPS_ONLY);
  });

  it('retries on the schedule with +-10% jitter, then gives up', () => {
    const schedule = [5000, 300_000];
    expect(retryDelayMs(1, schedule, undefined, () => 0)).toBe(4500);
    expect(retryDelayMs(1, schedule, undefined, () => 1)).toBe(5500);
    expect(retryDelayMs(2, schedule, undefined, () => 0.5)).toBe(300_000);
    expect(retryDelayMs(2, schedule, 600_000, () => 0.5)).toBe(600_000);
    expect(retryDelayMs(3, schedule)).toBeNull();
  });

  it('makes secrets standardwebhooks reads: whsec_ + base64 of 32 bytes', () => {
    const secret = newWebhookSecret();
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(Buffer.from(secret.slice(6), 'base64').length).toBe(32);
  });
});
