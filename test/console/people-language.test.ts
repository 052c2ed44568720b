import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { ConsoleClient, joinConsole } from '../helpers/console-client.js';
import { operatorActor } from '../../src/domain/audit.js';
import { replaceRoster, setRespondentLanguageBy } from '../../src/domain/checkins/roster.js';
import { runRounds } from '../../src/domain/checkins/rounds.js';
import { getDefaultLanguage } from '../../src/domain/checkins/settings.js';
import { insertRespondent } from '../../src/db/repositories/checkins.js';
import { sql } from '../../src/db/executor.js';
import { format } from '../../src/i18n/index.js';
import { checkinLink } from '../../src/jobs/rounds.js';
import { smtpMailer } from '../../src/mail/index.js';

/**
 * Issue 57, item 3: a respondent's language is a roster column, set on the People page one person
 * at a time (else the organization's default, chosen on the Check-ins page); the next round's
 * mails, received by a real SMTP server, are in it. A person SCIM keeps is not edited by hand.
 */
const NOW = new Date('2026-11-23T08:00:00.000Z'); // a Monday, an hour before the default round (09:00 UTC)
const ORG = 'org_acme';
const ESC = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&#39;');

describe("a person's mail language, and the organization's default, on the console", () => {
  let t: TestApp;
  let smtp: SMTPServer;
  const inbox: { to: string; raw: string }[] = [];
  let admin: ConsoleClient;
  let viewer: ConsoleClient;
  const ids: Record<string, string> = {};

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
    t = await createTestApp({
      dataset: { organizations: [{ id: ORG, name: 'Acme', plan: 'business', createdAt: '2026-01-01T00:00:00.000Z' }] },
      now: NOW,
      env: { SMTP_URL: `smtp://127.0.0.1:${(smtp.server.address() as AddressInfo).port}`, MAIL_FROM: 'Climate Pulse <pulse@service.test>' },
    });
    await replaceRoster(t.db, ORG, 'email,team\nana@acme.test,Web\nbo@acme.test,Web\ncy@acme.test,Web\n', operatorActor(null), NOW);
    ids.scim = 'rsp_scim_one';
    await insertRespondent(t.db, ORG, { id: ids.scim, email: 'idp@acme.test', teamId: null, createdAt: NOW, source: 'scim' });
    admin = await joinConsole(t, ORG, 'hr@acme.test', 'admin', NOW);
    viewer = await joinConsole(t, ORG, 'viewer@acme.test', 'viewer', NOW);
    const page = await admin.get('/console/people');
    for (const who of ['ana', 'bo', 'cy'])
      ids[who] = new RegExp(`href="/console/people/([^/"]+)/language" aria-label="Mail language of ${who}@acme\\.test: default"`).exec(page.body)?.[1] ?? '';
  }, 60_000);
  afterAll(async () => {
    await t?.close();
    await new Promise<void>((resolve) => smtp?.close(() => resolve()));
  });

  const audits = (action: string) =>
    t.db.query<{ target_id: string | null; details: Record<string, unknown> }>(
      sql('t.audits', `SELECT target_id, details FROM audit_events WHERE org_id = $1 AND action = $2 ORDER BY created_at, id`),
      [ORG, action],
    );
  const languages = async () =>
    Object.fromEntries(
      (
        await t.db.query<{ email: string; language: string | null }>(
          sql('t.languages', `SELECT email, language FROM respondents WHERE org_id = $1 ORDER BY email`),
          [ORG],
        )
      ).map((r) => [r.email, r.language]),
    );

  it('shows each person’s language on the People page; the default form of the Check-ins page changes the default, for owners and admins', async () => {
    expect(Object.values(ids).every(Boolean)).toBe(true);
    const people = await admin.get('/console/people');
    expect(people.body).toContain('<th scope="col">Mail language</th>');
    // A SCIM person's language is shown, not linked to a change.
    expect(people.body).not.toContain(`/console/people/${ids.scim}/language`);

    const checkins = await admin.get('/console/checkins');
    expect(checkins.body).toContain('<h2>Language of the mails</h2>');
    expect(checkins.body).toContain('<option value="en" lang="en" selected>English</option>');
    expect(checkins.body).toContain('<option value="de" lang="de">Deutsch</option>');
    const saved = await admin.submit('/console/checkins', '/console/checkins/language', { language: 'de' });
    expect(saved.statusCode).toBe(200);
    expect(saved.body).toContain('Default language saved: Deutsch. It applies from this week&#39;s round, which has not started yet.');
    expect(saved.body).toContain('<option value="de" lang="de" selected>Deutsch</option>');
    expect(await getDefaultLanguage(t.db, ORG)).toBe('de');
    expect((await audits('checkin_settings.updated')).at(-1)).toEqual({ target_id: null, details: { language: 'de' } });
    // The preview shows the mail in the default language, marked as such.
    expect(saved.body).toContain(`Subject: <q lang="de" dir="ltr">${ESC(format('de', 'mail.subject', { org: 'Acme' }))}</q>`);

    const refused = await admin.submit('/console/checkins', '/console/checkins/language', { language: 'xx' });
    expect(refused.statusCode).toBe(400);
    expect(refused.body).toContain('&#39;language&#39; must be one of the languages offered, such as de or pt-BR.');
    expect(await getDefaultLanguage(t.db, ORG)).toBe('de');

    // Viewers read it, and cannot change it.
    const read = await viewer.get('/console/checkins');
    expect(read.body).toContain('The mails go in Deutsch, unless a person&#39;s roster row names their own language');
    expect(read.body).not.toContain('action="/console/checkins/language"');
    const token = ConsoleClient.token(read.body);
    expect((await viewer.post('/console/checkins/language', { _csrf: token, language: 'fr' })).statusCode).toBe(403);
    expect(await getDefaultLanguage(t.db, ORG)).toBe('de');
  });

  it("sets one person's language on a page of its own, audited; back to the organization's default with the empty choice", async () => {
    const form = await admin.get(`/console/people/${ids.ana}/language`);
    expect(form.statusCode).toBe(200);
    expect(form.body).toContain('<h1>Mail language of ana@acme.test</h1>');
    expect(form.body).toContain('<option value="" selected>Organization&#39;s default (Deutsch)</option>');
    expect(form.body).toContain('<option value="ja" lang="ja">日本語</option>');
    const set = await admin.submit(`/console/people/${ids.ana}/language`, `/console/people/${ids.ana}/language`, { language: 'ja', back: '' });
    expect(set.statusCode).toBe(200);
    expect(set.body).toContain('ana@acme.test: mail language set to 日本語. It applies to the mails not yet sent.');
    expect(set.body).toContain(`aria-label="Mail language of ana@acme.test: 日本語"><span lang="ja">日本語</span></a>`);
    await admin.submit(`/console/people/${ids.bo}/language`, `/console/people/${ids.bo}/language`, { language: 'ar', back: '' });
    const cleared = await admin.submit(`/console/people/${ids.bo}/language`, `/console/people/${ids.bo}/language`, { language: '', back: '' });
    expect(cleared.body).toContain('bo@acme.test: mails in the organization&#39;s default language (Deutsch). It applies to the mails not yet sent.');
    const bad = await admin.submit(`/console/people/${ids.cy}/language`, `/console/people/${ids.cy}/language`, { language: 'klingon', back: '' });
    expect(bad.statusCode).toBe(400);
    expect(bad.body).toContain('&#39;language&#39; must be one of the languages offered (such as de, fr or pt-BR), or empty.');
    expect(await languages()).toEqual({ 'ana@acme.test': 'ja', 'bo@acme.test': null, 'cy@acme.test': null, 'idp@acme.test': null });
    // One row per change, with the respondent's id (the three share the test's clock, so their order is the id's).
    const rows = await audits('respondent.language_changed');
    expect(rows).toHaveLength(3);
    expect(rows).toEqual(
      expect.arrayContaining([
        { target_id: ids.ana, details: { language: 'ja' } },
        { target_id: ids.bo, details: { language: 'ar' } },
        { target_id: ids.bo, details: { language: null } },
      ]),
    );
    // In German, the page and its refusal are German.
    admin.headers['accept-language'] = 'de';
    const de = await admin.submit(`/console/people/${ids.cy}/language`, `/console/people/${ids.cy}/language`, { language: 'klingon', back: '' });
    expect(de.body).toContain('Die Sprache muss eine der angebotenen sein (etwa de, fr oder pt-BR) oder leer bleiben.');
    delete admin.headers['accept-language'];
  });

  it('refuses a hand change of the language of a person SCIM keeps, on the page and in the domain', async () => {
    const page = await admin.get(`/console/people/${ids.scim}/language`);
    expect(page.statusCode).toBe(400);
    expect(page.body).toContain('This person is kept by the organization&#39;s identity provider (SCIM): change them there.');
    const token = ConsoleClient.token((await admin.get('/console/people')).body);
    const post = await admin.post(`/console/people/${ids.scim}/language`, { _csrf: token, language: 'fr', back: '' });
    expect(post.statusCode).toBe(400);
    expect(post.body).toContain('This person is kept by the organization&#39;s identity provider (SCIM): change them there.');
    await expect(setRespondentLanguageBy(t.db, ORG, ids.scim, 'fr', operatorActor(null), NOW)).rejects.toThrow(/identity provider \(SCIM\)/);
    expect((await languages())['idp@acme.test']).toBeNull();
    expect((await admin.get('/console/people/rsp_nobody/language')).statusCode).toBe(404);
  });

  it("mails the next round in each person's language, else the organization's default", async () => {
    const mailer = smtpMailer(t.config.smtpUrl!, t.config.mailFrom!);
    try {
      const report = await runRounds(
        t.db,
        { linkFor: checkinLink('http://127.0.0.1:3000'), send: (m) => mailer.send(m) },
        new Date('2026-11-23T09:00:00.000Z'),
      );
      expect(report).toEqual({ mailed: 4, reminded: 0, failed: 0 });
    } finally {
      mailer.close();
    }
    const language = (to: string) => /^Content-Language: (\S+)\r$/m.exec(inbox.find((m) => m.to === to)?.raw ?? '')?.[1];
    expect(Object.fromEntries(['ana', 'bo', 'cy', 'idp'].map((w) => [w, language(`${w}@acme.test`)]))).toEqual({ ana: 'ja', bo: 'de', cy: 'de', idp: 'de' });
    // The link carries the language after the token (the Japanese text part travels in base64).
    const raw = inbox.find((m) => m.to === 'ana@acme.test')!.raw;
    const text = Buffer.from(/Content-Type: text\/plain[\s\S]*?\r\n\r\n([A-Za-z0-9+/=\r\n]+?)\r\n--/.exec(raw)![1].replace(/\s+/g, ''), 'base64').toString(
      'utf8',
    );
    expect(text).toContain(format('ja', 'mail.open', { org: 'Acme' }));
    expect(text).toMatch(/#[A-Za-z0-9_-]{32}&lang=ja\n/);
  }, 60_000);
});
