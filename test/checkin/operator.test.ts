import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readDataset } from '../fixtures/dataset.js';
import { createAdminTest, type AdminTest } from '../admin/helpers.js';

/**
 * The roster, settings, links and participation in the operator API (CONTRACT.md sections 10 and
 * 12): every answer checked against the operator document; changes audited without an address.
 */
describe('check-ins in the operator API', () => {
  let t: AdminTest;
  const ORG = '/admin/v1/organizations/org_acme';
  beforeAll(async () => {
    t = await createAdminTest({ dataset: readDataset(), env: { PUBLIC_BASE_URL: 'https://pulse.example.test' } });
  });
  afterAll(async () => t?.close());

  it('adds, lists with the team rule, moves and removes respondents; refuses a bad email and a duplicate', async () => {
    const a = await t.call('POST', `${ORG}/respondents`, { email: 'ana@acme.test', team: 'Web' });
    expect(a.statusCode, a.body).toBe(201);
    expect(a.json().id).toMatch(/^rsp_[0-9A-Za-z]{16}$/);
    const dup = await t.call('POST', `${ORG}/respondents`, { email: 'ANA@acme.test' });
    expect(dup.statusCode).toBe(400);
    expect(dup.json().error).toEqual({ code: 'invalid_request', message: "'email' is already on the roster." });
    expect((await t.call('POST', `${ORG}/respondents`, { email: 'not an email' })).json().error.message).toBe("'email' must be an email address.");
    const roster = await t.call('GET', `${ORG}/respondents`);
    expect(roster.json()).toMatchObject({
      items: [{ email: 'ana@acme.test', teamId: 'team_web', teamName: 'Web', answersWithTeam: false }],
      teams: [{ id: 'team_web', name: 'Web', respondents: 1, answersAsTeam: false }],
    });
    const moved = await t.call('PATCH', `${ORG}/respondents/${a.json().id}`, { team: 'New team' });
    expect(moved.statusCode).toBe(200);
    const after = (await t.call('GET', `${ORG}/respondents`)).json();
    expect(after.items[0].teamName).toBe('New team');
    expect((await t.call('DELETE', `${ORG}/respondents/${a.json().id}`)).statusCode).toBe(200);
    expect((await t.call('DELETE', `${ORG}/respondents/${a.json().id}`)).statusCode).toBe(404);
    const audit = await t.call('GET', `${ORG}/audit-events?limit=10`);
    const actions = (audit.json().items as { action: string; details: Record<string, unknown> }[]).map((e) => e.action);
    // moved and its team.created share one transaction (one time): their order is the ids'.
    expect([actions[0], ...actions.slice(1, 3).sort(), actions[3]]).toEqual(['respondent.removed', 'respondent.moved', 'team.created', 'respondent.added']);
    expect(JSON.stringify(audit.json())).not.toContain('ana@acme.test');
  });

  it('replaces the roster from CSV checked whole: every bad line named at once, nothing written', async () => {
    const bad = await t.call('POST', `${ORG}/roster`, { csv: 'email,team\na@acme.test,Web\nb@acme.test,Web\nnope,Web\nc@\n' });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().error.message).toBe("2 errors, nothing changed: Line 4: 'email' must be an email address. Line 5: 'email' must be an email address.");
    const dup = await t.call('POST', `${ORG}/roster`, { csv: 'a@acme.test,Web\nA@acme.test,Data\n' });
    expect(dup.json().error.message).toBe('1 error, nothing changed: Line 2: \'email\' "A@acme.test" is already on line 1.');
    expect((await t.call('GET', `${ORG}/respondents`)).json().items).toEqual([]);
    const csv = ['email,team', ...[1, 2, 3, 4, 5].map((i) => `w${i}@acme.test,Web`), 'solo@acme.test,Small', 'none@acme.test,'].join('\n');
    const ok = await t.call('POST', `${ORG}/roster`, { csv });
    expect(ok.json()).toEqual({ added: 7, removed: 0, moved: 0, unchanged: 0 });
    const roster = (await t.call('GET', `${ORG}/respondents`)).json();
    expect(roster.teams.map((x: { name: string; respondents: number; answersAsTeam: boolean }) => [x.name, x.respondents, x.answersAsTeam])).toEqual([
      ['Small', 1, false],
      ['Web', 5, true],
    ]);
  });

  it('settings: defaults, a change, refusals', async () => {
    expect((await t.call('GET', `${ORG}/checkin-settings`)).json()).toEqual({
      weekday: 1,
      hour: 9,
      timeZone: 'UTC',
      reminderWeekday: 4,
      reasons: [],
      flagWords: [],
    });
    const changed = await t.call('PATCH', `${ORG}/checkin-settings`, { weekday: 2, hour: 10, timeZone: 'Europe/Paris', reasons: ['workload'] });
    expect(changed.json()).toEqual({ weekday: 2, hour: 10, timeZone: 'Europe/Paris', reminderWeekday: 4, reasons: ['workload'], flagWords: [] });
    expect((await t.call('PATCH', `${ORG}/checkin-settings`, { timeZone: 'Mars/Olympus' })).json().error.message).toBe(
      "'timeZone' must be an IANA time zone such as Europe/Paris.",
    );
    expect((await t.call('PATCH', `${ORG}/checkin-settings`, { reminderWeekday: 1 })).json().error.message).toBe(
      "'reminderWeekday' must come after 'weekday' in the week, or be null.",
    );
  });

  it("exports the week's links without SMTP: the round's links once, then new links for everyone only when asked, never voiding any; participation from 5", async () => {
    const first = await t.call('POST', `${ORG}/checkin-links`);
    expect(first.statusCode, first.body).toBe(200);
    const body = first.json() as { week: string; renewed: boolean; links: { email: string; team: string | null; link: string }[] };
    expect(body.renewed).toBe(false);
    expect(body.links.map((l) => l.email)).toEqual([
      'none@acme.test',
      'solo@acme.test',
      'w1@acme.test',
      'w2@acme.test',
      'w3@acme.test',
      'w4@acme.test',
      'w5@acme.test',
    ]);
    expect(body.links.every((l) => /^https:\/\/pulse\.example\.test\/checkin\/o\/org_acme#[A-Za-z0-9_-]{32}$/.test(l.link))).toBe(true);
    const token = body.links[2].link.split('#')[1];
    expect((await t.app.inject({ method: 'POST', url: '/checkin/o/org_acme/open', payload: { token } })).statusCode).toBe(200);
    // A second file says what it would do, and does nothing until asked: who opened their link in between cannot show.
    const refused = await t.call('POST', `${ORG}/checkin-links`);
    expect(refused.statusCode).toBe(409);
    expect(refused.json().error).toEqual({
      code: 'invalid_transition',
      message:
        "This week's links were handed out already. A new file makes a new link for each of the 7 people of this week's round; the links of the earlier file keep working, and each team's key still takes no more answers than the team has people. Ask for new links to make them (--new in the CLI, renew=true in the operator API).",
    });
    expect((await t.call('POST', `${ORG}/checkin-links?renew=yes`)).statusCode).toBe(400);
    const second = (await t.call('POST', `${ORG}/checkin-links?renew=true`)).json() as typeof body;
    expect(second.renewed).toBe(true);
    expect(second.links.map((l) => l.email)).toEqual(body.links.map((l) => l.email));
    expect(new Set([...second.links, ...body.links].map((l) => l.link)).size).toBe(14);
    // No link is voided: the first file's unopened link still opens.
    expect((await t.app.inject({ method: 'POST', url: '/checkin/o/org_acme/open', payload: { token: body.links[3].link.split('#')[1] } })).statusCode).toBe(
      200,
    );
    const p = (await t.call('GET', `${ORG}/checkin-participation`)).json();
    expect(p.items).toEqual([
      { week: body.week, teamId: 'team_web', teamName: 'Web', invited: 5, opened: null, answered: null },
      { week: body.week, teamId: null, teamName: null, invited: null, opened: null, answered: null },
    ]);
  });
});

describe("this week's round and its status in the operator API (issue 53)", () => {
  let t: AdminTest;
  const ORG = '/admin/v1/organizations/org_acme';
  beforeAll(async () => {
    t = await createAdminTest({ dataset: readDataset(), env: { SMTP_URL: 'smtp://127.0.0.1:9', MAIL_FROM: 'pulse@service.test' } });
  });
  afterAll(async () => t?.close());

  it('replaces the roster from a file whose columns are named, refusing with every error at once', async () => {
    const csv = 'Name,Work address,Unit\nAna,ana@acme.test,Web\nBob,bob,Web\nCy,cy,Web\n';
    const ask = await t.call('POST', `${ORG}/roster`, { csv });
    expect(ask.statusCode).toBe(400);
    expect(ask.json().error.message).toBe(
      'Say which column holds the email and the team (or \'\' for none): the file\'s columns are "Name", "Work address", "Unit".',
    );
    const bad = await t.call('POST', `${ORG}/roster`, { csv, emailColumn: 'Work address', teamColumn: 'Unit' });
    expect(bad.json().error.message).toBe("2 errors, nothing changed: Line 3: 'email' must be an email address. Line 4: 'email' must be an email address.");
    const ok = await t.call('POST', `${ORG}/roster`, {
      csv: csv.replace('bob,', 'bob@acme.test,').replace('cy,', 'cy@acme.test,'),
      emailColumn: 'Work address',
      teamColumn: '',
    });
    expect(ok.json()).toEqual({ added: 3, removed: 0, moved: 0, unchanged: 0 });
  });

  it("sends this week's round now, once, and reads each round's status", async () => {
    const empty = await t.call('GET', `${ORG}/checkin-rounds`);
    expect(empty.statusCode, empty.body).toBe(200);
    expect(empty.json().thisWeek).toMatchObject({ startedAt: null, people: 3 });
    expect(empty.json().items).toEqual([]);
    const sent = await t.call('POST', `${ORG}/checkin-rounds`);
    expect(sent.statusCode, sent.body).toBe(201);
    expect(sent.json()).toEqual({ week: empty.json().thisWeek.week, people: 3 });
    const again = await t.call('POST', `${ORG}/checkin-rounds`);
    expect(again.statusCode).toBe(409);
    expect(again.json().error.code).toBe('invalid_transition');
    const status = (await t.call('GET', `${ORG}/checkin-rounds`)).json();
    expect(status.thisWeek.startedAt).not.toBeNull();
    expect(status.items).toHaveLength(1);
    expect(status.items[0]).toMatchObject({
      week: sent.json().week,
      delivery: 'mail',
      people: 3,
      mailed: 0,
      waiting: 3,
      failed: 0,
      lastError: null,
      open: true,
    });
    const audit = (await t.call('GET', `${ORG}/audit-events?action=checkin_round.started`)).json();
    expect(audit.items.map((e: { action: string; details: unknown }) => [e.action, e.details])).toEqual([['checkin_round.started', { people: 3 }]]);
  });
});
