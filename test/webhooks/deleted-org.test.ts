import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cancelOrgDeliveries, claimDueDeliveries, listDeliveries, oldestPendingSeconds } from '../../src/db/repositories/webhooks.js';
import { createEndpoint, deliver, recordEvent } from '../../src/domain/webhook-deliveries.js';
import { createAdminTest, type AdminTest } from '../admin/helpers.js';
import { startReceiver, type Receiver } from '../helpers/receiver.js';

const ORG = '/admin/v1/organizations';
const KEY = 'cp_test_gone_webhooks_0123456789';
/** First used just before the delete, so that it is still cached after it. */
const BUSY_KEY = 'cp_test_gone_busy_0123456789abc';
const GONE = { error: { code: 'not_found', message: 'no organization "org_gone" (or it is deleted)' } };

/** One round of the worker's outbox, awaited: claim what is due, attempt it, record the outcome. */
async function workerRound(t: AdminTest) {
  const claimed = await claimDueDeliveries(t.db, 100, 20_000);
  for (const d of claimed) await deliver(t.db, d, { timeoutMs: 5_000, scheduleMs: [1, 60_000], allowPrivate: true });
  return claimed.length;
}

describe('webhooks of a soft-deleted organization', () => {
  let t: AdminTest;
  let rx: Receiver;
  let failFirst = true;
  let endpointId = '';
  let failedDeliveryId = '';

  beforeAll(async () => {
    rx = await startReceiver((path, n) => (path === '/retry' && n === 0 && failFirst ? 500 : 204));
    t = await createAdminTest({
      // The public API trusts a cached key for up to 5 s (CONTRACT.md section 10): the reported action was written then.
      env: { KEY_CACHE_TTL_MS: '5000', WEBHOOK_ALLOW_PRIVATE: 'true' },
      dataset: {
        organizations: [
          {
            id: 'org_gone',
            name: 'Gone',
            plan: 'business',
            createdAt: '2026-01-01T00:00:00.000Z',
            apiKeys: [
              { key: KEY, name: 'ci' },
              { key: BUSY_KEY, name: 'busy' },
            ],
          },
        ],
      },
    });
    endpointId = (await createEndpoint(t.db, 'org_gone', { url: `${rx.url}/live`, eventTypes: ['action.created'], allowPrivate: true, now: new Date() })).id;
    await createEndpoint(t.db, 'org_gone', { url: `${rx.url}/retry`, eventTypes: ['alert.created'], allowPrivate: true, now: new Date() });
  });
  afterAll(async () => {
    await t.close();
    await rx.close();
  });

  const postAction = (title: string, key = KEY) =>
    t.app.inject({
      method: 'POST',
      url: '/v1/actions',
      payload: { title },
      headers: { authorization: `Bearer ${key}`, 'idempotency-key': `idem-${title}`, 'content-type': 'application/json' },
    });

  it('before the delete: an action is delivered, an alert fails once and waits for its retry; a failed delivery exists', async () => {
    expect((await postAction('before-the-delete')).statusCode).toBe(200);
    await t.db.transaction((tx) => recordEvent(tx, 'org_gone', 'alert.created', { id: 'al_1' }, new Date()));
    expect(await workerRound(t)).toBe(2);
    expect(rx.on('/live')).toHaveLength(1);
    expect(rx.on('/retry')).toHaveLength(1);
    const deliveries = await listDeliveries(t.db, 'org_gone', { limit: 10 });
    expect(deliveries.map((d) => [d.type, d.status, d.attempts]).sort()).toEqual([
      ['action.created', 'succeeded', 1],
      ['alert.created', 'pending', 1],
    ]);
    // A second alert whose retry is far away (60 s), and one that failed for good (to replay).
    failFirst = false;
    await t.db.transaction((tx) => recordEvent(tx, 'org_gone', 'alert.created', { id: 'al_2' }, new Date()));
    await t.db.query({
      name: 'test.fail_one',
      text: "UPDATE webhook_deliveries SET status = 'failed', next_attempt_at = NULL, completed_at = now() WHERE org_id = 'org_gone' AND status = 'pending' AND attempts = 0",
    });
    failedDeliveryId = (await listDeliveries(t.db, 'org_gone', { status: 'failed', limit: 1 }))[0].id;
  });

  it('after the delete: an action written through a still-cached key records no event and sends nothing (an action title went out 4 s after the delete)', async () => {
    // The key is read (and cached) just before the delete, as a client busy at that moment would.
    expect((await t.app.inject({ url: '/v1/org', headers: { authorization: `Bearer ${BUSY_KEY}` } })).statusCode).toBe(200);
    expect((await t.call('DELETE', `${ORG}/org_gone`)).statusCode).toBe(200);
    const res = await postAction('after-the-delete', BUSY_KEY);
    expect(res.statusCode).toBe(200); // the cached key: the write itself is the key cache's 5 s, not this fix
    expect(await t.db.transaction((tx) => recordEvent(tx, 'org_gone', 'action.created', { id: 'act_x' }, new Date()))).toBeNull();
    const deliveries = await listDeliveries(t.db, 'org_gone', { limit: 10 });
    expect(deliveries.filter((d) => d.type === 'action.created')).toHaveLength(1);
  });

  it('after the delete: a retry already scheduled is not sent; every pending delivery is cancelled, due or not', async () => {
    await new Promise((r) => setTimeout(r, 20)); // the 1 ms retry is due
    expect(await workerRound(t)).toBe(0);
    expect(rx.on('/retry')).toHaveLength(1);
    expect(rx.on('/live')).toHaveLength(1);
    const deliveries = await listDeliveries(t.db, 'org_gone', { limit: 10 });
    expect(deliveries.filter((d) => d.status === 'pending')).toEqual([]);
    expect(deliveries.filter((d) => d.lastError === 'organization deleted').map((d) => [d.type, d.status, d.attempts])).toEqual([
      ['alert.created', 'failed', 1],
    ]);
    expect(await oldestPendingSeconds(t.db)).toBe(0);
  });

  it("the operator API's webhook operations on it answer 404 not_found, as its other operations do, and /test sends no ping", async () => {
    const calls: [string, string, unknown?][] = [
      ['GET', `${ORG}/org_gone/webhook-endpoints`],
      ['POST', `${ORG}/org_gone/webhook-endpoints`, { url: `${rx.url}/new` }],
      ['DELETE', `${ORG}/org_gone/webhook-endpoints/${endpointId}`],
      ['GET', `${ORG}/org_gone/webhook-deliveries`],
      ['GET', `/admin/v1/webhook-endpoints/${endpointId}`],
      ['POST', `/admin/v1/webhook-endpoints/${endpointId}/enable`],
      ['POST', `/admin/v1/webhook-endpoints/${endpointId}/test`],
      ['POST', `/admin/v1/webhook-endpoints/${endpointId}/disable`],
      ['POST', `/admin/v1/webhook-endpoints/${endpointId}/rotate-secret`],
      ['POST', `/admin/v1/webhook-deliveries/${failedDeliveryId}/replay`],
      ['POST', `${ORG}/org_gone/webhook-deliveries/resend-failed`, { since: '2000-01-01T00:00:00Z' }],
      ['GET', `${ORG}/org_gone/keys`], // the rest of the operator API, for comparison
    ];
    for (const [method, url, body] of calls) {
      const res = await t.call(method as 'GET', url, body);
      expect(res.statusCode, `${method} ${url}`).toBe(404);
      expect(res.json(), `${method} ${url}`).toEqual(GONE);
    }
    // Sent in one worker round, at once: in either order.
    expect(rx.received.map((r) => r.path).sort()).toEqual(['/live', '/retry']);
    const after = await listDeliveries(t.db, 'org_gone', { limit: 10 });
    expect(after.find((d) => d.id === failedDeliveryId)?.status).toBe('failed');
    expect(after.filter((d) => d.type === 'ping')).toEqual([]);
  });
});

