import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KEYS, readDataset } from '../fixtures/dataset.js';
import { createTestApp, get, type TestApp } from '../helpers/app.js';
import { sql } from '../../src/db/executor.js';
import { operatorActor } from '../../src/domain/audit.js';
import { createRespondent, deleteRespondent, moveRespondent } from '../../src/domain/checkins/roster.js';
import { updateCheckinSettings } from '../../src/domain/checkins/settings.js';
import { participation, resendCheckinLink, runRounds, type SendMail } from '../../src/domain/checkins/rounds.js';
import { answer, linkToken, openAndIssue } from './helpers.js';

/**
 * Issue 51, the attacks of an organization's own admin and operator, each replayed on the
 * service as it is now (both engines): padding a team, switching flag words within the week,
 * shrinking a team after the mails, a key of one's own, a late answer, a re-sent link. What the
 * admin holds is the API (GET /v1/pulses), the roster and the audit log; what the operator holds
 * is the database.
 */
describe('check-ins that name no one: the admin and the operator', () => {
  let t: TestApp;
  const ORG = 'org_acme';
  let now = new Date('2026-11-23T09:30:00.000Z'); // Monday of the week of 2026-11-23
  const mails: { to: string; subject: string; text: string }[] = [];
  const send: SendMail = async (m) => void mails.push(m);
  const linkFor = (o: string, tok: string) => `http://h/checkin/o/${o}#${tok}`;
  const op = operatorActor();
  const long = new Date('2026-09-01T00:00:00.000Z');
  const linkOf = (to: string) => linkToken(mails.filter((m) => m.to === to).at(-1)!.text)!;
  const q = <T = Record<string, unknown>>(name: string, text: string, params: unknown[] = []) => t.db.query<T>(sql(`t.nno.${name}`, text), params);
  const ids: Record<string, string> = {};

  beforeAll(async () => {
    t = await createTestApp({ dataset: readDataset(), clock: () => now });
    for (let i = 1; i <= 6; i++) ids[`web${i}`] = (await createRespondent(t.db, ORG, { email: `web${i}@acme.test`, team: 'Web' }, op, long)).id;
    for (let i = 1; i <= 5; i++) ids[`ops${i}`] = (await createRespondent(t.db, ORG, { email: `ops${i}@acme.test`, team: 'Night shift' }, op, long)).id;
    await updateCheckinSettings(t.db, ORG, { weekday: 1, hour: 9, timeZone: 'UTC', reminderWeekday: null, flagWords: ['stress'] }, op, long);
    expect(await runRounds(t.db, { linkFor, send }, now)).toEqual({ mailed: 11, reminded: 0, failed: 0 });
  });
  afterAll(async () => t?.close());

  it("the padding attack ties nothing: a move applies from the next round, and then the page's team counts four newcomers and the answer can leave the team out", async () => {
    // During the week, the admin moves web1 into a new team with four addresses of their own.
    await moveRespondent(t.db, ORG, ids.web1, 'Pad', op, now);
    for (let i = 1; i <= 4; i++) await createRespondent(t.db, ORG, { email: `pad${i}@admin.test`, team: 'Pad' }, op, now);
    // This week is fixed: web1's link still answers in Web, and Pad has no key.
    const w1 = await openAndIssue(t.app, ORG, linkOf('web1@acme.test'));
    expect(w1.opened.teamName).toBe('Web');
    expect(w1.opened.team).toEqual({ people: 6, recentJoiners: 0 });
    expect((await answer(t.app, ORG, w1, { level: 4 })).statusCode).toBe(200);
    const keys = (await t.app.inject({ method: 'GET', url: `/checkin/keys/${ORG}` })).json().keys as { teamName: string | null; week: string }[];
    expect(keys.filter((k) => k.week === '2026-11-23' && k.teamName === 'Pad')).toEqual([]);
    const slots = await q<{ name: string | null }>(
      'slots',
      `SELECT tm.name FROM checkin_round_slots s LEFT JOIN teams tm ON tm.org_id = s.org_id AND tm.id = s.team_slot
        WHERE s.org_id = $1 AND s.week = '2026-11-23' ORDER BY tm.name NULLS FIRST`,
      [ORG],
    );
    expect(slots.map((r) => r.name)).toEqual([null, 'Night shift', 'Web']);

    // The next round: Pad has five people, all five joined it in the last four weeks.
    now = new Date('2026-11-30T09:30:00.000Z');
    await runRounds(t.db, { linkFor, send }, now);
    const target = await openAndIssue(t.app, ORG, linkOf('web1@acme.test'));
    expect(target.opened).toMatchObject({ teamName: 'Pad', team: { people: 5, recentJoiners: 5 }, organization: { people: 0 } });
    for (let i = 1; i <= 4; i++) {
      const pad = await openAndIssue(t.app, ORG, linkOf(`pad${i}@admin.test`));
      expect((await answer(t.app, ORG, pad, { level: 1, team: true })).statusCode).toBe(200);
    }
    // The page starts with "Don't attach my team" chosen; the target keeps it.
    expect((await answer(t.app, ORG, target, { level: 2, team: false })).statusCode).toBe(200);
    const pulses = (await get(t.app, '/v1/pulses?from=2026-11-30T00:00:00.000Z&to=2026-12-07T00:00:00.000Z&limit=200', KEYS.acme)).json().items as {
      level: number;
      subteamName: string | null;
    }[];
    // The admin's four in Pad, and no fifth: the target's answer stands without a team.
    expect(pulses.filter((p) => p.subteamName === 'Pad').map((p) => p.level)).toEqual([1, 1, 1, 1]);
    expect(pulses.filter((p) => p.subteamName === null).map((p) => p.level)).toEqual([2]);
    // No row written with it names Pad: it was counted and spent under the organization's key.
    const [padKey, orgKey] = await Promise.all(
      ['Pad', null].map(
        async (name) =>
          (
            await q<{ id: string }>(
              name ?? 'orgkey',
              `SELECT k.id FROM checkin_keys k LEFT JOIN teams tm ON tm.org_id = k.org_id AND tm.id = k.team_slot
                WHERE k.org_id = $1 AND k.week = '2026-11-30' AND coalesce(tm.name, '') = $2`,
              [ORG, name ?? ''],
            )
          )[0]!.id,
      ),
    );
    const spent = await q<{ key_id: string; n: number }>('spent', `SELECT key_id, count(*)::int AS n FROM checkin_spent WHERE org_id = $1 GROUP BY key_id`, [
      ORG,
    ]);
    expect(spent.find((s) => s.key_id === padKey)!.n).toBe(4);
    expect(spent.find((s) => s.key_id === orgKey)!.n).toBe(1);
  });

  it('flag words switched within the week change nothing before the next round', async () => {
    now = new Date('2026-11-30T10:00:00.000Z');
    // The round of 2026-11-30 started with the word "stress"; the admin empties the list, then refills it with another.
    await updateCheckinSettings(t.db, ORG, { flagWords: [] }, op, now);
    const a = await openAndIssue(t.app, ORG, linkOf('ops1@acme.test'));
    expect((await answer(t.app, ORG, a, { level: 3, comment: 'Too much stress this week.' })).statusCode).toBe(200);
    await updateCheckinSettings(t.db, ORG, { flagWords: ['quiet'] }, op, now);
    const b = await openAndIssue(t.app, ORG, linkOf('ops2@acme.test'));
    expect((await answer(t.app, ORG, b, { level: 3, comment: 'A quiet week.' })).statusCode).toBe(200);
    const rows = await q<{ comment: string; moderation_status: string }>(
      'flags',
      `SELECT comment, moderation_status FROM pulses WHERE org_id = $1 AND comment IN ('Too much stress this week.', 'A quiet week.') ORDER BY comment`,
      [ORG],
    );
    expect(rows).toEqual([
      { comment: 'A quiet week.', moderation_status: 'CLEAN' },
      { comment: 'Too much stress this week.', moderation_status: 'FLAGGED' },
    ]);
    // The reasons too: the round's list, whatever the settings say now.
    await updateCheckinSettings(t.db, ORG, { reasons: ['workload'] }, op, now);
    const c = await openAndIssue(t.app, ORG, linkOf('ops3@acme.test'));
    expect(c.opened.reasons).toEqual([]);
    expect((await answer(t.app, ORG, c, { level: 3, reason: 'workload' })).json().error.message).toBe(
      "'reason' must be one of the organization's reasons, or null.",
    );
  });

  it('a team shrunk after the mails keeps its week: the removed keep their links, and the last answer stands among five', async () => {
    for (let i = 1; i <= 4; i++) await deleteRespondent(t.db, ORG, ids[`ops${i}`], op, now);
    const last = await openAndIssue(t.app, ORG, linkOf('ops5@acme.test'));
    expect(last.opened).toMatchObject({ teamName: 'Night shift', team: { people: 5, recentJoiners: 0 } });
    expect((await answer(t.app, ORG, last, { level: 5 })).statusCode).toBe(200);
    // ops4, removed, still answers this week (ops3's token was spent on nothing above: it answers too).
    const removed = await openAndIssue(t.app, ORG, linkOf('ops4@acme.test'));
    expect((await answer(t.app, ORG, removed, { level: 5 })).statusCode).toBe(200);
    const cells = await participation(t.db, ORG, now);
    expect(cells.find((c) => c.week === '2026-11-30' && c.teamName === 'Night shift')).toEqual({
      week: '2026-11-30',
      teamId: expect.any(String),
      teamName: 'Night shift',
      invited: 5,
      opened: 5,
      answered: null, // four of five: fewer than 5
    });
  });

  it('a key of its own: a link moved to a week no round started opens nothing, and no key is published for it', async () => {
    const link = linkOf('web2@acme.test');
    const { createHash } = await import('node:crypto');
    const hash = createHash('sha256').update(link).digest();
    // The operator makes a day that is no round's week a "round" (a row, a Wednesday whose links
    // would still be open) and moves the link to it: no slot, no key.
    await q('fake_round', `INSERT INTO checkin_rounds (org_id, week, started_at) VALUES ($1, '2026-12-02', '2026-12-02T09:00:00Z')`, [ORG]);
    await q('move_link', `UPDATE checkin_round_links SET week = '2026-12-02' WHERE org_id = $1 AND token_hash = $2`, [ORG, hash]);
    const opened = await t.app.inject({ method: 'POST', url: `/checkin/o/${ORG}/open`, payload: { token: link } });
    expect(opened.statusCode).toBe(404);
    const keys = (await t.app.inject({ method: 'GET', url: `/checkin/keys/${ORG}` })).json().keys as { week: string }[];
    expect(keys.filter((k) => k.week === '2026-12-02')).toEqual([]);
    expect((await q<{ n: number }>('fake_keys', `SELECT count(*)::int AS n FROM checkin_keys WHERE org_id = $1 AND week = '2026-12-02'`, [ORG]))[0]!.n).toBe(0);
  });

  it("a late answer belongs to its link's week: dated in its last hour, and the next week's link gives a second pulse in the next week only", async () => {
    now = new Date('2026-12-08T10:15:00.000Z'); // Tuesday of the following week, within the 72 grace hours
    await runRounds(t.db, { linkFor, send }, now);
    const previousLink = (to: string) => linkToken(mails.filter((m) => m.to === to).at(-2)!.text)!;
    const late = await openAndIssue(t.app, ORG, previousLink('web3@acme.test'));
    expect(late.opened.week).toBe('2026-11-30');
    expect((await answer(t.app, ORG, late, { level: 1, comment: 'late one' })).statusCode).toBe(200);
    const next = await openAndIssue(t.app, ORG, linkOf('web3@acme.test'));
    expect(next.opened.week).toBe('2026-12-07');
    expect((await answer(t.app, ORG, next, { level: 1, comment: 'on time' })).statusCode).toBe(200);
    const rows = await q<{ comment: string; created_at: Date }>(
      'late',
      `SELECT comment, created_at FROM pulses WHERE org_id = $1 AND comment IN ('late one', 'on time') ORDER BY comment`,
      [ORG],
    );
    expect(rows.map((r) => [r.comment, new Date(r.created_at).toISOString()])).toEqual([
      ['late one', '2026-12-06T23:00:00.000Z'],
      ['on time', '2026-12-08T10:00:00.000Z'],
    ]);
    // After the grace hours the week's links are closed.
    now = new Date('2026-12-10T00:00:00.000Z');
    const closed = await t.app.inject({ method: 'POST', url: `/checkin/o/${ORG}/open`, payload: { token: previousLink('web4@acme.test') } });
    expect(closed.statusCode).toBe(404);
  });

  it("a re-sent link is one among as many new links as its key has people, the earlier link keeps working, and only people of the week's round get one", async () => {
    now = new Date('2026-12-08T11:00:00.000Z');
    const count = async () =>
      (await q<{ n: number }>('links', `SELECT count(*)::int AS n FROM checkin_round_links WHERE org_id = $1 AND week = '2026-12-07'`, [ORG]))[0]!.n;
    const before = await count();
    const r = await resendCheckinLink(t.db, ORG, ids.web5, { linkFor, mails: true }, op, now);
    expect(r).toEqual({ week: '2026-12-07', link: null });
    // web5 answers in Web, which has 5 people this week (web1 left for Pad): five new links, one handed out.
    expect((await count()) - before).toBe(5);
    expect(await runRounds(t.db, { linkFor, send }, now)).toEqual({ mailed: 1, reminded: 0, failed: 0 });
    const resent = mails.at(-1)!;
    expect(resent.to).toBe('web5@acme.test');
    const earlier = linkToken(mails.filter((m) => m.to === 'web5@acme.test').at(-2)!.text)!;
    for (const link of [earlier, linkToken(resent.text)!]) {
      expect((await t.app.inject({ method: 'POST', url: `/checkin/o/${ORG}/open`, payload: { token: link } })).json().week).toBe('2026-12-07');
    }
    const audit = await q<{ action: string; target_id: string }>(
      'audit',
      `SELECT action, target_id FROM audit_events WHERE org_id = $1 AND action = 'checkin_link.resent'`,
      [ORG],
    );
    expect(audit).toEqual([{ action: 'checkin_link.resent', target_id: ids.web5 }]);
    // Someone added since the round started gets theirs with the next round.
    const newcomer = await createRespondent(t.db, ORG, { email: 'new@acme.test', team: 'Web' }, op, now);
    await expect(resendCheckinLink(t.db, ORG, newcomer.id, { linkFor, mails: true }, op, now)).rejects.toMatchObject({
      statusCode: 409,
      message: "This person is not on this week's round (added since it started, or removed): they get a link from the next round.",
    });
  });
});
