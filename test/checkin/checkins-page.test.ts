import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readDataset } from '../fixtures/dataset.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { ConsoleClient, joinConsole } from '../helpers/console-client.js';
import { operatorActor } from '../../src/domain/audit.js';
import { replaceRoster } from '../../src/domain/checkins/roster.js';
import { mailText, runRounds, subjectOf } from '../../src/domain/checkins/rounds.js';
import { relayReason, roundStatuses } from '../../src/domain/checkins/round-status.js';
import { zoneOf } from '../../src/console/pages/checkins/form.js';
import { sql } from '../../src/db/executor.js';

/**
 * The Check-ins page (issue 53, CONTRACT.md section 11 amended, *Rounds you can see*): the schedule
 * by city, previews made by the round's own text functions, a test mail to oneself through the real
 * mailer (an SMTP server started here), "send this week's round now" after a confirmation that says
 * to how many, each round's status with the relay's reason (no address in it), every change
 * audited; the operator API's same "send now" and status. Viewers read the page and change nothing.
 */
interface Received {
  to: string[];
  raw: string;
}
const decoded = (raw: string) => raw.replace(/=\r?\n/g, '').replace(/=([0-9A-F]{2})/g, (_, h: string) => String.fromCharCode(parseInt(h, 16)));
const NOW = new Date('2026-11-23T08:00:00.000Z'); // a Monday, an hour before the default round (09:00 UTC)
const ORG = 'org_acme';
const roster = ['email,team', ...[1, 2, 3, 4, 5].map((i) => `w${i}@acme.test,Web`), 'solo@acme.test,'].join('\n');

