import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listDeliveries } from '../../src/db/repositories/webhooks.js';
import { loadDataset } from '../../src/domain/dataset.js';
import { createEndpoint, recordEvent } from '../../src/domain/webhook-deliveries.js';
import { WebhookWorker } from '../../src/jobs/webhooks.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { startReceiver, waitFor, type Receiver } from '../helpers/receiver.js';

describe('webhook worker', () => {
  let t: TestDatabase;
  let rx: Receiver;
  let hang = true;
  beforeAll(async () => {
    t = await createTestDatabase();
    await loadDataset(t.db, { organizations: [{ id: 'org_w', name: 'W', plan: 'business', createdAt: '2026-01-01T00:00:00.000Z' }] });
    rx = await startReceiver(() => (hang ? 'hang' : 204));
  });
  afterAll(async () => {
    await rx.close();
    await t.close();
  });

  it('at close abandons the attempt in flight, which is due again at once for the next worker', async () => {
    const { secret } = await createEndpoint(t.db, 'org_w', { url: `${rx.url}/w`, eventTypes: ['action.created'], allowPrivate: true, now: new Date() });
    // Not subscribed: nothing is written.
    expect(await t.db.transaction((tx) => recordEvent(tx, 'org_w', 'alert.created', { id: 'al_1' }, new Date()))).toBeNull();
    const eventId = await t.db.transaction((tx) => recordEvent(tx, 'org_w', 'action.created', { $id: 'act_1' }, new Date('2026-11-23T10:00:00.000Z')));
    expect(eventId).toMatch(/^msg_[0-9A-Za-z]{16}$/);

    const first = new WebhookWorker(t.db, { pollMs: 20, timeoutMs: 10_000, retryScheduleMs: [60_000], allowPrivate: true });
    first.start();
    expect(await waitFor(() => rx.received.length === 1)).toBe(true);
    const closedAt = Date.now();
    await first.close();
    expect(Date.now() - closedAt).toBeLessThan(5000); // it does not wait for the 10 s timeout (half of it is room for a busy machine)
    const [d] = await listDeliveries(t.db, 'org_w', { limit: 5 });
    expect(d).toMatchObject({ status: 'pending', attempts: 1, lastStatusCode: null, lastError: 'abandoned at shutdown' });
    expect(Date.parse(d.nextAttemptAt!)).toBeLessThanOrEqual(Date.now());

    hang = false;
    const second = new WebhookWorker(t.db, { pollMs: 20, timeoutMs: 10_000, retryScheduleMs: [60_000], allowPrivate: true });
    second.start();
    expect(await waitFor(() => rx.received.length === 2)).toBe(true);
    expect(await waitFor(async () => (await listDeliveries(t.db, 'org_w', { limit: 5 }))[0].status === 'succeeded')).toBe(true);
    await second.close();
    const [again] = rx.received.slice(1);
    expect(again.headers['webhook-id']).toBe(eventId);
    expect(new Webhook(secret).verify(again.body, again.headers as Record<string, string>)).toEqual({
      type: 'action.created',
      timestamp: '2026-11-23T10:00:00.000Z',
      data: { $id: 'act_1' },
    });
    expect((await listDeliveries(t.db, 'org_w', { limit: 5 }))[0]).toMatchObject({ attempts: 2, lastStatusCode: 204, lastError: null });
  });
});
