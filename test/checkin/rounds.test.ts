import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readDataset } from '../fixtures/dataset.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { operatorActor } from '../../src/domain/audit.js';
import { createRespondent } from '../../src/domain/checkins/roster.js';
import { updateCheckinSettings } from '../../src/domain/checkins/settings.js';
import { CheckinKeys, publishedKeys } from '../../src/domain/checkins/keys.js';
import { runRounds, type SendMail } from '../../src/domain/checkins/rounds.js';
import { reminderTime, roundTime, zonedInstant } from '../../src/domain/checkins/week.js';
import { linkToken } from './helpers.js';
import { sql } from '../../src/db/executor.js';

/** Rounds in the organization's time zone, and the reminder to those who have not opened their link (CONTRACT.md section 12). */
describe('rounds and reminders', () => {
  let t: TestApp;
  const ORG = 'org_acme';
  const mails: { to: string; subject: string; text: string }[] = [];
  const send: SendMail = async (m) => void mails.push(m);
  const run = (at: string) => runRounds(t.db, { linkFor: (o, tok) => `http://h/checkin/o/${o}#${tok}`, send }, new Date(at));

  beforeAll(async () => {
    t = await createTestApp({ dataset: readDataset(), clock: () => new Date('2026-11-26T10:00:00.000Z') });
    for (let i = 1; i <= 6; i++)
      await createRespondent(t.db, ORG, { email: `r${i}@acme.test`, team: 'Web' }, operatorActor(), new Date('2026-11-20T00:00:00Z'));
    // Tuesday 10:00 in Paris (UTC+1 in November) is 09:00 UTC; the reminder on Thursday, same hour.
    await updateCheckinSettings(
      t.db,
      ORG,
      { weekday: 2, hour: 10, timeZone: 'Europe/Paris', reminderWeekday: 4 },
      operatorActor(),
      new Date('2026-11-20T00:00:00Z'),
    );
  });
  afterAll(async () => t?.close());

  it('computes the round in the zone, across a summer-time change too', () => {
    const s = { weekday: 2, hour: 10, timeZone: 'Europe/Paris', reminderWeekday: 4 };
    expect(roundTime('2026-11-23', s).toISOString()).toBe('2026-11-24T09:00:00.000Z');
    expect(reminderTime('2026-11-23', s)!.toISOString()).toBe('2026-11-26T09:00:00.000Z');
    expect(roundTime('2026-06-29', s).toISOString()).toBe('2026-06-30T08:00:00.000Z');
    expect(zonedInstant('2026-03-29', 9, 'Europe/Paris').toISOString()).toBe('2026-03-29T07:00:00.000Z'); // the switch's day
    expect(zonedInstant('2026-11-23', 9, 'Pacific/Auckland').toISOString()).toBe('2026-11-22T20:00:00.000Z');
    expect(reminderTime('2026-11-23', { ...s, reminderWeekday: null })).toBeNull();
  });

  it('sends nothing before the hour, the round at it, and reminds everyone of the round, without a link', async () => {
    expect(await run('2026-11-24T08:59:59.000Z')).toEqual({ mailed: 0, reminded: 0, failed: 0 });
    expect(await run('2026-11-24T09:00:00.000Z')).toEqual({ mailed: 6, reminded: 0, failed: 0 });
    const first = new Map(mails.map((m) => [m.to, linkToken(m.text)!]));
    expect(first.size).toBe(6);
    for (const who of ['r1@acme.test', 'r2@acme.test']) {
      expect((await t.app.inject({ method: 'POST', url: `/checkin/o/${ORG}/open`, payload: { token: first.get(who) } })).statusCode).toBe(200);
    }
    expect(await run('2026-11-26T08:59:00.000Z')).toEqual({ mailed: 0, reminded: 0, failed: 0 });
    // The service cannot know who opened or answered: the reminder goes to all six.
    expect(await run('2026-11-26T09:00:00.000Z')).toEqual({ mailed: 0, reminded: 6, failed: 0 });
    expect(await run('2026-11-26T10:00:00.000Z')).toEqual({ mailed: 0, reminded: 0, failed: 0 });
    const reminders = mails.slice(6);
    expect(reminders.map((m) => m.to).sort()).toEqual(['r1@acme.test', 'r2@acme.test', 'r3@acme.test', 'r4@acme.test', 'r5@acme.test', 'r6@acme.test']);
    expect(reminders[0].subject).toBe('Reminder: How was your week? (Acme)');
    // A reminder carries no link: a second link would let one person answer twice.
    expect(reminders.map((m) => linkToken(m.text))).toEqual([undefined, undefined, undefined, undefined, undefined, undefined]);
    expect(reminders[0].text).toContain('the service cannot know who answered');
    expect(reminders[0].text).toContain('is in the mail "How was your week? (Acme)" of Tuesday 24 November 2026');
    expect((await t.app.inject({ method: 'POST', url: `/checkin/o/${ORG}/open`, payload: { token: first.get('r4@acme.test') } })).statusCode).toBe(200);
    // Nothing waits any more: every row that tied a person to a link is gone.
    expect(await t.db.query(sql('t.rounds.q1', `SELECT id FROM checkin_outbox WHERE org_id = $1`), [ORG])).toEqual([]);
  });

  it('a person added during the week gets their first link with the next round', async () => {
    await createRespondent(t.db, ORG, { email: 'late@acme.test', team: 'Web' }, operatorActor(), new Date('2026-11-26T11:00:00Z'));
    expect(await run('2026-11-26T11:00:00.000Z')).toEqual({ mailed: 0, reminded: 0, failed: 0 });
    expect(mails.filter((m) => m.to === 'late@acme.test')).toEqual([]);
  });

  it("makes the week's keys before its first mail, and a refusal in a group of mails sent at once keeps only the refused for the next run", async () => {
    const at = new Date('2026-12-01T09:00:00.000Z'); // the next week's round, Tuesday 10:00 in Paris
    expect((await publishedKeys(t.db, ORG, at)).filter((k) => k.week === '2026-11-30')).toEqual([]);
    const sentNow: string[] = [];
    const refuseR3: SendMail = async (m) => {
      if (m.to === 'r3@acme.test') throw new Error('mailbox full');
      sentNow.push(m.to);
    };
    const keys = new CheckinKeys('rounds test secret');
    const linkFor = (o: string, tok: string) => `http://h/checkin/o/${o}#${tok}`;
    // All seven mails at once: six go, and only r3's link waits.
    expect(await runRounds(t.db, { linkFor, send: refuseR3, keys, inFlight: 7 }, at)).toEqual({ mailed: 6, reminded: 0, failed: 1 });
    expect(sentNow.sort()).toEqual(['late@acme.test', 'r1@acme.test', 'r2@acme.test', 'r4@acme.test', 'r5@acme.test', 'r6@acme.test']);
    const week = (await publishedKeys(t.db, ORG, at)).filter((k) => k.week === '2026-11-30');
    // The team's key and the organization's (for answers that leave the team out).
    expect(week.map((k) => k.teamName)).toEqual([null, 'Web']);
    expect(await runRounds(t.db, { linkFor, send, keys }, new Date('2026-12-01T09:01:00.000Z'))).toEqual({ mailed: 1, reminded: 0, failed: 0 });
    expect(mails.at(-1)!.to).toBe('r3@acme.test');
    // A later run finds the week's key and makes no second one.
    expect((await publishedKeys(t.db, ORG, at)).filter((k) => k.week === '2026-11-30').map((k) => k.id)).toEqual(week.map((k) => k.id));
  });

  it('a mail sealed by a process that is gone gets a new link, made among as many as its team has people', async () => {
    // A process died before r5's mail went: its seal died with it, so its row cannot be opened by anyone.
    const [row] = await t.db.query<{ id: string }>(
      sql(
        't.rounds.q2',
        `SELECT o.id FROM checkin_outbox o JOIN respondents r ON r.org_id = o.org_id AND r.id = o.respondent_id
        WHERE o.org_id = $1 AND o.kind = 'first' AND r.email = 'r5@acme.test'`,
      ),
      [ORG],
    );
    expect(row).toBeUndefined(); // mailed already above; queue a lost one by hand
    const linkFor = (o: string, tok: string) => `http://h/checkin/o/${o}#${tok}`;
    const [r5] = await t.db.query<{ id: string }>(sql('t.rounds.q3', `SELECT id FROM respondents WHERE org_id = $1 AND email = 'r5@acme.test'`), [ORG]);
    await t.db.query(
      sql(
        't.rounds.q4',
        `INSERT INTO checkin_outbox (org_id, id, week, respondent_id, kind, token_sealed, sealed_by, sealed_until, due_at)
       VALUES ($1, 'obx_lost', '2026-11-30', $2, 'resent', 'AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA', 'gone', '2026-12-01T09:15:00Z', '2026-12-01T09:05:00Z')`,
      ),
      [ORG, r5.id],
    );
    const links = async () =>
      (
        await t.db.query<{ n: number }>(sql('t.rounds.q5', `SELECT count(*)::int AS n FROM checkin_round_links WHERE org_id = $1 AND week = '2026-11-30'`), [
          ORG,
        ])
      )[0].n;
    const before = await links();
    // Before ten minutes the row is the other process's to send; after, it is given a new link.
    expect(await runRounds(t.db, { linkFor, send }, new Date('2026-12-01T09:14:59.000Z'))).toEqual({ mailed: 0, reminded: 0, failed: 0 });
    expect(await runRounds(t.db, { linkFor, send }, new Date('2026-12-01T09:15:01.000Z'))).toEqual({ mailed: 1, reminded: 0, failed: 0 });
    expect(mails.at(-1)!.to).toBe('r5@acme.test');
    expect(await links()).toBe(before + 7); // the team's 7 people of the week: one handed out, six never
    const opened = await t.app.inject({ method: 'POST', url: `/checkin/o/${ORG}/open`, payload: { token: linkToken(mails.at(-1)!.text) } });
    expect(opened.statusCode).toBe(200);
    expect(opened.json().week).toBe('2026-11-30');
  });
});