describe('the Check-ins page', () => {
  let t: TestApp;
  let smtp: SMTPServer;
  const inbox: Received[] = [];
  let admin: ConsoleClient;
  let viewer: ConsoleClient;

  beforeAll(async () => {
    smtp = new SMTPServer({
      authOptional: true,
      disabledCommands: ['STARTTLS', 'AUTH'],
      onData(stream, session, callback) {
        const chunks: Buffer[] = [];
        stream.on('data', (c: Buffer) => chunks.push(c));
        stream.on('end', () => {
          inbox.push({ to: session.envelope.rcptTo.map((r) => r.address), raw: decoded(Buffer.concat(chunks).toString('utf8')) });
          callback();
        });
      },
    });
    await new Promise<void>((resolve) => smtp.listen(0, '127.0.0.1', () => resolve()));
    const port = (smtp.server.address() as AddressInfo).port;
    t = await createTestApp({ dataset: readDataset(), now: NOW, env: { SMTP_URL: `smtp://127.0.0.1:${port}`, MAIL_FROM: 'pulse@service.test' } });
    admin = await joinConsole(t, ORG, 'hr@acme.test', 'admin', NOW);
    viewer = await joinConsole(t, ORG, 'viewer@acme.test', 'viewer', NOW);
  });
  afterAll(async () => {
    await t?.close();
    await new Promise<void>((resolve) => smtp?.close(() => resolve()));
  });

  it('reads a city as its time zone', () => {
    expect(zoneOf('Paris')).toBe('Europe/Paris');
    expect(zoneOf(' buenos aires ')).toBe('America/Buenos_Aires');
    expect(zoneOf('Paris (Europe/Paris)')).toBe('Europe/Paris');
    expect(zoneOf('Asia/Tokyo')).toBe('Asia/Tokyo');
    expect(zoneOf('UTC')).toBe('UTC');
    expect(zoneOf('Atlantis')).toBe('Atlantis');
  });

  it('has a nav entry for owners, admins and viewers, and shows viewers no control', async () => {
    const page = await viewer.get('/console/checkins');
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain('<a href="/console/checkins" aria-current="page">Check-ins</a>');
    expect(page.body).toContain('The round goes on Monday at 09:00 (UTC), with a reminder on Thursday at the same hour.');
    expect(page.body).not.toContain('Save check-in settings');
    expect(page.body).not.toContain("Send this week's round now");
    expect(page.body).not.toContain('test mail');
    expect((await viewer.submit('/console/checkins', '/console/checkins/send', {})).statusCode).toBe(403);
    expect((await viewer.get('/console/checkins/send')).statusCode).toBe(403);
  });

  it('saves the schedule with a time zone typed as a city; the settings form of the People page still works', async () => {
    const page = await admin.get('/console/checkins');
    expect(page.body).toContain('<option value="Europe/Paris">Paris</option>');
    const saved = await admin.submit('/console/checkins', '/console/checkins/settings', {
      weekday: '1',
      hour: '10',
      timeZone: 'Paris',
      reminderWeekday: '4',
      reasons: 'workload\nteam',
      flagWords: '',
    });
    expect(saved.statusCode).toBe(200);
    expect(saved.body).toContain('Check-in settings saved.');
    expect(saved.body).toContain('value="Europe/Paris"');
    const old = await admin.submit('/console/checkins', '/console/people/settings', {
      weekday: '1',
      hour: '10',
      timeZone: 'Europe/Paris',
      reminderWeekday: '4',
      reasons: 'workload\nteam',
      flagWords: '',
    });
    expect([old.statusCode, old.headers.location]).toEqual([303, '/console/checkins']);
    const refused = await admin.submit('/console/checkins', '/console/checkins/settings', {
      weekday: '1',
      hour: '10',
      timeZone: 'Atlantis',
      reminderWeekday: '',
      reasons: '',
      flagWords: '',
    });
    expect(refused.statusCode).toBe(400);
    expect(refused.body).toContain('&#39;timeZone&#39; must be an IANA time zone such as Europe/Paris.');
  });

  it("previews the round's mail with its own words, and sends a test mail to the member whose link says it is a test", async () => {
    const page = await admin.get('/console/checkins');
    const text = mailText('Acme', '[their personal link]', '2026-11-23', 'Europe/Paris')
      .replace(/&/g, '&amp;')
      .replace(/</g, '&lt;')
      .replace(/>/g, '&gt;')
      .replace(/"/g, '&quot;')
      .replace(/'/g, '&#39;');
    expect(page.body).toContain(`<pre class="wrap" aria-label="Preview of the mail">${text}</pre>`);
    expect(page.body).toContain(`Subject: <q>${subjectOf('first', 'Acme')}</q>`);
    expect(page.body).toContain('Reasons offered (optional): workload, team.');
    const sent = await admin.submit('/console/checkins', '/console/checkins/test-mail', {});
    expect(sent.statusCode).toBe(200);
    expect(sent.body).toContain('A test mail went to hr@acme.test. Its link opens a page that says it is a test.');
    expect(inbox.map((m) => m.to)).toEqual([['hr@acme.test']]);
    expect(inbox[0].raw).toContain('Subject: [Test] How was your week? (Acme)');
    expect(inbox[0].raw).toContain('http://127.0.0.1:3000/console/checkins/test-link');
    expect(inbox[0].raw).not.toContain('/checkin/o/');
    const opened = await admin.get('/console/checkins/test-link');
    expect(opened.statusCode).toBe(200);
    expect(opened.body).toContain('<h1>This is a test link</h1>');
    const audit = await t.db.query<{ action: string }>(
      sql('t.audit', `SELECT action FROM audit_events WHERE org_id = $1 AND action LIKE 'checkin_%' ORDER BY created_at, action`),
      [ORG],
    );
    expect(audit.map((a) => a.action)).toEqual(['checkin_mail.tested', 'checkin_settings.updated', 'checkin_settings.updated']);
    inbox.length = 0;
  });

  it("sends this week's round now after a confirmation that says to how many, once; the job mails it; its status counts per round", async () => {
    await replaceRoster(t.db, ORG, roster, operatorActor(null), NOW);
    const before = await admin.get('/console/checkins');
    expect(before.body).toContain('has not started. By its schedule it starts 23 Nov 2026, 10:00 CET, for the 6 people on the roster then.');
    const confirm = await admin.get('/console/checkins/send');
    expect(confirm.statusCode).toBe(200);
    expect(confirm.body).toContain('to the 6 people on the roster now');
    expect(confirm.body).toContain('<button type="submit">Send to 6 people</button>');
    admin.followChanges = false;
    const sent = await admin.post('/console/checkins/send', { _csrf: ConsoleClient.token(confirm.body) });
    admin.followChanges = true;
    expect(sent.statusCode).toBe(303);
    expect(sent.headers.location).toBe('/console/checkins');
    const after = await admin.get('/console/checkins');
    expect(after.body).toContain('This week&#39;s round started: 6 mails go out within a minute.');
    expect(after.body).toContain('This week&#39;s round (week of 2026-11-23) started 23 Nov 2026, 09:00 CET.');
    expect(after.body).toContain('<td>2026-11-23</td><td>23 Nov 2026, 09:00 CET</td><td>6</td><td>0 mails sent, 6 waiting</td>');
    const again = await admin.submit('/console/checkins', '/console/checkins/send', {});
    expect(again.statusCode).toBe(409);
    expect(again.body).toContain('This week&#39;s round started already, at 2026-11-23T08:00:00.000Z: it is not started twice.');
    const [audited] = await t.db.query<{ details: unknown }>(
      sql('t.started', `SELECT details FROM audit_events WHERE org_id = $1 AND action = 'checkin_round.started'`),
      [ORG],
    );
    expect(audited.details).toEqual({ people: 6 });

    // The job, a minute later and before the round's hour: the relay refuses one address, and says it.
    const refuse = async (m: { to: string }) => {
      if (m.to === 'w3@acme.test') throw new Error(`550 5.1.1 <${m.to}>: Recipient address rejected: User unknown in virtual mailbox table`);
    };
    expect(
      await runRounds(t.db, { linkFor: (o, k) => `http://x/checkin/o/${o}#${k}`, send: refuse, inFlight: 2 }, new Date('2026-11-23T08:01:00.000Z')),
    ).toEqual({
      mailed: 5,
      reminded: 0,
      failed: 1,
    });
    const [status] = await roundStatuses(t.db, ORG, new Date('2026-11-23T08:02:00.000Z'));
    expect(status).toEqual({
      week: '2026-11-23',
      startedAt: '2026-11-23T08:00:00.000Z',
      delivery: 'mail',
      people: 6,
      mailed: 5,
      waiting: 0,
      failed: 1,
      reminded: 0,
      remindersWaiting: 6,
      reminderDue: '2026-11-26T09:00:00.000Z',
      lastError: '550 5.1.1 <[address]>: Recipient address rejected: User unknown in virtual mailbox table',
      lastErrorAt: '2026-11-23T08:01:00.000Z',
      closesAt: '2026-12-03T00:00:00.000Z',
      open: true,
    });
    const page = await viewer.get('/console/checkins');
    expect(page.body).toContain('<td>5 mails sent, 1 failed</td><td>due 26 Nov 2026, 10:00 CET (6 people)</td><td>3 Dec 2026, 01:00 CET</td>');
    expect(page.body).toContain(
      'the mail relay refused 1 mail, tried again every minute until the links close. Its last reason (23 Nov 2026, 09:01 CET): <q class="wrap">550 5.1.1 &lt;[address]&gt;: Recipient address rejected: User unknown in virtual mailbox table</q>',
    );
    expect(page.body).not.toContain('w3@acme.test');
    // The relay takes it at the next run: no longer failed; the round is not started again at its hour.
    expect(await runRounds(t.db, { linkFor: () => 'x', send: async () => {} }, new Date('2026-11-23T09:00:00.000Z'))).toEqual({
      mailed: 1,
      reminded: 0,
      failed: 0,
    });
    const [later] = await roundStatuses(t.db, ORG, new Date('2026-11-23T09:00:00.000Z'));
    expect([later.mailed, later.waiting, later.failed, later.startedAt]).toEqual([6, 0, 0, '2026-11-23T08:00:00.000Z']);
  });

  it("keeps no address of the relay's reason", () => {
    expect(
      relayReason(new Error("Can't send mail - all recipients were rejected: 550 <a.b+c@x.example> no such user (a.b+c@x.example)"), ['a.b+c@x.example']),
    ).toBe("Can't send mail - all recipients were rejected: 550 <[address]> no such user ([address])");
    expect(relayReason(new Error('550 <postmaster@relay.test> refuses mail for <other@x.test>'))).toBe('550 <[address]> refuses mail for <[address]>');
    expect(relayReason(new Error('connect ECONNREFUSED 127.0.0.1:2525'))).toBe('connect ECONNREFUSED 127.0.0.1:2525');
    expect(relayReason(new Error(`x\u0000y\n${'z'.repeat(600)}`)).length).toBe(500);
    expect(relayReason('nonsense' as unknown)).toBe('nonsense');
  });
});
