import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { operatorActor } from '../../src/domain/audit.js';
import { createOrganization } from '../../src/domain/orgs.js';
import { recordEvent } from '../../src/domain/webhook-deliveries.js';
import { createWebhookEndpoint, disableOrgEndpoint } from '../../src/domain/webhook-endpoints.js';
import { format, PSEUDO_LOCALE } from '../../src/i18n/index.js';
import { type ConsoleClient, joinConsole } from '../helpers/console-client.js';
import { allowWordsOf, englishLeft, pseudoConsole, type PseudoConsole } from '../helpers/pseudo.js';

/**
 * Issue 57: the API keys, Webhooks and Provisioning pages in the pseudo-locale, in every state and
 * for every role that sees them, with no English left; and sentences with a plural in German and Arabic.
 */
const NOW = new Date('2026-11-20T12:00:00.000Z');
const OP = operatorActor('192.0.2.1');
/** Endpoints of the organization (its own data): one the console refuses to reach, one disabled by the operator. */
const LOOPBACK = 'https://127.0.0.1:9/climate';
const DISABLED = 'https://receiver.example.org/pulse';
const KEY_NAME = 'Nightly export';
const TOKEN_NAME = 'Entra directory';

let p: PseudoConsole;
let owner: ConsoleClient;
let admin: ConsoleClient;
let viewer: ConsoleClient;
let quietOwner: ConsoleClient;
let quietViewer: ConsoleClient;
let loopbackId = '';

const pseudo = (key: Parameters<typeof format>[1], values?: Parameters<typeof format>[2]) => format(PSEUDO_LOCALE, key, values);
const escaped = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&#39;');
const noEnglish = (body: string) => expect(englishLeft(body, p.allowed)).toEqual([]);

beforeAll(async () => {
  p = await pseudoConsole(NOW);
  owner = await p.member('owner');
  admin = await p.member('admin');
  viewer = await p.member('viewer');
  // An organization with nothing yet: the empty states.
  const quiet = await createOrganization(p.t.db, { name: 'Quiet Cooperative', plan: 'business' }, OP, NOW);
  allowWordsOf(p.allowed, ['Quiet Cooperative', 'quiet.owner@members.example.com', 'quiet.viewer@members.example.com']);
  quietOwner = await joinConsole(p.t, quiet.id, 'quiet.owner@members.example.com', 'owner', NOW);
  quietViewer = await joinConsole(p.t, quiet.id, 'quiet.viewer@members.example.com', 'viewer', NOW);
  for (const c of [quietOwner, quietViewer]) c.headers['accept-language'] = PSEUDO_LOCALE;
  // The organization's own words: its endpoints' URLs, a key's and a token's names.
  allowWordsOf(p.allowed, [LOOPBACK, DISABLED, KEY_NAME, TOKEN_NAME]);
  loopbackId = (await createWebhookEndpoint(p.t.db, p.orgId, { url: LOOPBACK, eventTypes: null, allowPrivate: true }, OP, NOW)).id;
  const disabled = await createWebhookEndpoint(p.t.db, p.orgId, { url: DISABLED, eventTypes: ['alert.created'], allowPrivate: false }, OP, NOW);
  // Two events each endpoint takes; the disabled endpoint's deliveries fail with it.
  await recordEvent(p.t.db, p.orgId, 'alert.created', { alertId: 'alr_pseudo1' }, NOW);
  await recordEvent(p.t.db, p.orgId, 'alert.created', { alertId: 'alr_pseudo2' }, NOW);
  await disableOrgEndpoint(p.t.db, p.orgId, disabled.id, OP, NOW);
}, 120_000);
afterAll(() => p?.t.close());

