import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { operatorActor } from '../../src/domain/audit.js';
import { readRosterCsv, replaceRoster } from '../../src/domain/checkins/roster.js';
import { runRounds } from '../../src/domain/checkins/rounds.js';
import { getDefaultLanguage, setDefaultLanguage, updateCheckinSettings } from '../../src/domain/checkins/settings.js';
import { format, type MessageKey } from '../../src/i18n/index.js';
import { checkinLink } from '../../src/jobs/rounds.js';
import { smtpMailer } from '../../src/mail/index.js';

/**
 * Issue 57, item 3 and its proof: a respondent's language is a roster column (the people file's
 * `language`), else the organization's default; the round's mail is written in it, says so in its
 * Content-Language, encodes a subject that is not ASCII, and carries the language in the link's
 * fragment after the token. A real SMTP server receives the mails.
 */
const NOW = new Date('2026-11-23T08:30:00.000Z');
const REMIND = new Date('2026-11-26T08:30:00.000Z');
const ORG = 'org_acme';

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

function parse(raw: string) {
  const [head, ...rest] = raw.split('\r\n\r\n');
  const headers = head.replace(/\r\n[ \t]+/g, ' ').split('\r\n');
  const header = (name: string) => headers.filter((h) => h.toLowerCase().startsWith(`${name.toLowerCase()}:`)).map((h) => h.slice(name.length + 1).trim());
  const boundary = /boundary="?([^";]+)"?/.exec(header('Content-Type')[0] ?? '')?.[1];
  const parts = (rest.join('\r\n\r\n').split(`--${boundary}`).slice(1, -1) ?? []).map((p) => {
    const [ph, ...pb] = p.replace(/^\r\n/, '').split('\r\n\r\n');
    let content = pb.join('\r\n\r\n');
    if (/Content-Transfer-Encoding: base64/i.test(ph)) content = Buffer.from(content.replace(/\s+/g, ''), 'base64').toString('utf8');
    else
      content = Buffer.from(
        content.replace(/=\r\n/g, '').replace(/=([0-9A-F]{2})/g, (_, h: string) => String.fromCharCode(parseInt(h, 16))),
        'latin1',
      ).toString('utf8');
    return { type: /Content-Type: ([^;\r\n]+)/i.exec(ph)?.[1], body: content };
  });
  return { header, parts };
}

describe("round mails in each respondent's language", () => {
  let t: TestApp;
  let smtp: SMTPServer;
  const inbox: { to: string; raw: string }[] = [];

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
  });
  afterAll(async () => {
    await t?.close();
    await new Promise<void>((resolve) => smtp?.close(() => resolve()));
  });

  it('a people file with a language column: every error at once, a tag written as the catalogue writes it', () => {
    const file = readRosterCsv('Name,Email,Team,Language\nA,a@acme.test,Web,tr\nB,b@acme.test,Web,pt-br\nC,c@acme.test,Web,\nD,d@acme.test,Web,klingon\n');
    expect(file.errors).toEqual(["Line 5: 'language' must be one of the languages offered (such as de, fr or pt-BR), or empty."]);
    const good = readRosterCsv('Name,Email,Team,Language\nA,a@acme.test,Web,tr\nB,b@acme.test,Web,pt-br\nC,c@acme.test,Web,\n');
    expect(good.rows).toEqual([
      { email: 'a@acme.test', team: 'Web', language: 'tr' },
      { email: 'b@acme.test', team: 'Web', language: 'pt-BR' },
      { email: 'c@acme.test', team: 'Web', language: null },
    ]);
    // Without the column, nothing is said of languages (the rows keep theirs).
    expect(readRosterCsv('email,team\na@acme.test,Web\n').rows).toEqual([{ email: 'a@acme.test', team: 'Web' }]);
  });

  it("mails each person in their roster language, else the organization's, with Content-Language and an encoded subject", async () => {
    const op = operatorActor(null);
    expect(await getDefaultLanguage(t.db, ORG)).toBe('en');
    await expect(setDefaultLanguage(t.db, ORG, 'xx', op, NOW)).rejects.toThrow("'language' must be one of the languages offered");
    expect(await setDefaultLanguage(t.db, ORG, 'fr', op, NOW)).toBe('fr');
    await updateCheckinSettings(t.db, ORG, { timeZone: 'Europe/Berlin', reminderWeekday: 4 }, op, NOW);
    await replaceRoster(
      t.db,
      ORG,
      'email,team,language\ntr@acme.test,Web,tr\nde@acme.test,Web,de\nja@acme.test,Web,ja\nar@acme.test,Web,ar\nnone@acme.test,Web,\n',
      op,
      NOW,
    );
    const mailer = smtpMailer(t.config.smtpUrl!, t.config.mailFrom!);
    const run = (at: Date) => runRounds(t.db, { linkFor: checkinLink('http://127.0.0.1:3000'), send: (m) => mailer.send(m) }, at);
    try {
      expect(await run(NOW)).toEqual({ mailed: 5, reminded: 0, failed: 0 });
      const expected: Record<string, string> = {
        'tr@acme.test': 'tr',
        'de@acme.test': 'de',
        'ja@acme.test': 'ja',
        'ar@acme.test': 'ar',
        'none@acme.test': 'fr',
      };
      expect(inbox.map((m) => m.to).sort()).toEqual(Object.keys(expected).sort());
      for (const m of inbox) {
        const locale = expected[m.to];
        const say = (key: MessageKey, values?: Record<string, string>) => format(locale, key, values);
        const p = parse(m.raw);
        expect(p.header('Content-Language'), m.to).toEqual([locale]);
        const subject = p.header('Subject')[0]!;
        const words = say('mail.subject', { org: 'Acme' });
        // A subject with a letter outside ASCII travels as encoded words (RFC 2047), which decode to the catalogue's.
        if (/[^\x20-\x7e]/.test(words)) expect(subject, m.to).toMatch(/^=\?UTF-8\?[BQ]\?/i);
        else expect(subject, m.to).toBe(words);
        expect(decodeWords(subject), m.to).toBe(words);
        const [text, html] = p.parts.map((x) => x.body);
        expect(text, m.to).toContain(say('mail.open', { org: 'Acme' }));
        expect(text, m.to).toContain(say('mail.yours'));
        expect(text, m.to).toMatch(new RegExp(`/checkin/o/${ORG}#[A-Za-z0-9_-]{32}&lang=${locale}\\r?\\n`));
        expect(html, m.to).toContain(`<html lang="${locale}" dir="${locale === 'ar' ? 'rtl' : 'ltr'}">`);
        expect(html, m.to).toContain(`&amp;lang=${locale}">`);
      }
      // The reminder, too, is in each person's language.
      inbox.length = 0;
      expect(await run(REMIND)).toEqual({ mailed: 0, reminded: 5, failed: 0 });
      const tr = parse(inbox.find((m) => m.to === 'tr@acme.test')!.raw);
      expect(tr.header('Content-Language')).toEqual(['tr']);
      expect(decodeWords(tr.header('Subject')[0]!)).toBe(format('tr', 'mail.reminderSubject', { org: 'Acme' }));
      expect(tr.parts[0]!.body).toContain(format('tr', 'mail.reminderWhy'));
    } finally {
      mailer.close();
    }
  });
});
