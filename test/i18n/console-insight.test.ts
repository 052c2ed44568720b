import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { operatorActor } from '../../src/domain/audit.js';
import { inviteMember } from '../../src/domain/members.js';
import { PSEUDO_LOCALE } from '../../src/i18n/index.js';
import { CONSOLE_PASSWORD, ConsoleClient } from '../helpers/console-client.js';
import { allowWordsOf, englishLeft, pseudoConsole, type PseudoConsole } from '../helpers/pseudo.js';

/**
 * Issue 57 for the Overview, Alerts, Actions and Comments pages: in the pseudo-locale no word of
 * English is left, for an owner (the organization's figures, the forms, their notices and
 * refusals) and for a manager (their teams only); and a sentence with a plural reads right in
 * German and, right to left, in Arabic.
 */
const NOW = new Date('2026-11-20T12:00:00.000Z');
let p: PseudoConsole;
let owner: ConsoleClient;
let manager: ConsoleClient;
let teams: { id: string; name: string }[];

beforeAll(async () => {
  p = await pseudoConsole(NOW);
  owner = await p.member('owner');
  teams = await p.t.db.query<{ id: string; name: string }>({ name: 'test.insight.teams', text: 'SELECT id, name FROM teams WHERE org_id = $1 ORDER BY name' }, [
    p.orgId,
  ]);
  expect(teams.length).toBeGreaterThan(1);
  // A manager of the first team (pseudoConsole's members are of the other roles).
  const email = 'pseudo.manager@members.example.com';
  allowWordsOf(p.allowed, [email]);
  const inv = await inviteMember(p.t.db, p.orgId, { email, role: 'manager', teams: [teams[0].id] }, operatorActor('192.0.2.200'), NOW);
  manager = new ConsoleClient(p.t.app);
  const joined = await manager.submit(`/console/invitations/${inv.token}`, `/console/invitations/${inv.token}`, { password: CONSOLE_PASSWORD });
  expect(joined.statusCode).toBe(303);
  manager.headers['accept-language'] = PSEUDO_LOCALE;
}, 120_000);
afterAll(() => p?.t.close());

/** A page in the pseudo-locale, with its status and no English left. */
async function pseudoPage(c: ConsoleClient, url: string, status = 200) {
  const res = await c.get(url);
  expect(res.statusCode, url).toBe(status);
  expect(res.body, url).toContain('<html lang="en-XA">');
  expect(englishLeft(res.body, p.allowed), url).toEqual([]);
  return res.body;
}