describe('the API keys page in the pseudo-locale', () => {
  it('empty, for an owner and a viewer', async () => {
    for (const c of [quietOwner, quietViewer]) {
      const res = await c.get('/console/keys');
      expect(res.statusCode).toBe(200);
      expect(res.body).toContain(`<p>${escaped(pseudo('console.keys.none'))}</p>`);
      noEnglish(res.body);
    }
  });

  it('with keys, for an owner, an admin and a viewer (who reads creators as roles)', async () => {
    for (const c of [owner, admin, viewer]) {
      const res = await c.get('/console/keys');
      expect(res.statusCode).toBe(200);
      expect(res.body).toContain('<html lang="en-XA">');
      noEnglish(res.body);
    }
  });

  it('a key created shows its secret box, rolled, revoked, and a refused form', async () => {
    const created = await admin.submit('/console/keys', '/console/keys', { name: KEY_NAME, scope: 'read' });
    expect(created.statusCode).toBe(200);
    expect(created.body).toContain(escaped(pseudo('console.layout.secretShownOnce')));
    expect(created.body).toContain(`aria-label="${escaped(pseudo('console.keys.newKey'))}"`);
    noEnglish(created.body);
    const id = new RegExp(`<td>${KEY_NAME}</td>[\\s\\S]*?action="/console/keys/([^/]+)/roll"`).exec(created.body)?.[1];
    expect(id).toBeDefined();

    const rolled = await admin.submit('/console/keys', `/console/keys/${id}/roll`, { expiresIn: '24h' });
    expect(rolled.statusCode).toBe(200);
    expect(rolled.body).toContain(escaped(pseudo('console.layout.secretShownOnce')));
    noEnglish(rolled.body);

    const newest = new RegExp(`<td>${KEY_NAME}</td>[\\s\\S]*?action="/console/keys/([^/]+)/revoke"`).exec(rolled.body)?.[1];
    const revoked = await owner.submit('/console/keys', `/console/keys/${newest}/revoke`, {});
    expect(revoked.statusCode).toBe(200);
    expect(revoked.body).toContain(escaped(pseudo('console.keys.revoked', { name: KEY_NAME })));
    noEnglish(revoked.body);

    const refused = await admin.submit('/console/keys', '/console/keys', { name: '', scope: 'read' });
    expect(refused.statusCode).toBe(400);
    expect(refused.body).toContain(escaped(pseudo('console.keys.badName', { max: 128 })));
    noEnglish(refused.body);
    const badDate = await admin.submit('/console/keys', '/console/keys', { name: KEY_NAME, scope: 'read', expires: 'soon' });
    expect(badDate.statusCode).toBe(400);
    noEnglish(badDate.body);
    const gone = await admin.submit('/console/keys', '/console/keys/key_nothing/revoke', {});
    expect(gone.statusCode).toBe(404);
    expect(gone.body).toContain(escaped(pseudo('console.keys.notFound')));
    noEnglish(gone.body);
  });
});

describe('the Webhooks page in the pseudo-locale', () => {
  it('empty, for an owner and a viewer', async () => {
    for (const c of [quietOwner, quietViewer]) {
      const res = await c.get('/console/webhooks');
      expect(res.statusCode).toBe(200);
      expect(res.body).toContain(escaped(pseudo('console.webhooks.noEndpoints')));
      noEnglish(res.body);
    }
  });

  it('endpoints and deliveries, for an owner, an admin and a viewer; failed ones only', async () => {
    for (const c of [owner, admin, viewer]) {
      for (const url of ['/console/webhooks', '/console/webhooks?failed=1']) {
        const res = await c.get(url);
        expect(res.statusCode).toBe(200);
        expect(res.body).toContain(escaped(pseudo('console.webhooks.disabled', { reason: pseudo('console.webhooks.reasonOperator') })));
        noEnglish(res.body);
      }
    }
  });

  it('a test event sent (refused for its address), an endpoint added with its secret, and a refused URL', async () => {
    const tested = await admin.submit('/console/webhooks', `/console/webhooks/${loopbackId}/test`, {});
    expect(tested.statusCode).toBe(200);
    expect(tested.body).toContain(escaped(pseudo('console.webhooks.urlAddress', { kind: 'loopback', host: '127.0.0.1' })));
    noEnglish(tested.body);

    const added = await owner.submit('/console/webhooks', '/console/webhooks', { url: DISABLED.replace('pulse', 'climate'), 'event:alert.created': 'on' });
    expect(added.statusCode).toBe(200);
    expect(added.body).toContain(`aria-label="${escaped(pseudo('console.webhooks.newSecret'))}"`);
    noEnglish(added.body);

    const refused = await owner.submit('/console/webhooks', '/console/webhooks', { url: 'https://10.0.0.5/hook' });
    expect(refused.statusCode).toBe(400);
    noEnglish(refused.body);
  });
});

