import { writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { claimDueDeliveries, listDeliveries } from '../../src/db/repositories/webhooks.js';
import { listAuditEvents, type Actor } from '../../src/domain/audit.js';
import { rotateOrgEndpointSecret } from '../../src/domain/webhook-endpoints.js';
import { deliver, recordEvent, SECRET_OVERLAP_MS, signingSecrets } from '../../src/domain/webhook-deliveries.js';
import { sinceTime } from '../../src/cli/commands/webhooks.js';
import { createAdminTest, type AdminTest } from '../admin/helpers.js';
import { createCliDatabase, openApp, runCliInProcess } from '../helpers/cli.js';
import { expectDocumentedEvent } from '../helpers/openapi.js';
import { startReceiver, type Receiver, type Received } from '../helpers/receiver.js';

/**
 * Rotating an endpoint's signing secret (issue 28): for 24 hours every delivery carries a
 * signature under the old secret and one under the new, so a receiver verifies with either (the
 * Standard Webhooks library a receiver would use); after that only the new one. Resending every
 * failed delivery since a time sends exactly those. Every change has its audit row and actor.
 */
const ORG = '/admin/v1/organizations';
const KEY = 'cp_test_rotation_0123456789abcdef';
const MEMBER: Actor = { kind: 'member', memberId: 'mem_x', email: 'admin@rotation.example.com', address: '192.0.2.7' };

/** One round of the outbox, awaited: claim what is due, attempt it, record the outcome (no retries). */
async function workerRound(t: AdminTest) {
  const claimed = await claimDueDeliveries(t.db, 100, 20_000);
  for (const d of claimed) await deliver(t.db, d, { timeoutMs: 5_000, scheduleMs: [], allowPrivate: true });
  return claimed.length;
}

const verifies = (secret: string, r: Received) => {
  try {
    new Webhook(secret).verify(r.body, r.headers as Record<string, string>);
    return true;
  } catch {
    return false;
  }
};

describe('webhook secret rotation', () => {
  let t: AdminTest;
  let rx: Receiver;
  const failing = new Set<string>();

  beforeAll(async () => {
    rx = await startReceiver((path) => (failing.has(path) ? 500 : 204));
    t = await createAdminTest({
      env: { WEBHOOK_ALLOW_PRIVATE: 'true', WEBHOOK_TIMEOUT_MS: '5000' },
      dataset: {
        organizations: [
          { id: 'org_rot', name: 'Rotation', plan: 'business', createdAt: '2026-01-01T00:00:00.000Z', apiKeys: [{ key: KEY, name: 'ci' }] },
          { id: 'org_other', name: 'Other', plan: 'business', createdAt: '2026-01-01T00:00:00.000Z' },
        ],
      },
    });
  });
  afterAll(async () => {
    await t.close();
    await rx.close();
  });

  const add = async (path: string, eventTypes?: string[]) => {
    const res = await t.call('POST', `${ORG}/org_rot/webhook-endpoints`, { url: `${rx.url}${path}`, ...(eventTypes ? { eventTypes } : {}) });
    expect(res.statusCode).toBe(201);
    return res.json() as { id: string; secret: string };
  };
  const ping = async (id: string) => {
    const res = await t.call('POST', `/admin/v1/webhook-endpoints/${id}/test`);
    expect(res.json()).toMatchObject({ outcome: 'succeeded', result: 'HTTP 204' });
    return res.json() as { eventId: string };
  };

  it('the signer adds the previous secret until its expiry, not at it', () => {
    const at = new Date('2026-11-20T12:00:00.000Z');
    const e = { secret: 'whsec_new', previousSecret: 'whsec_old', previousSecretExpiresAt: new Date(at.getTime() + SECRET_OVERLAP_MS) };
    expect(SECRET_OVERLAP_MS).toBe(24 * 3600e3);
    expect(signingSecrets(e, at)).toEqual(['whsec_new', 'whsec_old']);
    expect(signingSecrets(e, new Date(e.previousSecretExpiresAt.getTime() - 1))).toEqual(['whsec_new', 'whsec_old']);
    expect(signingSecrets(e, e.previousSecretExpiresAt)).toEqual(['whsec_new']);
    expect(signingSecrets({ secret: 'whsec_new', previousSecret: null, previousSecretExpiresAt: null }, at)).toEqual(['whsec_new']);
  });

  it('during the overlap every delivery verifies with the old secret and with the new one; the answer shows the new secret once', async () => {
    const e = await add('/overlap', ['action.created']);
    const before = Date.now();
    const rotated = await t.call('POST', `/admin/v1/webhook-endpoints/${e.id}/rotate-secret`);
    expect(rotated.statusCode).toBe(200);
    const r = rotated.json();
    expect(r).toMatchObject({ id: e.id, orgId: 'org_rot', enabled: true, secret: expect.stringMatching(/^whsec_[A-Za-z0-9+/]{43}=$/) });
    expect(r.secret).not.toBe(e.secret);
    const until = Date.parse(r.previousSecretExpiresAt);
    expect(until).toBeGreaterThanOrEqual(before + SECRET_OVERLAP_MS);
    expect(until).toBeLessThanOrEqual(Date.now() + SECRET_OVERLAP_MS);
    // Listed with its overlap, never with a secret.
    const listed = (await t.call('GET', `${ORG}/org_rot/webhook-endpoints`)).json().items;
    expect(listed.find((x: { id: string }) => x.id === e.id)).toEqual({
      id: e.id,
      orgId: 'org_rot',
      url: `${rx.url}/overlap`,
      eventTypes: ['action.created'],
      enabled: true,
      disabledReason: null,
      createdAt: expect.stringMatching(/Z$/),
      previousSecretExpiresAt: r.previousSecretExpiresAt,
    });
    expect(JSON.stringify(listed)).not.toContain(r.secret);
    expect(JSON.stringify(listed)).not.toContain(e.secret);

    // The test event, sent at once...
    const { eventId } = await ping(e.id);
    const [pinged] = rx.on('/overlap');
    expect(pinged.headers['webhook-id']).toBe(eventId);
    expect(String(pinged.headers['webhook-signature'])).toMatch(/^v1,[A-Za-z0-9+/]{43}= v1,[A-Za-z0-9+/]{43}=$/);
    expect(verifies(e.secret, pinged)).toBe(true);
    expect(verifies(r.secret, pinged)).toBe(true);
    expect(new Webhook(r.secret).verify(pinged.body, pinged.headers as Record<string, string>)).toEqual({
      type: 'ping',
      timestamp: expect.stringMatching(/Z$/),
      data: { endpointId: e.id },
    });
    await expectDocumentedEvent(t.app, pinged.body);

    // ...and an event of the outbox, sent by the worker: an action created through the public API.
    const created = await t.app.inject({
      method: 'POST',
      url: '/v1/actions',
      payload: { title: 'Rotate safely' },
      headers: { authorization: `Bearer ${KEY}`, 'idempotency-key': 'rotation-action-1', 'content-type': 'application/json' },
    });
    expect(created.statusCode).toBe(200);
    expect(await workerRound(t)).toBe(1);
    const [, action] = rx.on('/overlap');
    expect(verifies(e.secret, action)).toBe(true);
    expect(new Webhook(r.secret).verify(action.body, action.headers as Record<string, string>)).toMatchObject({
      type: 'action.created',
      data: { title: 'Rotate safely' },
    });
    // A secret that is neither fails, as it should.
    expect(verifies(`whsec_${Buffer.alloc(32, 7).toString('base64')}`, action)).toBe(false);
  });

  it('after 24 hours only the new secret signs: the old one no longer verifies', async () => {
    const e = await add('/after', ['action.created']);
    // Rotated 24 hours and a second ago: the overlap is over.
    const rotated = await rotateOrgEndpointSecret(t.db, 'org_rot', e.id, MEMBER, new Date(Date.now() - SECRET_OVERLAP_MS - 1000));
    await ping(e.id);
    const [r] = rx.on('/after');
    expect(String(r.headers['webhook-signature'])).toMatch(/^v1,[A-Za-z0-9+/]{43}=$/);
    expect(verifies(rotated.secret, r)).toBe(true);
    expect(verifies(e.secret, r)).toBe(false);
  });

  it('a second rotation keeps the secret it replaces for 24 hours and ends the one before it', async () => {
    const e = await add('/twice', ['action.created']);
    const second = (await t.call('POST', `/admin/v1/webhook-endpoints/${e.id}/rotate-secret`)).json().secret as string;
    const third = (await t.call('POST', `/admin/v1/webhook-endpoints/${e.id}/rotate-secret`)).json().secret as string;
    await ping(e.id);
    const [r] = rx.on('/twice');
    expect([verifies(e.secret, r), verifies(second, r), verifies(third, r)]).toEqual([false, true, true]);
  });

  it("another organization's endpoint is not found, and nothing changes", async () => {
    const e = await add('/mine', ['action.created']);
    await expect(rotateOrgEndpointSecret(t.db, 'org_other', e.id, MEMBER, new Date())).rejects.toMatchObject({ code: 'not_found' });
    await ping(e.id);
    expect(verifies(e.secret, rx.on('/mine')[0])).toBe(true);
    expect(String(rx.on('/mine')[0].headers['webhook-signature'])).not.toContain(' ');
  });

  it('resend-failed since a time sends exactly the failed deliveries written since then, of enabled endpoints; disabled ones are counted, not sent', async () => {
    const one = await add('/one', ['alert.created']);
    const two = await add('/two', ['alert.created']);
    failing.add('/one').add('/two');
    const event = (id: string) => t.db.transaction((tx) => recordEvent(tx, 'org_rot', 'alert.created', { id }, new Date()));
    const a = (await event('al_a'))!;
    await new Promise((r) => setTimeout(r, 30));
    const b = (await event('al_b'))!;
    const c = (await event('al_c'))!;
    expect(await workerRound(t)).toBe(6);
    const failed = (await listDeliveries(t.db, 'org_rot', { status: 'failed', limit: 100 })).filter((d) => d.type === 'alert.created');
    expect(failed).toHaveLength(6);
    // "Since" the time the delivery log shows for b's deliveries: b and c, not a.
    const since = failed
      .filter((d) => d.eventId === b)
      .map((d) => d.createdAt)
      .sort()[0];
    expect(failed.filter((d) => d.eventId === a).every((d) => d.createdAt < since)).toBe(true);

    const disabled = await t.call('POST', `/admin/v1/webhook-endpoints/${two.id}/disable`);
    expect(disabled.json()).toMatchObject({ id: two.id, enabled: false, disabledReason: 'disabled by the operator' });
    failing.clear();
    const before = rx.received.length;
    const resent = await t.call('POST', `${ORG}/org_rot/webhook-deliveries/resend-failed`, { since });
    expect(resent.statusCode).toBe(200);
    expect(resent.json()).toEqual({ since, resent: 2, skipped: 2 });
    expect(await workerRound(t)).toBe(2);
    const sent = rx.received.slice(before);
    expect(sent.map((r) => [r.path, r.headers['webhook-id']]).sort()).toEqual(
      [
        ['/one', b],
        ['/one', c],
      ].sort(),
    );
    for (const r of sent) expect(verifies(one.secret, r)).toBe(true);
    const now = await listDeliveries(t.db, 'org_rot', { limit: 100 });
    const statusOf = (eventId: string, endpointId: string) => now.find((d) => d.eventId === eventId && d.endpointId === endpointId)!.status;
    expect([a, b, c].map((id) => [statusOf(id, one.id), statusOf(id, two.id)])).toEqual([
      ['failed', 'failed'],
      ['succeeded', 'failed'],
      ['succeeded', 'failed'],
    ]);
    // Nothing failed since then: a second resend sends nothing; a time in the future neither.
    expect((await t.call('POST', `${ORG}/org_rot/webhook-deliveries/resend-failed`, { since })).json()).toEqual({ since, resent: 0, skipped: 2 });
    expect((await t.call('POST', `${ORG}/org_rot/webhook-deliveries/resend-failed`, { since: '2999-01-01T00:00:00+01:00' })).json()).toEqual({
      since: '2998-12-31T23:00:00.000Z',
      resent: 0,
      skipped: 0,
    });
    expect((await t.call('POST', `${ORG}/org_rot/webhook-deliveries/resend-failed`, { since: 'yesterday' })).statusCode).toBe(400);

    // Enabled again, the disabled endpoint's failures are resent too.
    expect((await t.call('POST', `/admin/v1/webhook-endpoints/${two.id}/enable`)).json()).toMatchObject({ enabled: true, disabledReason: null });
    expect((await t.call('POST', `${ORG}/org_rot/webhook-deliveries/resend-failed`, { since })).json()).toEqual({ since, resent: 2, skipped: 0 });
    expect(await workerRound(t)).toBe(2);
    expect(
      rx
        .on('/two')
        .filter((r) => r.status === 204)
        .map((r) => r.headers['webhook-id'])
        .sort(),
    ).toEqual([b, c].sort());
  });

  it('disabling an endpoint fails its pending deliveries and writes no new ones; a disabled endpoint refuses a replay', async () => {
    const e = await add('/paused', ['alert.created']);
    const id = await t.db.transaction((tx) => recordEvent(tx, 'org_rot', 'alert.created', { id: 'al_paused' }, new Date()));
    expect((await t.call('POST', `/admin/v1/webhook-endpoints/${e.id}/disable`)).statusCode).toBe(200);
    const d = (await listDeliveries(t.db, 'org_rot', { limit: 100 })).find((x) => x.eventId === id && x.endpointId === e.id)!;
    expect(d).toMatchObject({ status: 'failed', lastError: 'endpoint disabled: disabled by the operator' });
    const after = await t.db.transaction((tx) => recordEvent(tx, 'org_rot', 'alert.created', { id: 'al_later' }, new Date()));
    expect((await listDeliveries(t.db, 'org_rot', { limit: 100 })).filter((x) => x.eventId === after && x.endpointId === e.id)).toEqual([]);
    const replay = await t.call('POST', `/admin/v1/webhook-deliveries/${d.id}/replay`);
    expect(replay.json()).toEqual({ error: { code: 'invalid_request', message: `endpoint ${e.id} is disabled (disabled by the operator); enable it first` } });
    // Disabling again changes nothing, and says so in its audit row.
    expect((await t.call('POST', `/admin/v1/webhook-endpoints/${e.id}/disable`)).json()).toMatchObject({
      enabled: false,
      disabledReason: 'disabled by the operator',
    });
  });

  it('every change is in the audit log with its actor and address, and no secret is', async () => {
    const { items } = await listAuditEvents(t.db, 'org_rot', { limit: 100 });
    const seen = items.map((e) => `${e.action} ${e.actor.label} ${e.address ?? '-'}`).reverse();
    const op = 'operator 127.0.0.1';
    const count = (line: string) => seen.filter((s) => s === line).length;
    expect(count(`webhook_endpoint.created ${op}`)).toBe(7);
    expect(count(`webhook_endpoint.secret_rotated ${op}`)).toBe(3);
    expect(count('webhook_endpoint.secret_rotated admin@rotation.example.com 192.0.2.7')).toBe(1);
    expect(count(`webhook_endpoint.tested ${op}`)).toBe(4);
    expect(count(`webhook_endpoint.disabled ${op}`)).toBe(3);
    expect(count(`webhook_endpoint.enabled ${op}`)).toBe(1);
    expect(count(`webhook_deliveries.resent ${op}`)).toBe(4); // the refused one (400) wrote nothing
    const resent = items.filter((e) => e.action === 'webhook_deliveries.resent').reverse();
    expect(resent.map((e) => [e.target, e.details.resent, e.details.skipped])).toEqual([
      [{ kind: 'webhook_deliveries', id: null }, 2, 2],
      [{ kind: 'webhook_deliveries', id: null }, 0, 2],
      [{ kind: 'webhook_deliveries', id: null }, 0, 0],
      [{ kind: 'webhook_deliveries', id: null }, 2, 0],
    ]);
    const rotation = items.find((e) => e.action === 'webhook_endpoint.secret_rotated')!;
    expect(rotation.details).toEqual({ host: new URL(rx.url).host, oldValidUntil: expect.stringMatching(/Z$/) });
    expect(items.filter((e) => e.action === 'webhook_endpoint.disabled').map((e) => e.details.wasEnabled)).toEqual([false, true, true]);
    const rows = await t.db.query<{ secret: string; previous_secret: string | null }>(
      { name: 't.secrets', text: 'SELECT secret, previous_secret FROM webhook_endpoints' } as never,
      [],
    );
    const secrets = rows.flatMap((r) => [r.secret, r.previous_secret]).filter((x): x is string => x !== null);
    expect(secrets.length).toBeGreaterThan(7);
    for (const secret of secrets) expect(JSON.stringify(items)).not.toContain(secret);
  });
});

describe('climate-pulse webhooks rotate-secret|disable|resend-failed', { timeout: 300_000 }, () => {
  let cdb: Awaited<ReturnType<typeof createCliDatabase>>;
  let rx: Receiver;
  beforeAll(async () => {
    rx = await startReceiver();
    cdb = await createCliDatabase();
    const file = join(tmpdir(), `rotation-ds-${process.pid}.json`);
    writeFileSync(file, JSON.stringify({ organizations: [{ id: 'org_cli', name: 'CLI', plan: 'business', createdAt: '2026-01-01T00:00:00.000Z' }] }));
    expect((await runCliInProcess(['load', file], { ...cdb.env })).code).toBe(0);
  });
  afterAll(async () => {
    await cdb.close();
    await rx.close();
  });

  it('--since takes a time as written, or a duration back from now', () => {
    const now = new Date('2026-11-20T12:00:00.000Z');
    expect(sinceTime('2026-11-19T09:00:00Z', now)).toBe('2026-11-19T09:00:00Z');
    expect(sinceTime('30m', now)).toBe('2026-11-20T11:30:00.000Z');
    expect(sinceTime(' 6h ', now)).toBe('2026-11-20T06:00:00.000Z');
    expect(sinceTime('2d', now)).toBe('2026-11-18T12:00:00.000Z');
  });

  it('rotates a secret (printed once), disables an endpoint and resends failed deliveries, through the same operations', async () => {
    const env = { ...cdb.env, WEBHOOK_ALLOW_PRIVATE: 'true' };
    const added = await runCliInProcess(['webhooks', 'add', '--org', 'org_cli', '--url', `${rx.url}/cli`, '--json'], env);
    expect(added.code).toBe(0);
    const e = JSON.parse(added.stdout) as { id: string; secret: string };

    const rotated = await runCliInProcess(['webhooks', 'rotate-secret', e.id], env);
    expect(rotated.code).toBe(0);
    const secret = rotated.stdout.trim();
    expect(secret).toMatch(/^whsec_/);
    expect(secret).not.toBe(e.secret);
    expect(rotated.stderr).toMatch(
      new RegExp(
        `^new secret for ${e.id} \\(${rx.url}/cli\\)\\. The secret is shown only now: store it safely\\. Until \\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\d\\.\\d{3}Z every delivery is signed with the old and the new secret; after that with the new one only\\.\\n$`,
      ),
    );
    const json = JSON.parse((await runCliInProcess(['webhooks', 'rotate-secret', e.id, '--json'], env)).stdout);
    expect(json).toEqual({ id: e.id, url: `${rx.url}/cli`, secret: expect.stringMatching(/^whsec_/), previousSecretExpiresAt: expect.stringMatching(/Z$/) });

    // A ping while the server is stopped is sent by the CLI itself: both signatures.
    expect((await runCliInProcess(['webhooks', 'test', e.id], env)).code).toBe(0);
    const [r] = rx.on('/cli');
    expect([verifies(e.secret, r), verifies(secret, r), verifies(json.secret, r)]).toEqual([false, true, true]);

    const disabled = await runCliInProcess(['webhooks', 'disable', e.id], env);
    expect(disabled.stdout).toBe(`disabled ${e.id} (${rx.url}/cli) of org_cli: disabled by the operator\n`);
    const resend = await runCliInProcess(['webhooks', 'resend-failed', '--org', 'org_cli', '--since', '1h'], env);
    expect(resend.stdout).toMatch(/^resending 0 failed deliveries of org_cli since \d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z\n$/);
    expect((await runCliInProcess(['webhooks', 'resend-failed', '--org', 'org_cli', '--since', 'soon'], env)).stderr).toBe(
      "climate-pulse: Body field 'since' must be an RFC 3339 date-time with an offset or Z, like 2026-11-20T08:15:00Z, from 0001-01-01T00:00:00.000Z to 9999-12-31T23:59:59.999Z.\n",
    );

    const s = await openApp(env);
    const { items } = await listAuditEvents(s.db, 'org_cli', { limit: 20 });
    await s.close();
    expect(items.map((x) => `${x.action} ${x.actor.label}`).reverse()).toEqual([
      'webhook_endpoint.created operator',
      'webhook_endpoint.secret_rotated operator',
      'webhook_endpoint.secret_rotated operator',
      'webhook_endpoint.tested operator',
      'webhook_endpoint.disabled operator',
      'webhook_deliveries.resent operator',
    ]);
  });
});
