import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from '../../src/db/executor.js';
import { operatorActor } from '../../src/domain/audit.js';
import { createRespondent, deleteRespondent, deleteRespondents, moveRespondent, moveRespondents, replaceRoster } from '../../src/domain/checkins/roster.js';
import { runRounds } from '../../src/domain/checkins/rounds.js';
import { smtpMailer } from '../../src/mail/index.js';
import { ConsoleClient } from '../helpers/console-client.js';
import { GROUP, newUser, PATCH_OP, scimTest, type ScimTest } from './helpers.js';

/**
 * One roster, many doors (issue 56, CONTRACT.md section 12 amended): SCIM, the people file, the
 * People page, the operator API and the CLI change the same rows through the same operations,
 * audited alike with SCIM's token as the actor; a person SCIM owns is refused to a hand edit; the
 * file leaves SCIM's people alone; a round's roster is fixed when it starts, whatever the door; the
 * next round mails exactly the active roster, through a real SMTP server.
 */
const MONDAY = new Date('2026-11-23T08:00:00.000Z'); // before the round's hour (Monday 09:00 UTC)

describe('one roster, many doors', () => {
  let t: ScimTest;
  let clock = MONDAY;
  let smtp: SMTPServer;
  const inbox: string[] = [];
  let mailer: ReturnType<typeof smtpMailer>;
  const ids: Record<string, string> = {};

  beforeAll(async () => {
    t = await scimTest({ clock: () => clock, now: MONDAY });
    smtp = new SMTPServer({
      authOptional: true,
      disabledCommands: ['STARTTLS', 'AUTH'],
      onData(stream, session, callback) {
        stream.on('data', () => {});
        stream.on('end', () => {
          inbox.push(...session.envelope.rcptTo.map((r) => r.address));
          callback();
        });
      },
    });
    await new Promise<void>((resolve) => smtp.listen(0, '127.0.0.1', () => resolve()));
    mailer = smtpMailer(`smtp://127.0.0.1:${(smtp.server.address() as AddressInfo).port}`, 'pulse@service.test');
  }, 60_000);
  afterAll(async () => {
    mailer?.close();
    smtp?.close();
    await t?.close();
  });

  const round = (at: Date) => runRounds(t.db, { linkFor: (o, tok) => `http://h/checkin/o/${o}#${tok}`, send: (m) => mailer.send(m) }, at);
  const rows = () =>
    t.db.query<{ email: string; team: string | null; source: string }>(
      sql(
        't.rows',
        `SELECT r.email, t.name AS team, r.source FROM respondents r LEFT JOIN teams t ON t.org_id = r.org_id AND t.id = r.team_id WHERE r.org_id = $1 ORDER BY r.email`,
      ),
      [t.orgId],
    );

  it('SCIM, the file and a hand share the roster; a hand edit of a SCIM person is refused, in the domain and on the People page', async () => {
    for (const n of [1, 2, 3, 4, 5, 6]) ids[`s${n}`] = (await t.scim('POST', '/Users', newUser(`s${n}@acme.test`))).json.id as string;
    const web = await t.scim('POST', '/Groups', { schemas: [GROUP], displayName: 'Web', members: Object.values(ids).map((value) => ({ value })) });
    expect(web.statusCode).toBe(201);
    await createRespondent(t.db, t.orgId, { email: 'hand@acme.test', team: 'Web' }, operatorActor(), MONDAY);
    // The file names a SCIM person in another team and leaves others out: SCIM's people stay as SCIM keeps them.
    const r = await replaceRoster(t.db, t.orgId, 'email,team\nfile@acme.test,Data\ns1@acme.test,Data\n', operatorActor(), MONDAY);
    expect(r).toEqual({ added: 1, removed: 1, moved: 0, unchanged: 1 });
    expect(await rows()).toEqual([
      { email: 'file@acme.test', team: 'Data', source: 'file' },
      ...[1, 2, 3, 4, 5, 6].map((n) => ({ email: `s${n}@acme.test`, team: 'Web', source: 'scim' })),
    ]);

    await expect(moveRespondent(t.db, t.orgId, ids.s1, 'Data', operatorActor(), MONDAY)).rejects.toThrow(
      "This person is kept by the organization's identity provider (SCIM): change them there.",
    );
    await expect(deleteRespondent(t.db, t.orgId, ids.s1, operatorActor(), MONDAY)).rejects.toThrow(/identity provider/);
    // In bulk too: one SCIM person among the chosen refuses the whole change, and nothing moves.
    const hand = (await rows()).length;
    await expect(moveRespondents(t.db, t.orgId, [ids.s2, ids.s1], 'Data', operatorActor(), MONDAY)).rejects.toThrow(/identity provider/);
    await expect(deleteRespondents(t.db, t.orgId, [ids.s2], operatorActor(), MONDAY)).rejects.toThrow(/identity provider/);
    expect((await rows()).length).toBe(hand);
    expect((await rows()).filter((r) => r.team === 'Web')).toHaveLength(6);

    const admin = await ConsoleClient.join(t.app, t.db, t.orgId, 'hr@acme.test', 'admin');
    const page = await admin.get('/console/people');
    expect(page.body).toContain('<th scope="col">From</th>');
    expect(page.body).toContain('<td class="wrap"><bdi>file@acme.test</bdi></td><td><bdi>Data</bdi></td><td>People file</td>');
    expect(page.body).toContain('<td class="wrap"><bdi>s1@acme.test</bdi></td><td><bdi>Web</bdi></td><td>Identity provider</td>');
    expect(page.body).toContain('Kept by your identity provider (SCIM): change this person there.');
    expect(page.body).not.toContain('aria-label="Move s1@acme.test"');
    expect(page.body).toContain('aria-label="Move file@acme.test"');
    const refused = await admin.submit('/console/people', `/console/people/${ids.s1}/move`, { team: 'Data' });
    expect(refused.statusCode).toBe(400);
    expect(refused.body).toContain('kept by the organization&#39;s identity provider (SCIM)');
  });

  it("writes the audit rows a hand's change writes, naming SCIM's token by its prefix", async () => {
    const events = await t.db.query<{ actor_kind: string; actor_label: string; action: string; target_id: string }>(
      sql('t.audit', `SELECT actor_kind, actor_label, action, target_id FROM audit_events WHERE org_id = $1 AND target_id = $2 ORDER BY created_at, action`),
      [t.orgId, ids.s2],
    );
    expect(events.map((e) => [e.actor_kind, e.actor_label, e.action])).toEqual([
      ['key', t.token.slice(0, 14), 'respondent.added'],
      ['key', t.token.slice(0, 14), 'respondent.moved'],
    ]);
    expect(t.token.slice(0, 14)).toMatch(/^cp_scim_[0-9A-Za-z]{6}$/);
  });

  it("fixes a round's roster when it starts, whatever the door, and the next round mails exactly the active roster", async () => {
    clock = new Date('2026-11-23T09:00:00.000Z');
    expect((await round(clock)).mailed).toBe(7);
    expect(inbox.sort()).toEqual(['file@acme.test', ...[1, 2, 3, 4, 5, 6].map((n) => `s${n}@acme.test`)]);
    const slotsOf = (week: string) =>
      t.db.query<{ team_slot: string; respondents: number }>(
        sql('t.slots', `SELECT team_slot, respondents FROM checkin_round_slots WHERE org_id = $1 AND week = $2::date AND respondents > 0 ORDER BY team_slot`),
        [t.orgId, week],
      );
    const before = await slotsOf('2026-11-23');
    // During the week: SCIM turns one off, moves one out of the team, adds one; the file adds one.
    clock = new Date('2026-11-25T12:00:00.000Z');
    await t.scim('PATCH', `/Users/${ids.s6}`, { schemas: [PATCH_OP], Operations: [{ op: 'Replace', path: 'active', value: 'False' }] });
    const webId = ((await t.scim('GET', `/Groups?filter=${encodeURIComponent('displayName eq "Web"')}`)).json.Resources as { id: string }[])[0].id;
    await t.scim('PATCH', `/Groups/${webId}`, { schemas: [PATCH_OP], Operations: [{ op: 'remove', path: `members[value eq "${ids.s5}"]` }] });
    await t.scim('POST', '/Users', newUser('late@acme.test'));
    await replaceRoster(t.db, t.orgId, 'email,team\nfile@acme.test,Data\nfile2@acme.test,Data\n', operatorActor(), clock);
    expect(await slotsOf('2026-11-23')).toEqual(before);
    expect((await round(clock)).mailed).toBe(0);

    inbox.length = 0;
    clock = new Date('2026-11-30T09:00:00.000Z');
    expect((await round(clock)).mailed).toBe(8);
    const active = (
      (await t.scim('GET', `/Users?filter=${encodeURIComponent('active eq true')}&count=1000`)).json.Resources as { emails: { value: string }[] }[]
    ).map((u) => u.emails[0].value);
    expect(inbox.sort()).toEqual(active.sort());
    expect(inbox).not.toContain('s6@acme.test');
    expect(inbox).toEqual([
      'file2@acme.test',
      'file@acme.test',
      'late@acme.test',
      's1@acme.test',
      's2@acme.test',
      's3@acme.test',
      's4@acme.test',
      's5@acme.test',
    ]);
    // Web kept 4 people after SCIM's changes: under 5, the whole round answers under the organization's key.
    expect(await slotsOf('2026-11-30')).toEqual([{ team_slot: '', respondents: 8 }]);
    expect(before).toEqual([
      { team_slot: '', respondents: 1 },
      { team_slot: webId, respondents: 6 },
    ]);
  });
});
