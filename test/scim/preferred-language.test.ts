import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from '../../src/db/executor.js';
import { operatorActor } from '../../src/domain/audit.js';
import { runRounds } from '../../src/domain/checkins/rounds.js';
import { setDefaultLanguage, updateCheckinSettings } from '../../src/domain/checkins/settings.js';
import { format } from '../../src/i18n/index.js';
import { checkinLink } from '../../src/jobs/rounds.js';
import { smtpMailer } from '../../src/mail/index.js';
import { newUser, PATCH_OP, scimTest, USER, type ScimTest } from './helpers.js';

/**
 * Issue 57 (item 3) through SCIM (issue 56): RFC 7643's `preferredLanguage` sets the person's roster
 * language, kept as the nearest language offered ("tr-TR" → "tr"), and read back as kept; a language
 * not offered is kept as none, so the organization's default applies, and is never an error for the
 * identity provider. POST, PUT and PATCH set it; the next round's mail is in it, received by a real
 * SMTP server. Every answer is checked against the RFC's schemas (test/scim/helpers.ts).
 */
const MONDAY = new Date('2026-11-23T08:30:00.000Z');
const ORG_NAME = 'Provisioned Co';

/** RFC 2047: the encoded words of a header, decoded (B and Q, UTF-8). */
const decodeWords = (v: string) =>
  v.replace(/=\?UTF-8\?([BQ])\?([^?]*)\?=(\s+(?==\?))?/gi, (_, enc: string, text: string) =>
    enc.toUpperCase() === 'B'
      ? Buffer.from(text, 'base64').toString('utf8')
      : Buffer.from(
          text.replace(/_/g, ' ').replace(/=([0-9A-F]{2})/gi, (_m, h: string) => String.fromCharCode(parseInt(h, 16))),
          'latin1',
        ).toString('utf8'),
  );

const headerOf = (raw: string, name: string) =>
  raw
    .split('\r\n\r\n')[0]
    .replace(/\r\n[ \t]+/g, ' ')
    .split('\r\n')
    .filter((h) => h.toLowerCase().startsWith(`${name.toLowerCase()}:`))
    .map((h) => h.slice(name.length + 1).trim());