describe('a delivery on its way when its organization is deleted (issue 43)', () => {
  let t: AdminTest;
  let rx: Receiver;
  beforeAll(async () => {
    rx = await startReceiver(() => 204);
    t = await createAdminTest({
      env: { WEBHOOK_ALLOW_PRIVATE: 'true' },
      dataset: { organizations: [{ id: 'org_gone', name: 'Gone', plan: 'business', createdAt: '2026-01-01T00:00:00.000Z' }] },
    });
    await createEndpoint(t.db, 'org_gone', { url: `${rx.url}/hook`, eventTypes: ['alert.created'], allowPrivate: true, now: new Date() });
  });
  afterAll(async () => {
    await t.close();
    await rx.close();
  });

  it('that reached the receiver after the delete cancelled it is recorded as delivered (it was recorded failed), and one that did not stays cancelled', async () => {
    await t.db.transaction((tx) => recordEvent(tx, 'org_gone', 'alert.created', { id: 'al_late' }, new Date()));
    await t.db.transaction((tx) => recordEvent(tx, 'org_gone', 'alert.created', { id: 'al_never' }, new Date()));
    const [late, never] = await claimDueDeliveries(t.db, 2, 20_000);
    expect([late, never].every(Boolean)).toBe(true);
    // The delete lands while both attempts are in flight; the worker cancels what is pending.
    expect((await t.call('DELETE', `${ORG}/org_gone`)).statusCode).toBe(200);
    expect(await cancelOrgDeliveries(t.db, 'org_gone')).toBe(2);
    // One attempt then reaches the receiver (2xx); the other's settle is a failure.
    await deliver(t.db, late, { timeoutMs: 5_000, scheduleMs: [1, 60_000], allowPrivate: true });
    expect(rx.on('/hook')).toHaveLength(1);
    const byId = new Map((await listDeliveries(t.db, 'org_gone', { limit: 10 })).map((d) => [d.id, d]));
    expect([byId.get(late.id)?.status, byId.get(late.id)?.lastStatusCode, byId.get(late.id)?.lastError]).toEqual(['succeeded', 204, null]);
    expect([byId.get(never.id)?.status, byId.get(never.id)?.lastError]).toEqual(['failed', 'organization deleted']);
  });
});
