import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listAuditEvents } from '../../src/domain/audit.js';
import { listOrgDeliveries, listOrgEndpoints } from '../../src/domain/webhook-endpoints.js';
import { recordEvent } from '../../src/domain/webhook-deliveries.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { ConsoleClient } from '../helpers/console-client.js';
import { startReceiver, type Receiver } from '../helpers/receiver.js';

/**
 * The console's webhooks page over HTTP (CONTRACT.md section 11): the role guard on the server
 * for every change (a viewer's post is 403 and changes nothing), the cross-site guard, another
 * organization's ids not found, hostile text escaped, and each change audited as the member.
 */
const HOSTILE = `<script>alert(1)</script>"><img src=x onerror=alert(2)>`;
const PAGE = '/console/webhooks';

let t: TestApp;
let rx: Receiver;
let admin: ConsoleClient;
let viewer: ConsoleClient;
let stranger: ConsoleClient;
let endpointId = '';
let failedId = '';

const secretOf = (body: string) => /aria-label="New webhook secret">(whsec_[^<]+)</.exec(body)?.[1];

beforeAll(async () => {
  rx = await startReceiver((path) => (path.startsWith('/fail') ? 500 : 204));
  t = await createTestApp({
    env: { WEBHOOK_ALLOW_PRIVATE: 'true', WEBHOOK_TIMEOUT_MS: '2000' },
    dataset: {
      organizations: [
        { id: 'org_wh', name: HOSTILE, plan: 'business', createdAt: '2026-01-01T00:00:00.000Z' },
        { id: 'org_else', name: 'Else', plan: 'business', createdAt: '2026-01-01T00:00:00.000Z' },
      ],
    },
  });
  admin = await ConsoleClient.join(t.app, t.db, 'org_wh', 'admin@wh.example.com', 'admin');
  viewer = await ConsoleClient.join(t.app, t.db, 'org_wh', 'viewer@wh.example.com', 'viewer');
  stranger = await ConsoleClient.join(t.app, t.db, 'org_else', 'admin@else.example.com', 'admin');
});
afterAll(async () => {
  await t?.close();
  await rx?.close();
});