describe('the Provisioning page in the pseudo-locale', () => {
  it('no tokens, tokens, a created token box, a replaced one, a revoked one and settings saved, for an owner and an admin', async () => {
    const empty = await quietOwner.get('/console/provisioning');
    expect(empty.statusCode).toBe(200);
    expect(empty.body).toContain(escaped(pseudo('console.provisioning.noTokens')));
    noEnglish(empty.body);

    const created = await owner.submit('/console/provisioning', '/console/provisioning/tokens', { name: TOKEN_NAME });
    expect(created.statusCode).toBe(200);
    expect(created.body).toContain(escaped(pseudo('console.provisioning.createdHeading', { name: TOKEN_NAME })));
    noEnglish(created.body);
    const id = /action="\/console\/provisioning\/tokens\/([^/]+)\/roll"/.exec(created.body)?.[1];

    const rolled = await admin.submit('/console/provisioning', `/console/provisioning/tokens/${id}/roll`, { expiresIn: '1h' });
    expect(rolled.statusCode).toBe(200);
    noEnglish(rolled.body);
    const live = /action="\/console\/provisioning\/tokens\/([^/]+)\/revoke"/.exec(rolled.body)?.[1];
    const revoked = await admin.submit('/console/provisioning', `/console/provisioning/tokens/${live}/revoke`, {});
    expect(revoked.statusCode).toBe(200);
    noEnglish(revoked.body);

    const saved = await admin.submit('/console/provisioning', '/console/provisioning/teams', { teamFrom: 'department' });
    expect(saved.statusCode).toBe(200);
    expect(saved.body).toContain(escaped(pseudo('console.provisioning.saved')));
    noEnglish(saved.body);
    const refused = await admin.submit('/console/provisioning', '/console/provisioning/teams', { teamFrom: 'office' });
    expect(refused.statusCode).toBe(400);
    noEnglish(refused.body);

    for (const c of [owner, admin]) noEnglish((await c.get('/console/provisioning')).body);
    expect((await viewer.get('/console/provisioning')).statusCode).toBe(403);
  });
});

describe('plurals in German and Arabic', () => {
  // The test event above failed (its address is refused); the disabled endpoint's two deliveries failed with it.
  it('resending failed deliveries counts them in German: one sent again, two left as they are', async () => {
    admin.headers['accept-language'] = 'de';
    try {
      const res = await admin.submit('/console/webhooks', '/console/webhooks/resend-failed', { since: '2026-11-20T00:00' });
      expect(res.statusCode).toBe(200);
      expect(res.body).toContain('<html lang="de">');
      expect(res.body).toContain(
        '<p class="notice ok" role="status">1 fehlgeschlagene Zustellung seit 20. Nov. 2026, 00:00:00 UTC erneut gesendet. 2 fehlgeschlagene Zustellungen deaktivierter Endpunkte bleiben fehlgeschlagen.</p>',
      );
    } finally {
      admin.headers['accept-language'] = PSEUDO_LOCALE;
    }
  });

  it('and in Arabic, right to left: none sent again (the zero form), two left (the dual)', async () => {
    admin.headers['accept-language'] = 'ar';
    try {
      const res = await admin.submit('/console/webhooks', '/console/webhooks/resend-failed', { since: '2026-11-20T00:00' });
      expect(res.statusCode).toBe(200);
      expect(res.body).toContain('<html lang="ar" dir="rtl">');
      expect(res.body).toContain(
        '<p class="notice ok" role="status">لم يُعَد إرسال أي عملية تسليم فاشلة منذ 20 نوفمبر 2026، 12:00:00 ص UTC. تبقى عمليتا تسليم فاشلتان لنقاط نهاية معطّلة فاشلتين.</p>',
      );
    } finally {
      admin.headers['accept-language'] = PSEUDO_LOCALE;
    }
  });
});