describe('the insight pages in the pseudo-locale', () => {
  it("an owner's Overview: a week, a month with every team's chart, a year with one team's, and the developers' words", async () => {
    const week = await pseudoPage(owner, '/console/overview?from=2026-11-14&to=2026-11-20');
    expect(week).toContain('id="change"');
    expect(week).toContain('id="heatmap"');
    expect(week).toContain('id="for-developers"');
    // The chart's own words are the catalogue's, for the script to draw.
    expect(week).toMatch(/data-label-level="\[[^"]+\]" data-label-pulses="\[[^"]+\]"/);
    const month = await pseudoPage(owner, '/console/overview?from=2026-10-22&to=2026-11-20');
    expect(month).toContain('id="days-team-0-figure"');
    const year = await pseudoPage(owner, `/console/overview?from=2025-11-21&to=2026-11-20&team=${teams[0].id}`);
    expect(year).toContain('<table id="teams-summary">');
    await pseudoPage(owner, '/console/overview?from=2026-11-01&to=2026-11-20');
  });

  it("the range form's refusals are the catalogue's (the refusal page around them is the error handler's)", async () => {
    for (const url of [
      '/console/overview?from=2025-01-01&to=2026-11-20',
      '/console/overview?from=2026-11-20&to=2026-11-01',
      '/console/overview?from=2026-11-31',
      '/console/overview?team=team_nope',
    ]) {
      const res = await owner.get(url);
      expect(res.statusCode, url).toBe(400);
      const said = /<p class="notice error" role="alert">([^<]*)<\/p>/.exec(res.body)?.[1] ?? '';
      expect(said, url).toMatch(/^\[.+\]$/);
      expect(englishLeft(`<p>${said}</p>`, p.allowed), url).toEqual([]);
    }
  });

  it("an owner's Alerts, Actions and Comments, and every notice and refusal of their forms", async () => {
    const alerts = await pseudoPage(owner, '/console/alerts');
    const line = /action="\/console\/alerts\/([^/]+)\/read">[\s\S]*?(?:name="with" value="([^"]+)")?[\s\S]*?<\/form>/.exec(alerts);
    expect(line, 'an unread alert').not.toBeNull();
    const read = await owner.submit('/console/alerts', `/console/alerts/${line![1]}/read`, line![2] ? { with: line![2] } : {});
    expect(read.statusCode).toBe(200);
    expect(englishLeft(read.body, p.allowed)).toEqual([]);
    const gone = await owner.submit('/console/alerts', '/console/alerts/al_nope/read', {});
    expect(gone.statusCode).toBe(404);
    expect(englishLeft(gone.body, p.allowed)).toEqual([]);

    await pseudoPage(owner, '/console/actions');
    allowWordsOf(p.allowed, ['Pseudo retro']);
    for (const [form, status] of [
      [{ title: 'x' }, 400],
      [{ title: 'Pseudo retro', subteamId: 'team_nope' }, 400],
      [{ title: 'Pseudo retro', endDate: '2020-01-01' }, 400],
      [{ title: 'Pseudo retro' }, 200],
    ] as const) {
      const res = await owner.submit('/console/actions', '/console/actions', form);
      expect(res.statusCode, JSON.stringify(form)).toBe(status);
      expect(englishLeft(res.body, p.allowed), JSON.stringify(form)).toEqual([]);
    }
    const [made] = await p.t.db.query<{ id: string }>(
      { name: 'test.insight.action', text: "SELECT id FROM actions WHERE org_id = $1 AND title = 'Pseudo retro'" },
      [p.orgId],
    );
    for (const [form, status] of [
      [{}, 200],
      [{ status: 'done' }, 200],
      [{ status: 'cancelled' }, 409],
    ] as const) {
      const res = await owner.submit('/console/actions', `/console/actions/${made.id}`, form);
      expect(res.statusCode, JSON.stringify(form)).toBe(status);
      expect(englishLeft(res.body, p.allowed), JSON.stringify(form)).toEqual([]);
    }
    const unknown = await owner.submit('/console/actions', '/console/actions/act_nope', { status: 'done' });
    expect(unknown.statusCode).toBe(404);
    expect(englishLeft(unknown.body, p.allowed)).toEqual([]);

    const range = '/console/comments?from=2026-11-09&to=2026-11-15';
    const comments = await pseudoPage(owner, range);
    const handle = /action="\/console\/comments\/hide">[\s\S]*?name="handle" value="([^"]+)"/.exec(comments)?.[1];
    expect(handle, 'a released comment').toBeDefined();
    for (const [action, status] of [
      ['hide', 200],
      ['hide', 200],
      ['show', 200],
    ] as const) {
      const res = await owner.submit(range, `/console/comments/${action}`, { handle: handle!, from: '2026-11-09', to: '2026-11-15' });
      expect(res.statusCode).toBe(status);
      expect(englishLeft(res.body, p.allowed), action).toEqual([]);
    }
    const none = await owner.submit(range, '/console/comments/hide', { handle: 'not-a-handle' });
    expect(none.statusCode).toBe(404);
    expect(englishLeft(none.body, p.allowed)).toEqual([]);
    await pseudoPage(owner, '/console/comments?from=2026-11-16&to=2026-11-20');
  });

  it("a manager's Overview, Alerts, Actions and Comments: their teams only, in the catalogue's words", async () => {
    const overview = await pseudoPage(manager, '/console/overview?from=2026-11-01&to=2026-11-20');
    expect(overview).toContain('id="team-trends"');
    expect(overview).not.toContain('id="for-developers"');
    await pseudoPage(manager, '/console/overview');
    await pseudoPage(manager, '/console/alerts');
    await pseudoPage(manager, '/console/actions');
    await pseudoPage(manager, '/console/comments?from=2026-11-09&to=2026-11-15');
  });

  it('a viewer reads the same pages, and the words saying what the role may not do', async () => {
    const viewer = await p.member('viewer');
    for (const url of ['/console/overview', '/console/alerts', '/console/actions', '/console/comments']) await pseudoPage(viewer, url);
  });
});

describe('the insight pages in German and Arabic', () => {
  it('German: the participation sentence with its plural, and the heatmap cells', async () => {
    owner.headers['accept-language'] = 'de-DE, de;q=0.9';
    try {
      const res = await owner.get('/console/overview?from=2026-11-01&to=2026-11-20');
      expect(res.body).toContain('<html lang="de">');
      // The demo's last round: 23 people asked (the plural's other form), a percent in German's spacing.
      expect(res.body).toContain('<li>Letzte Woche (ab 9. Nov. 2026): 17 von 23 Personen haben geantwortet (74\u00a0%).</li>');
      expect(res.body).toContain('<td class="h h2"><b>2,1</b> 51 Antworten');
      const comments = await owner.get('/console/comments?from=2026-11-09&to=2026-11-15');
      expect(comments.body).toContain('<label for="f-team">Team</label>');
      expect(comments.body).toContain('<button type="submit">Anzeigen</button>');
    } finally {
      owner.headers['accept-language'] = PSEUDO_LOCALE;
    }
  });

  it('Arabic: right to left, with the plural of the weeks', async () => {
    owner.headers['accept-language'] = 'ar';
    try {
      const res = await owner.get('/console/overview?from=2026-11-01&to=2026-11-20');
      expect(res.body).toContain('<html lang="ar" dir="rtl">');
      expect(res.body).toContain('<h1>نظرة عامة</h1>');
      // The range's four weeks, in Arabic's plural of 3 to 10 (few).
      expect(res.body).toContain('في كل أسبوع من أسابيع الفترة (4 أسابيع)');
      const alerts = await owner.get('/console/alerts');
      expect(alerts.body).toContain('<html lang="ar" dir="rtl">');
      expect(alerts.body).toContain('<h1>التنبيهات</h1>');
    } finally {
      owner.headers['accept-language'] = PSEUDO_LOCALE;
    }
  });
});
