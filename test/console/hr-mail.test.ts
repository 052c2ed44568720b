import type { AddressInfo } from 'node:net';
import addressparser from 'nodemailer/lib/addressparser/index.js';
import { SMTPServer } from 'smtp-server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { linkToken } from '../checkin/helpers.js';
import { operatorActor } from '../../src/domain/audit.js';
import { replaceRoster } from '../../src/domain/checkins/roster.js';
import { updateCheckinSettings } from '../../src/domain/checkins/settings.js';
import { runRounds, sendTestMail } from '../../src/domain/checkins/rounds.js';
import { headerText, smtpMailer } from '../../src/mail/index.js';
import { checkinLink } from '../../src/jobs/rounds.js';
import { sql } from '../../src/db/executor.js';

/**
 * The round's mails (issue 53, item 1): multipart/alternative (plain text first, then HTML, with
 * the same link), sent in the organization's name (the display name; the address stays MAIL_FROM's)
 * and saying when the link closes, in the organization's time zone. A hostile organization name
 * (CR LF, quotes, an address of its own) stays one display name: no header is injected and the
 * relay is asked to deliver to the respondent only. A real SMTP server receives them.
 */
interface Received {
  from: string;
  to: string[];
  raw: string;
}
const NOW = new Date('2026-11-23T08:30:00.000Z'); // Monday 09:30 in Paris: the round (09:00 Paris) is due
const REMIND = new Date('2026-11-26T08:30:00.000Z'); // Thursday, after the reminder's hour
const HOSTILE = 'Evil\r\nBcc: victim@evil.test\r\nX-Injected: yes\u2028"Boss" <ceo@evil.test>, other@evil.test';

/** The message's headers, unfolded, and its parts (split at the boundary, each decoded from quoted-printable). */
function parse(raw: string) {
  const [head, ...rest] = raw.split('\r\n\r\n');
  const headers = head.replace(/\r\n[ \t]+/g, ' ').split('\r\n');
  const header = (name: string) => headers.filter((h) => h.toLowerCase().startsWith(`${name.toLowerCase()}:`)).map((h) => h.slice(name.length + 1).trim());
  const boundary = /boundary="?([^";]+)"?/.exec(header('Content-Type')[0] ?? '')?.[1];
  const body = rest.join('\r\n\r\n');
  const parts = boundary
    ? body
        .split(`--${boundary}`)
        .slice(1, -1)
        .map((p) => {
          const [ph, ...pb] = p.replace(/^\r\n/, '').split('\r\n\r\n');
          const content = pb
            .join('\r\n\r\n')
            .replace(/=\r\n/g, '')
            .replace(/=([0-9A-F]{2})/g, (_, h: string) => String.fromCharCode(parseInt(h, 16)));
          return { type: /Content-Type: ([^;\r\n]+)/i.exec(ph)?.[1], body: Buffer.from(content, 'latin1').toString('utf8') };
        })
    : [];
  return { headers, header, parts };
}