describe('the webhooks page over HTTP', () => {
  it('an admin adds an endpoint: its secret is shown once, in the element named New webhook secret, and never again', async () => {
    const res = await admin.submit(PAGE, PAGE, { url: `${rx.url}/hook/${HOSTILE}`, 'event:action.created': 'on', 'event:alert.created': 'on' });
    expect(res.statusCode).toBe(200);
    const secret = secretOf(res.body);
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    const [e] = await listOrgEndpoints(t.db, 'org_wh');
    endpointId = e.id;
    expect(e.eventTypes).toEqual(['alert.created', 'action.created']);
    // The URL parser percent-encodes the path; whatever is left is text on the page, never markup.
    expect(e.url).toBe(`${rx.url}/hook/%3Cscript%3Ealert(1)%3C/script%3E%22%3E%3Cimg%20src=x%20onerror=alert(2)%3E`);
    const page = await admin.get(PAGE);
    expect(page.statusCode).toBe(200);
    expect(page.body).not.toContain(secret);
    expect(page.body).toContain(`<code>${e.url}</code>`);
    expect(page.body).toContain('&lt;script&gt;alert(1)&lt;/script&gt;&quot;&gt;&lt;img src=x onerror=alert(2)&gt;'); // the organization's name
    expect(page.body).not.toMatch(/<script>alert|<img src=x/);
    expect(page.body).not.toMatch(/<style|<[^>]*\s(style|on[a-z]+)=/i); // no inline style or handler in any tag
    expect(page.headers['content-security-policy']).toMatch(/^default-src 'self'; script-src 'self';/);
  });

  it('every member reads the page; a viewer sees no control, and every change a viewer posts is refused with 403 and changes nothing', async () => {
    await t.db.transaction((tx) => recordEvent(tx, 'org_wh', 'alert.created', { id: 'al_viewer' }, new Date()));
    const [d] = await listOrgDeliveries(t.db, 'org_wh', {});
    const page = await viewer.get(PAGE);
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain('alert.created');
    expect(page.body).not.toMatch(/<form method="post" action="\/console\/webhooks/);
    expect(page.body).toContain('Viewers can see endpoints and deliveries but not change them.');
    const token = ConsoleClient.token(page.body); // the sign-out form's: a valid token of the viewer's session
    const posts: [string, Record<string, string>][] = [
      [PAGE, { url: `${rx.url}/sneaky` }],
      [`${PAGE}/${endpointId}/test`, {}],
      [`${PAGE}/${endpointId}/rotate`, {}],
      [`${PAGE}/${endpointId}/disable`, {}],
      [`${PAGE}/${endpointId}/enable`, {}],
      [`${PAGE}/${endpointId}/remove`, {}],
      [`${PAGE}/deliveries/${d.id}/replay`, {}],
      [`${PAGE}/resend-failed`, { since: '2000-01-01T00:00' }],
    ];
    for (const [url, form] of posts) {
      const res = await viewer.post(url, { _csrf: token, ...form });
      expect(res.statusCode, url).toBe(403);
      expect(res.body, url).toContain('Your role (viewer) cannot do this; ask an owner.');
    }
    const [e] = await listOrgEndpoints(t.db, 'org_wh');
    expect(e).toMatchObject({ id: endpointId, enabled: true, previousSecretExpiresAt: null });
    expect(rx.received).toEqual([]);
    const { items } = await listAuditEvents(t.db, 'org_wh', { limit: 100 });
    expect(items.filter((x) => x.actor.label === 'viewer@wh.example.com').map((x) => x.action)).toEqual(['member.joined']);
  });

  it('a change from another site, or without the form token, is refused with 403 and changes nothing', async () => {
    const token = ConsoleClient.token((await admin.get(PAGE)).body);
    const rotate = `${PAGE}/${endpointId}/rotate`;
    expect((await admin.post(rotate, { _csrf: token }, { 'sec-fetch-site': 'cross-site', origin: 'https://evil.example' })).statusCode).toBe(403);
    expect((await admin.post(rotate, { _csrf: token }, { 'sec-fetch-site': '', origin: 'https://evil.example' })).statusCode).toBe(403);
    expect((await admin.post(rotate, {})).statusCode).toBe(403);
    expect((await admin.post(`${PAGE}/${endpointId}/remove`, { _csrf: 'x'.repeat(32) })).statusCode).toBe(403);
    expect((await listOrgEndpoints(t.db, 'org_wh'))[0]).toMatchObject({ id: endpointId, previousSecretExpiresAt: null });
  });

  it("another organization's admin cannot name this organization's endpoint or delivery: not found, nothing changes", async () => {
    const [d] = await listOrgDeliveries(t.db, 'org_wh', {});
    for (const url of [
      `${PAGE}/${endpointId}/rotate`,
      `${PAGE}/${endpointId}/disable`,
      `${PAGE}/${endpointId}/remove`,
      `${PAGE}/${endpointId}/test`,
      `${PAGE}/deliveries/${d.id}/replay`,
    ]) {
      const res = await stranger.submit(PAGE, url, {});
      expect(res.statusCode, url).toBe(404);
      expect(res.body, url).toMatch(/No webhook (endpoint|delivery) <code>wh[ed]_/);
    }
    expect((await listOrgEndpoints(t.db, 'org_wh'))[0]).toMatchObject({ enabled: true, previousSecretExpiresAt: null });
    expect(rx.received).toEqual([]);
  });

  it('an admin rotates the secret (both signatures for 24 hours), tests, disables, enables, replays, resends failed ones and removes, each audited as the member', async () => {
    const first = (await listOrgEndpoints(t.db, 'org_wh'))[0];
    const rotated = await admin.submit(PAGE, `${PAGE}/${endpointId}/rotate`, {});
    expect(rotated.statusCode).toBe(200);
    const secret = secretOf(rotated.body)!;
    expect(secret).toMatch(/^whsec_/);
    expect(rotated.body).toMatch(/The old secret stays valid until \d{1,2} [A-Z][a-z]{2} \d{4}, \d\d:\d\d UTC/);
    expect(rotated.body).toContain('old secret valid until');

    const tested = await admin.submit(PAGE, `${PAGE}/${endpointId}/test`, {});
    expect(tested.body).toMatch(/Test event <code>msg_\w+<\/code> delivered to .*: HTTP 204\./);
    const [ping] = rx.received;
    expect(new Webhook(secret).verify(ping.body, ping.headers as Record<string, string>)).toMatchObject({ type: 'ping', data: { endpointId } });
    expect(String(ping.headers['webhook-signature']).split(' ')).toHaveLength(2);
    expect(first.url).toContain('/hook/');

    expect((await admin.submit(PAGE, `${PAGE}/${endpointId}/disable`, {})).body).toContain('disabled: it receives nothing until enabled');
    const page = await admin.get(PAGE);
    expect(page.body).toContain('disabled (disabled by admin@wh.example.com)');
    // A viewer reads who disabled it as "a member", never their email (issue 52, L3).
    const seen = await viewer.get(PAGE);
    expect(seen.body).toContain('disabled (disabled by a member)');
    expect(seen.body).not.toContain('admin@wh.example.com');
    // The pending delivery of the viewer test failed with the endpoint; a disabled endpoint refuses its replay.
    const [failed] = await listOrgDeliveries(t.db, 'org_wh', { failed: true });
    failedId = failed.id;
    const refused = await admin.submit(PAGE, `${PAGE}/deliveries/${failedId}/replay`, {});
    expect(refused.statusCode).toBe(400);
    expect(refused.body).toContain(`Endpoint <code>${endpointId}</code> is disabled (disabled by admin@wh.example.com); enable it first.`);
    expect((await admin.submit(PAGE, `${PAGE}/${endpointId}/enable`, {})).body).toContain('enabled: new events are sent to it');
    const replayed = await admin.submit(PAGE, `${PAGE}/deliveries/${failedId}/replay`, {});
    expect(replayed.statusCode).toBe(200);
    expect(replayed.body).toContain(`Delivery of <code>alert.created</code> <code>${failed.eventId}</code> to`);
    expect((await listOrgDeliveries(t.db, 'org_wh', {})).find((x) => x.id === failedId)?.status).toBe('pending');

    const badSince = await admin.submit(PAGE, `${PAGE}/resend-failed`, { since: 'yesterday' });
    expect(badSince.statusCode).toBe(400);
    expect(badSince.body).toContain('Since must be a date and time (UTC), like 2026-11-20 09:00.');
    const resent = await admin.submit(PAGE, `${PAGE}/resend-failed`, { since: '2000-01-01T00:00' });
    expect(resent.statusCode).toBe(200);
    expect(resent.body).toContain('0 failed deliveries since 1 Jan 2000, 00:00:00 UTC sent again.');
    const badUrl = await admin.submit(PAGE, PAGE, { url: 'ftp://hooks.example.com/x' });
    expect(badUrl.statusCode).toBe(400);
    expect(badUrl.body).toContain('the URL must be https://');

    expect((await admin.submit(PAGE, `${PAGE}/${endpointId}/remove`, {})).body).toContain('removed, with its delivery history');
    expect(await listOrgEndpoints(t.db, 'org_wh')).toEqual([]);

    const { items } = await listAuditEvents(t.db, 'org_wh', { limit: 100 });
    const mine = items.filter((x) => x.actor.kind === 'member' && x.action.startsWith('webhook')).reverse();
    expect(mine.map((x) => `${x.action} ${x.actor.label} ${x.address}`)).toEqual([
      'webhook_endpoint.created admin@wh.example.com 192.0.2.10',
      'webhook_endpoint.secret_rotated admin@wh.example.com 192.0.2.10',
      'webhook_endpoint.tested admin@wh.example.com 192.0.2.10',
      'webhook_endpoint.disabled admin@wh.example.com 192.0.2.10',
      'webhook_endpoint.enabled admin@wh.example.com 192.0.2.10',
      'webhook_delivery.replayed admin@wh.example.com 192.0.2.10',
      'webhook_deliveries.resent admin@wh.example.com 192.0.2.10',
      'webhook_endpoint.removed admin@wh.example.com 192.0.2.10',
    ]);
    expect(JSON.stringify(items)).not.toContain(secret);
  });

  it('the delivery log is paged 50 at a time, newest first, to the oldest and back', async () => {
    const added = await stranger.submit(PAGE, PAGE, { url: `${rx.url}/paged`, 'event:alert.created': 'on' });
    expect(added.statusCode).toBe(200);
    const t0 = Date.parse('2026-10-01T00:00:00.000Z');
    await t.db.transaction(async (tx) => {
      for (let i = 0; i < 120; i++) await recordEvent(tx, 'org_else', 'alert.created', { id: `al_paged_${i}` }, new Date(t0 + i * 60_000));
    });
    const ids = (body: string) =>
      [...body.matchAll(/<td id="delivery-whd_[0-9a-f]+"><code>alert\.created<\/code><br><code class="muted">(msg_[A-Za-z0-9]+)<\/code>/g)].map((m) => m[1]);
    const older = (body: string) => /<a href="(\/console\/webhooks\?cursor=[^"]+)">Older deliveries<\/a>/.exec(body)?.[1]?.replaceAll('&amp;', '&');
    const seen: string[] = [];
    let url: string | undefined = PAGE;
    const pages: number[] = [];
    while (url) {
      const res = await stranger.get(url);
      expect(res.statusCode).toBe(200);
      pages.push(ids(res.body).length);
      seen.push(...ids(res.body));
      url = older(res.body);
    }
    expect(pages).toEqual([50, 50, 20]);
    const all = await listOrgDeliveries(t.db, 'org_else', { limit: 1000 });
    expect(seen).toEqual(all.map((d) => d.eventId)); // newest first, each once
    expect(new Set(seen).size).toBe(120);
    expect((await stranger.get('/console/webhooks?cursor=not-a-cursor')).statusCode).toBe(400);
  });
});
