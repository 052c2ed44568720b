import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listDeliveries } from '../../../src/db/repositories/webhooks.js';
import { createEndpoint } from '../../../src/domain/webhook-deliveries.js';
import { WebhookWorker } from '../../../src/jobs/webhooks.js';
import { createTestApp, type TestApp } from '../../helpers/app.js';
import { api } from '../../helpers/openapi.js';
import { startReceiver, waitFor, type Receiver } from '../../helpers/receiver.js';
import { KEY_A, KEY_B, NOW, writesDataset } from './fixture.js';

type Status = 'active' | 'done' | 'cancelled';
type Event = { type: string; timestamp: string; data: Record<string, unknown>; changes: Record<string, { from: unknown; to: unknown }> };

/**
 * PATCH /actions/{id} (CONTRACT section 5): every status transition and every refused one, null
 * clears, and the `action.updated` delivery each change raises (none for a change that changes nothing).
 */
describe('PATCH /actions/{id}: status transitions, null clears, action.updated', () => {
  let t: TestApp;
  let rx: Receiver;
  let worker: WebhookWorker;
  let secret: string;
  const a = () => api(t.app, KEY_A);

  beforeAll(async () => {
    t = await createTestApp({ dataset: writesDataset(), now: NOW });
    rx = await startReceiver();
    secret = (await createEndpoint(t.db, 'org_a', { url: `${rx.url}/a`, eventTypes: ['action.updated'], allowPrivate: true, now: new Date() })).secret;
    await createEndpoint(t.db, 'org_b', { url: `${rx.url}/b`, eventTypes: null, allowPrivate: true, now: new Date() });
    worker = new WebhookWorker(t.db, { pollMs: 20, timeoutMs: 2000, retryScheduleMs: [100], allowPrivate: true });
    worker.start();
  });
  afterAll(async () => {
    await worker?.close();
    await rx?.close();
    await t?.close();
  });

  const current = async (id = 'act_a1', key = KEY_A) =>
    ((await api(t.app, key).get('/v1/actions')).json().items as Record<string, unknown>[]).find((x) => x.$id === id)!;
  const events = () => rx.on('/a').map((r) => new Webhook(secret).verify(r.body, r.headers as Record<string, string>) as Event);
  /** Waits for exactly `n` deliveries in all, then a little longer to see that no more come. */
  const expectDeliveries = async (n: number) => {
    expect(await waitFor(() => rx.on('/a').length >= n, 10_000)).toBe(true);
    await new Promise((r) => setTimeout(r, 150));
    expect(rx.on('/a').length).toBe(n);
  };
  /**
   * The number of deliveries once every event written so far has been delivered: the outbox of
   * org_a holds no pending delivery and the receiver has as many as the outbox says succeeded.
   */
  const settled = async () => {
    const done = async () => {
      const all = await listDeliveries(t.db, 'org_a', { limit: 1000 });
      return all.every((d) => d.status === 'succeeded') && rx.on('/a').length === all.length;
    };
    expect(await waitFor(done, 20_000)).toBe(true);
    return rx.on('/a').length;
  };
  const patch = (body: unknown, id = 'act_a1', path = '/v1') => a().patch(`${path}/actions/${id}`, body);

  const allowed: [Status, Status][] = [
    ['active', 'done'],
    ['done', 'active'],
    ['active', 'cancelled'],
    ['cancelled', 'active'],
  ];

  it('allows every transition of the contract, each delivered as action.updated with its change', async () => {
    let delivered = 0;
    for (const [from, to] of allowed) {
      expect((await current()).status).toBe(from);
      const res = await patch({ status: to }, 'act_a1', delivered % 2 ? '/api/v1' : '/v1');
      expect(res.statusCode, `${from} -> ${to}: ${res.body}`).toBe(200);
      expect(res.json()).toEqual({ id: 'act_a1' });
      const after = await current();
      expect(after.status).toBe(to);
      await expectDeliveries(++delivered);
      const event = events()[delivered - 1];
      expect(event).toEqual({ type: 'action.updated', timestamp: NOW.toISOString(), data: after, changes: { status: { from, to } } });
    }
  });

  it('accepts the status an action already has and changes nothing (no event)', async () => {
    const before = rx.on('/a').length;
    for (const status of ['active', 'done', 'cancelled'] as const) {
      // Reach `status` by an allowed path first (active is the state between the other two).
      if ((await current()).status !== status) {
        if ((await current()).status !== 'active') expect((await patch({ status: 'active' })).statusCode).toBe(200);
        if (status !== 'active') expect((await patch({ status })).statusCode).toBe(200);
      }
      const seen = await settled();
      const was = await current();
      const res = await patch({ status });
      expect(res.statusCode).toBe(200);
      expect(res.json()).toEqual({ id: 'act_a1' });
      expect(await current()).toEqual(was);
      await expectDeliveries(seen);
    }
    expect(rx.on('/a').length).toBeGreaterThan(before);
  });

  it.each([
    ['done', 'cancelled'],
    ['cancelled', 'done'],
  ] as [Status, Status][])('refuses %s -> %s with 409 invalid_transition, changes nothing, delivers nothing', async (from, to) => {
    if ((await current()).status !== 'active') await patch({ status: 'active' });
    await patch({ status: from });
    const seen = await settled();
    const was = await current();
    expect(was.status).toBe(from);
    for (const path of ['/v1', '/api/v1']) {
      // Other fields of the refused request are not applied either.
      const res = await patch({ status: to, title: 'Not applied' }, 'act_a1', path);
      expect(res.statusCode).toBe(409);
      expect(res.json()).toEqual({
        error: { code: 'invalid_transition', message: `An action that is ${from} cannot become ${to} directly; set its status to active first.` },
      });
    }
    expect(await current()).toEqual(was);
    await expectDeliveries(seen);
  });

  it('refuses an unknown status and a null status with 400 invalid_request', async () => {
    const seen = await settled();
    for (const status of ['archived', 'DONE', null, 1]) {
      const res = await patch({ status });
      expect(res.statusCode, JSON.stringify(status)).toBe(400);
      expect(res.json().error.code).toBe('invalid_request');
      expect(res.json().error.message).toMatch(/status/);
    }
    await expectDeliveries(seen);
  });

  it("the status of another organization's action is 404 not_found, unchanged and unheard of", async () => {
    const res = await patch({ status: 'active' }, 'act_b1');
    expect(res.statusCode).toBe(404);
    expect(res.json().error.code).toBe('not_found');
    expect((await current('act_b1', KEY_B)).status).toBe('done');
    await new Promise((r) => setTimeout(r, 150));
    expect(rx.on('/b')).toHaveLength(0);
  });

  it('null clears description, endDate and subteamId; the event carries each change', async () => {
    const seen = await settled();
    const set = await patch({ description: 'Every second Friday', endDate: '2026-12-31T17:00:00+01:00', subteamId: 'team_web' });
    expect(set.statusCode).toBe(200);
    const withAll = await current();
    expect(withAll).toMatchObject({ description: 'Every second Friday', endDate: '2026-12-31T16:00:00.000Z', subteamId: 'team_web', subteamName: 'Web' });
    await expectDeliveries(seen + 1);

    const cleared = await patch({ description: null, endDate: null, subteamId: null });
    expect(cleared.statusCode).toBe(200);
    const after = await current();
    expect(after).toEqual({ ...withAll, description: null, endDate: null, subteamId: null, subteamName: null });
    await expectDeliveries(seen + 2);
    expect(events()[seen + 1]).toEqual({
      type: 'action.updated',
      timestamp: NOW.toISOString(),
      data: after,
      changes: {
        description: { from: 'Every second Friday', to: null },
        endDate: { from: '2026-12-31T16:00:00.000Z', to: null },
        subteamId: { from: 'team_web', to: null },
        subteamName: { from: 'Web', to: null },
      },
    });

    // Clearing what is already clear changes nothing and raises nothing.
    expect((await patch({ description: null, endDate: null, subteamId: null })).statusCode).toBe(200);
    expect(await current()).toEqual(after);
    await expectDeliveries(seen + 2);
    // An empty string is a description, not a clear.
    expect((await patch({ description: '' })).statusCode).toBe(200);
    expect((await current()).description).toBe('');
    await expectDeliveries(seen + 3);
  });

  it('checks the rest of the body before the transition: 400 wins over 409', async () => {
    if ((await current()).status !== 'active') await patch({ status: 'active' });
    await patch({ status: 'done' });
    const res = await patch({ status: 'cancelled', endDate: '2026-10-01T00:00:00Z' });
    expect(res.statusCode).toBe(400);
    expect(res.json().error.code).toBe('invalid_request');
    const unknownTeam = await patch({ status: 'cancelled', subteamId: 'team_b' });
    expect(unknownTeam.statusCode).toBe(400);
    expect((await current()).status).toBe('done');
  });
});