describe('round mails in text and HTML, in the organization name', () => {
  let t: TestApp;
  let smtp: SMTPServer;
  const inbox: Received[] = [];

  beforeAll(async () => {
    smtp = new SMTPServer({
      authOptional: true,
      disabledCommands: ['STARTTLS', 'AUTH'],
      onData(stream, session, callback) {
        const chunks: Buffer[] = [];
        stream.on('data', (c: Buffer) => chunks.push(c));
        stream.on('end', () => {
          inbox.push({
            from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
            to: session.envelope.rcptTo.map((r) => r.address),
            raw: Buffer.concat(chunks).toString('utf8'),
          });
          callback();
        });
      },
    });
    await new Promise<void>((resolve) => smtp.listen(0, '127.0.0.1', () => resolve()));
    const port = (smtp.server.address() as AddressInfo).port;
    t = await createTestApp({
      dataset: {
        organizations: [
          { id: 'org_acme', name: 'Acme & Sons', plan: 'business', createdAt: '2026-01-01T00:00:00.000Z' },
          { id: 'org_evil', name: 'Placeholder', plan: 'business', createdAt: '2026-01-01T00:00:00.000Z' },
        ],
      },
      now: NOW,
      env: { SMTP_URL: `smtp://127.0.0.1:${port}`, MAIL_FROM: 'Climate Pulse <pulse@service.test>' },
    });
    // A name no entry accepts any more (control characters are refused), as an older row may hold.
    await t.db.query(sql('t.org-name', 'UPDATE organizations SET name = $2 WHERE id = $1'), ['org_evil', HOSTILE]);
    const op = operatorActor(null);
    await replaceRoster(t.db, 'org_acme', ['email,team', ...[1, 2, 3, 4, 5].map((i) => `a${i}@acme.test,Web`)].join('\n'), op, NOW);
    await replaceRoster(t.db, 'org_evil', 'email,team\nvictim-not@evil.test,\n', op, NOW);
    await updateCheckinSettings(t.db, 'org_acme', { timeZone: 'Europe/Paris', reminderWeekday: 4 }, op, NOW);
    await updateCheckinSettings(t.db, 'org_evil', { timeZone: 'Europe/Paris', reminderWeekday: 4 }, op, NOW);
  });
  afterAll(async () => {
    await t?.close();
    await new Promise<void>((resolve) => smtp?.close(() => resolve()));
  });

  it('mails each person one multipart/alternative message from the organization, with the link in both parts and the closing date', async () => {
    // The job's own run (src/jobs/rounds.ts) with the server's mailer: its timer is not started, so no other run races this one.
    const mailer = smtpMailer(t.config.smtpUrl!, t.config.mailFrom!);
    const run = (at: Date) => runRounds(t.db, { linkFor: checkinLink('http://127.0.0.1:3000'), send: (m) => mailer.send(m) }, at);
    try {
      expect(await run(NOW)).toEqual({ mailed: 6, reminded: 0, failed: 0 });
      const acme = inbox.filter((m) => m.to[0]!.endsWith('@acme.test'));
      expect(acme.map((m) => m.to).sort()).toEqual([1, 2, 3, 4, 5].map((i) => [`a${i}@acme.test`]));
      const tokens = new Set<string>();
      for (const m of acme) {
        expect(m.from).toBe('pulse@service.test');
        const p = parse(m.raw);
        expect(p.header('From')).toEqual(['"Acme & Sons" <pulse@service.test>']);
        expect(p.header('Subject')).toEqual(['How was your week? (Acme & Sons)']);
        expect(p.header('Content-Type')[0]).toMatch(/^multipart\/alternative; boundary=/);
        expect(p.parts.map((x) => x.type)).toEqual(['text/plain', 'text/html']);
        const [text, htmlPart] = p.parts.map((x) => x.body);
        expect(text).toContain("This week's check-in of Acme & Sons is open.");
        expect(text).toContain('The link works until Thursday 3 December 2026 at 01:00 (Europe/Paris).');
        expect(htmlPart).toContain("<p>This week's check-in of Acme &amp; Sons is open.</p>");
        expect(htmlPart).toContain('<p>The link works until <strong>Thursday 3 December 2026 at 01:00 (Europe/Paris)</strong>.</p>');
        const token = linkToken(text!)!;
        expect(token).toMatch(/^[A-Za-z0-9_-]{32}$/);
        expect(htmlPart).toContain(`<a href="http://127.0.0.1:3000/checkin/o/org_acme#${token}&amp;lang=en">answer this week's check-in</a>`);
        expect(p.header('Content-Language')).toEqual(['en']);
        tokens.add(token);
      }
      expect(tokens.size).toBe(5);

      inbox.length = 0;
      expect(await run(REMIND)).toEqual({ mailed: 0, reminded: 6, failed: 0 });
      const reminder = parse(inbox.find((m) => m.to[0] === 'a1@acme.test')!.raw);
      expect(reminder.header('From')).toEqual(['"Acme & Sons" <pulse@service.test>']);
      expect(reminder.header('Subject')).toEqual(['Reminder: How was your week? (Acme & Sons)']);
      expect(reminder.parts.map((x) => x.type)).toEqual(['text/plain', 'text/html']);
      expect(reminder.parts[0]!.body).toContain(
        "A reminder: this week's check-in of Acme & Sons is open until Thursday 3 December 2026 at 01:00 (Europe/Paris).",
      );
      expect(reminder.parts[0]!.body).toContain('of Monday 23 November 2026.');
      expect(reminder.parts[1]!.body).toContain('is open until Thursday 3 December 2026 at 01:00 (Europe/Paris).</p>');
      expect(reminder.parts[1]!.body).not.toContain('/checkin/o/');
    } finally {
      mailer.close();
    }
  });

  it('keeps a hostile organization name one display name: no header injected, no other recipient', async () => {
    const evil = inbox.filter((m) => m.to.includes('victim-not@evil.test'));
    expect(evil).toHaveLength(1); // the reminder of the second run
    const [m] = evil;
    expect(m!.to).toEqual(['victim-not@evil.test']);
    expect(m!.from).toBe('pulse@service.test');
    const p = parse(m!.raw);
    expect(p.headers.filter((h) => /^(bcc|x-injected|cc):/i.test(h))).toEqual([]);
    expect(p.header('From')).toHaveLength(1);
    const from = addressparser(p.header('From')[0]!);
    const words = (v: string) =>
      v.replace(/\?=\s+=\?/g, '?==?').replace(/=\?UTF-8\?Q\?([^?]*)\?=/gi, (_, q: string) =>
        Buffer.from(
          q.replace(/_/g, ' ').replace(/=([0-9A-F]{2})/gi, (_x, h: string) => String.fromCharCode(parseInt(h, 16))),
          'latin1',
        ).toString('utf8'),
      );
    expect(from).toHaveLength(1);
    expect(from[0]!.address).toBe('pulse@service.test');
    expect(words(from[0]!.name)).toBe(headerText(HOSTILE, 78));
    expect(words(from[0]!.name)).toBe(`${'Evil Bcc: victim@evil.test X-Injected: yes "Boss" <ceo@evil.test>, other@evil.test'.slice(0, 77)}…`);
    expect(p.header('Subject')).toHaveLength(1);
    expect(p.header('To')).toEqual(['victim-not@evil.test']);
  });

  it('sends the test mail the same way: multipart, from the organization', async () => {
    inbox.length = 0;
    const mailer = smtpMailer(t.config.smtpUrl!, t.config.mailFrom!);
    try {
      await sendTestMail(
        t.db,
        'org_acme',
        { to: 'hr@acme.test', send: (msg) => mailer.send(msg), previewLink: 'http://127.0.0.1:3000/console/checkins/test-link' },
        operatorActor(null),
        NOW,
      );
    } finally {
      mailer.close();
    }
    const p = parse(inbox[0]!.raw);
    expect(p.header('From')).toEqual(['"Acme & Sons" <pulse@service.test>']);
    expect(p.header('Subject')).toEqual(['[Test] How was your week? (Acme & Sons)']);
    expect(p.parts.map((x) => x.type)).toEqual(['text/plain', 'text/html']);
    expect(p.parts[1]!.body).toContain('<a href="http://127.0.0.1:3000/console/checkins/test-link">');
    expect(p.parts[1]!.body).toContain('<p><em>This is a test of the check-in mail');
  });

  it('makes header text safe', () => {
    expect(headerText('A\r\nB\tC\u202eD\u0085E  F')).toBe('A B C D E F');
    expect(headerText('x'.repeat(100), 10)).toBe(`${'x'.repeat(9)}…`);
  });
});