describe('SCIM preferredLanguage: the roster language', () => {
  let t: ScimTest;
  let smtp: SMTPServer;
  const inbox: { to: string; raw: string }[] = [];
  const ids: Record<string, string> = {};

  const stored = async () =>
    Object.fromEntries(
      (
        await t.db.query<{ email: string; language: string | null }>(
          sql('t.languages', `SELECT email, language FROM respondents WHERE org_id = $1 ORDER BY email`),
          [t.orgId],
        )
      ).map((r) => [r.email, r.language]),
    );

  beforeAll(async () => {
    smtp = new SMTPServer({
      authOptional: true,
      disabledCommands: ['STARTTLS', 'AUTH'],
      onData(stream, session, callback) {
        const chunks: Buffer[] = [];
        stream.on('data', (c: Buffer) => chunks.push(c));
        stream.on('end', () => {
          inbox.push({ to: session.envelope.rcptTo[0].address, raw: Buffer.concat(chunks).toString('utf8') });
          callback();
        });
      },
    });
    await new Promise<void>((resolve) => smtp.listen(0, '127.0.0.1', () => resolve()));
    t = await scimTest({
      now: MONDAY,
      env: { SMTP_URL: `smtp://127.0.0.1:${(smtp.server.address() as AddressInfo).port}`, MAIL_FROM: 'Climate Pulse <pulse@service.test>' },
    });
  }, 60_000);
  afterAll(async () => {
    await t?.close();
    await new Promise<void>((resolve) => smtp?.close(() => resolve()));
  });

  it('POST keeps the nearest language offered and answers it as kept; an unknown one is none, never an error', async () => {
    const tr = await t.scim('POST', '/Users', newUser('tr@provisioned.test', { preferredLanguage: 'tr-TR' }));
    expect(tr.statusCode).toBe(201);
    expect(tr.json.preferredLanguage).toBe('tr');
    ids.tr = tr.json.id as string;

    const xx = await t.scim('POST', '/Users', newUser('xx@provisioned.test', { preferredLanguage: 'xx' }));
    expect(xx.statusCode).toBe(201);
    expect(xx.json).not.toHaveProperty('preferredLanguage');
    ids.xx = xx.json.id as string;

    const later = await t.scim('POST', '/Users', newUser('de@provisioned.test', { preferredLanguage: 'fr-CA' }));
    expect(later.json.preferredLanguage).toBe('fr');
    ids.de = later.json.id as string;

    const none = await t.scim('POST', '/Users', newUser('none@provisioned.test'));
    expect(none.statusCode).toBe(201);
    expect(none.json).not.toHaveProperty('preferredLanguage');
    ids.none = none.json.id as string;

    expect(await stored()).toEqual({
      'de@provisioned.test': 'fr',
      'none@provisioned.test': null,
      'tr@provisioned.test': 'tr',
      'xx@provisioned.test': null,
    });
    const list = await t.scim('GET', '/Users?filter=userName%20eq%20%22tr%40provisioned.test%22');
    expect((list.json.Resources as Record<string, unknown>[]).map((u) => u.preferredLanguage)).toEqual(['tr']);
    const one = await t.scim('GET', `/Users/${ids.tr}`);
    expect(one.json.preferredLanguage).toBe('tr');
  });

  it('PATCH changes it (with a path, as Entra sends it, and by a value object), the version with it; PUT sets and clears it', async () => {
    const before = await t.scim('GET', `/Users/${ids.de}`);
    const patched = await t.scim('PATCH', `/Users/${ids.de}`, {
      schemas: [PATCH_OP],
      Operations: [{ op: 'Replace', path: 'preferredLanguage', value: 'de' }],
    });
    expect(patched.statusCode).toBe(200);
    expect(patched.json.preferredLanguage).toBe('de');
    expect(patched.headers.etag).not.toBe(before.headers.etag);
    expect((await t.scim('GET', `/Users/${ids.de}`)).json.preferredLanguage).toBe('de');
    // An If-Match of the version before the change no longer matches.
    const stale = await t.scim(
      'PATCH',
      `/Users/${ids.de}`,
      { schemas: [PATCH_OP], Operations: [{ op: 'replace', path: 'active', value: true }] },
      { 'if-match': String(before.headers.etag) },
    );
    expect(stale.statusCode).toBe(412);

    // A PATCH of something else keeps it.
    const other = await t.scim('PATCH', `/Users/${ids.de}`, { schemas: [PATCH_OP], Operations: [{ op: 'replace', value: { externalId: 'ext-de' } }] });
    expect(other.json).toMatchObject({ externalId: 'ext-de', preferredLanguage: 'de' });

    // PUT: the whole user, its language included; one not offered, or none said, leaves none.
    const put = await t.scim('PUT', `/Users/${ids.none}`, newUser('none@provisioned.test', { preferredLanguage: 'pt-br' }));
    expect(put.json.preferredLanguage).toBe('pt-BR');
    const cleared = await t.scim('PUT', `/Users/${ids.none}`, newUser('none@provisioned.test'));
    expect(cleared.statusCode).toBe(200);
    expect(cleared.json).not.toHaveProperty('preferredLanguage');
    const unknown = await t.scim('PATCH', `/Users/${ids.xx}`, {
      schemas: [PATCH_OP],
      Operations: [{ op: 'add', path: 'preferredLanguage', value: 'tlh-Latn' }],
    });
    expect(unknown.statusCode).toBe(200);
    expect(unknown.json).not.toHaveProperty('preferredLanguage');
    // Removed by PATCH: none.
    const removed = await t.scim('PATCH', `/Users/${ids.tr}`, { schemas: [PATCH_OP], Operations: [{ op: 'remove', path: 'preferredLanguage' }] });
    expect(removed.json).not.toHaveProperty('preferredLanguage');
    const back = await t.scim('PATCH', `/Users/${ids.tr}`, { schemas: [PATCH_OP], Operations: [{ op: 'replace', value: { preferredLanguage: 'TR' } }] });
    expect(back.json.preferredLanguage).toBe('tr');

    expect(await stored()).toEqual({
      'de@provisioned.test': 'de',
      'none@provisioned.test': null,
      'tr@provisioned.test': 'tr',
      'xx@provisioned.test': null,
    });
    // The Schemas document names the attribute.
    const schema = await t.scim('GET', `/Schemas/${USER}`);
    expect((schema.json.attributes as { name: string }[]).map((a) => a.name)).toContain('preferredLanguage');
  });

  it("the next round's mail is in each person's language, else the organization's default", async () => {
    const op = operatorActor(null);
    await setDefaultLanguage(t.db, t.orgId, 'es', op, MONDAY);
    await updateCheckinSettings(t.db, t.orgId, { timeZone: 'Europe/Berlin' }, op, MONDAY);
    const mailer = smtpMailer(t.config.smtpUrl!, t.config.mailFrom!);
    try {
      const report = await runRounds(t.db, { linkFor: checkinLink('http://127.0.0.1:3000'), send: (m) => mailer.send(m) }, MONDAY);
      expect(report).toEqual({ mailed: 4, reminded: 0, failed: 0 });
    } finally {
      mailer.close();
    }
    const expected: Record<string, string> = {
      'tr@provisioned.test': 'tr',
      'de@provisioned.test': 'de',
      'xx@provisioned.test': 'es',
      'none@provisioned.test': 'es',
    };
    expect(inbox.map((m) => m.to).sort()).toEqual(Object.keys(expected).sort());
    for (const m of inbox) {
      const locale = expected[m.to];
      expect(headerOf(m.raw, 'Content-Language'), m.to).toEqual([locale]);
      expect(decodeWords(headerOf(m.raw, 'Subject')[0]!), m.to).toBe(format(locale, 'mail.subject', { org: ORG_NAME }));
    }
    expect(format('tr', 'mail.subject', { org: ORG_NAME })).toBe(`Haftanız nasıl geçti? (${ORG_NAME})`);
  });

  it('a user turned off keeps the language, read back as set, and has it again when turned on', async () => {
    const off = await t.scim('PATCH', `/Users/${ids.tr}`, { schemas: [PATCH_OP], Operations: [{ op: 'Replace', path: 'active', value: false }] });
    expect(off.statusCode).toBe(200);
    expect(off.json).toMatchObject({ active: false, preferredLanguage: 'tr' });
    expect(await stored()).not.toHaveProperty('tr@provisioned.test');
    // Changed while off, by a value object as Okta sends it.
    const changed = await t.scim('PATCH', `/Users/${ids.tr}`, { schemas: [PATCH_OP], Operations: [{ op: 'replace', value: { preferredLanguage: 'ja-JP' } }] });
    expect(changed.json).toMatchObject({ active: false, preferredLanguage: 'ja' });
    const on = await t.scim('PATCH', `/Users/${ids.tr}`, { schemas: [PATCH_OP], Operations: [{ op: 'replace', path: 'active', value: true }] });
    expect(on.json).toMatchObject({ active: true, preferredLanguage: 'ja' });
    expect((await stored())['tr@provisioned.test']).toBe('ja');
    // Created off, with a language: read back with it.
    const created = await t.scim('POST', '/Users', newUser('off@provisioned.test', { active: false, preferredLanguage: 'pl-PL' }));
    expect(created.statusCode).toBe(201);
    expect(created.json).toMatchObject({ active: false, preferredLanguage: 'pl' });
    expect((await t.scim('GET', `/Users/${created.json.id as string}`)).json.preferredLanguage).toBe('pl');
  });
});
