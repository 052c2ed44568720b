import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildAdminApp } from '../../src/admin/app.js';
import { listAuditEvents, operatorActor } from '../../src/domain/audit.js';
import type { Dataset } from '../../src/domain/dataset.js';
import { inviteMember, listMembers, replaceManagerTeams, setMemberRoleAndTeams } from '../../src/domain/members.js';
import { createTestApp, get, type TestApp } from '../helpers/app.js';
import { CONSOLE_PASSWORD, ConsoleClient, joinConsole } from '../helpers/console-client.js';
import { expectDocumented } from '../helpers/openapi.js';
import { TOKEN } from '../admin/helpers.js';

/**
 * Managers (issue 53, item 4; CONTRACT.md section 11 amended): a member scoped to teams reads the
 * Overview, alerts, actions and released comments of those teams only, under every threshold of
 * sections 5 and 12, sees no figure of the organization as a whole, and every other page and every
 * change answers them as a viewer's forbidden pages do (403). Owners invite them with their teams
 * (console, operator API), and the role and teams are in the Members page and the audit log.
 */
const T0 = new Date('2026-11-20T12:00:00.000Z'); // a Friday: the week of 2026-11-02 is released
const W45 = Date.parse('2026-11-02T00:00:00.000Z');
const HOUR = 3_600_000;
const KEY = 'cp_test_managers_0123456789abcdef';
const OP = operatorActor('192.0.2.200');

const pulses = (team: string | null, n: number, day: number, say: (i: number) => string | null, level = (i: number) => 1 + (i % 5)) =>
  Array.from({ length: n }, (_, i) => ({
    id: `pm_${team ?? 'none'}_${i}`,
    level: level(i),
    reason: null,
    comment: say(i),
    moderationStatus: 'CLEAN' as const,
    subteamId: team,
    createdAt: new Date(W45 + day * 24 * HOUR + i * HOUR).toISOString(),
  }));

const dataset: Dataset = {
  organizations: [
    {
      id: 'org_mgr',
      name: 'Managed Org',
      plan: 'business',
      memberCount: 40,
      createdAt: '2026-01-01T00:00:00.000Z',
      deletedAt: null,
      apiKeys: [{ key: KEY, name: 'bi', revoked: false }],
      teams: [
        { id: 'team_a', name: '<b>Alpha</b>', createdAt: '2026-01-01T00:00:00.000Z' },
        { id: 'team_b', name: 'Bravo', createdAt: '2026-01-01T00:00:00.000Z' },
        { id: 'team_s', name: 'Small', createdAt: '2026-01-01T00:00:00.000Z' },
      ],
      pulses: [
        ...pulses('team_a', 7, 1, (i) => `alpha says ${i}`),
        ...pulses(
          'team_b',
          6,
          2,
          (i) => `bravo secret ${i}`,
          () => 1,
        ),
        ...pulses(
          'team_s',
          2,
          3,
          (i) => `small one ${i}`,
          () => 5,
        ),
        ...pulses(null, 5, 4, (i) => `nobody team ${i}`),
      ],
      alerts: [
        {
          id: 'al_a',
          type: 'LOW_MOOD',
          message: 'Alpha alert text',
          weekISO: '2026-W45',
          subteamId: 'team_a',
          readAt: null,
          createdAt: '2026-11-10T06:00:00.000Z',
        },
        {
          id: 'al_b',
          type: 'LOW_MOOD',
          message: 'Bravo alert text',
          weekISO: '2026-W45',
          subteamId: 'team_b',
          readAt: null,
          createdAt: '2026-11-10T06:01:00.000Z',
        },
        {
          id: 'al_o',
          type: 'LOW_MOOD',
          message: 'Organization alert text',
          weekISO: '2026-W45',
          subteamId: null,
          readAt: null,
          createdAt: '2026-11-10T06:02:00.000Z',
        },
      ],
      actions: [
        {
          id: 'act_a',
          title: 'Alpha action',
          status: 'active',
          subteamId: 'team_a',
          startDate: '2026-11-11T09:00:00.000Z',
          createdAt: '2026-11-11T09:00:00.000Z',
        },
        {
          id: 'act_b',
          title: 'Bravo action',
          status: 'active',
          subteamId: 'team_b',
          startDate: '2026-11-11T10:00:00.000Z',
          createdAt: '2026-11-11T10:00:00.000Z',
        },
        {
          id: 'act_o',
          title: 'Company action',
          status: 'active',
          subteamId: null,
          startDate: '2026-11-11T11:00:00.000Z',
          createdAt: '2026-11-11T11:00:00.000Z',
        },
      ],
    },
  ],
};

/** A manager of `teams`, invited by the operator, who accepts and is signed in. */
async function joinAsManager(email: string, teams: string[]): Promise<ConsoleClient> {
  const inv = await inviteMember(t.db, 'org_mgr', { email, role: 'manager', teams }, OP, T0);
  const c = new ConsoleClient(t.app);
  const res = await c.submit(`/console/invitations/${inv.token}`, `/console/invitations/${inv.token}`, { password: CONSOLE_PASSWORD });
  expect(res.statusCode).toBe(303);
  return c;
}

let t: TestApp;
let owner: ConsoleClient;
let viewer: ConsoleClient;
let alpha: ConsoleClient;
let small: ConsoleClient;
beforeAll(async () => {
  t = await createTestApp({ now: T0, dataset });
  owner = await joinConsole(t, 'org_mgr', 'owner@mgr.example.com', 'owner', T0);
  viewer = await joinConsole(t, 'org_mgr', 'viewer@mgr.example.com', 'viewer', T0);
  alpha = await joinAsManager('alpha.lead@mgr.example.com', ['team_a']);
  small = await joinAsManager('small.lead@mgr.example.com', ['team_s']);
});
afterAll(() => t?.close());

/** The audit entries of one action about one address (the clock is pinned: entries share an instant, so never "the newest"). */
const auditOf = async (action: string, email: string) =>
  (await listAuditEvents(t.db, 'org_mgr', { limit: 100, action })).items.filter((e) => e.details.email === email).map((e) => e.details);

const navLinks = (body: string) => [...(/<nav[\s\S]*?<\/nav>/.exec(body)?.[0] ?? '').matchAll(/<a href="([^"]+)"/g)].map((m) => m[1]);
/** What no page of a manager of Alpha may hold: Bravo's and the organization's figures, texts and names. */
const OTHERS = ['Bravo', 'bravo secret', 'Organization alert text', 'Company action', 'nobody team', 'Whole organization', 'days-org', 'For developers'];
const expectNoneOf = (res: LightMyRequestResponse, words = OTHERS) => {
  for (const w of words) expect(res.body, w).not.toContain(w);
};

describe('a manager of one team', () => {
  it("navigation shows only the team's pages and their own account", async () => {
    const res = await alpha.get('/console/overview');
    expect(res.statusCode).toBe(200);
    expect(navLinks(res.body)).toEqual([
      '/console/overview',
      '/console/alerts',
      '/console/actions',
      '/console/comments',
      '/console/account',
      '/console/sessions',
    ]);
  });

  it("the Overview: their team's heatmap, trend and daily chart; no organization figure, never another team's", async () => {
    const res = await alpha.get('/console/overview?from=2026-11-01&to=2026-11-20');
    expect(res.statusCode).toBe(200);
    expectNoneOf(res);
    expect(res.body).toContain('How your teams are doing');
    // The heatmap: Alpha's row only, its week of 7 pulses, no organization row.
    const heat = /<table class="heatmap"[\s\S]*?<\/table>/.exec(res.body)?.[0] ?? '';
    expect([...heat.matchAll(/<th scope="row">([\s\S]*?)<\/th>/g)].map((m) => m[1])).toEqual(['<bdi>&lt;b&gt;Alpha&lt;/b&gt;</bdi>']);
    expect(heat).toContain('<b>2.6</b> 7 pulses');
    // Its trend, one sentence, of its own pulses (last week had none: too few to compare).
    expect(res.body).toContain('<ul id="team-trends"><li><bdi>&lt;b&gt;Alpha&lt;/b&gt;</bdi>: fewer than 5 pulses came last week: too few to compare.');
    expect(res.body).not.toContain('id="change"');
    expect(res.body).not.toContain('id="high-share"');
    // Its daily chart, chosen for them (one team), and its unread alert and open action only.
    expect(res.body).toContain('<table id="days-team-0" data-chart-table>');
    expect(res.body).toContain('Alpha alert text');
    expect(res.body).toContain('Alpha action');
  });

  it('another team of the Overview or the Comments is refused as a forbidden page (403), an unknown one too', async () => {
    for (const url of [
      '/console/overview?team=team_b',
      '/console/overview?team=team_nope',
      '/console/comments?subteamId=team_b',
      '/console/comments?subteamId=team_nope',
    ]) {
      const res = await alpha.get(url);
      expect(res.statusCode, url).toBe(403);
      expect(res.body).toContain('Your role (manager) cannot do this; ask an owner.');
      expectNoneOf(res);
    }
  });

  it("alerts and actions: the team's only, without the controls that change them", async () => {
    const alerts = await alpha.get('/console/alerts');
    expect(alerts.statusCode).toBe(200);
    expect(alerts.body).toContain('Alpha alert text');
    expect(alerts.body).toContain('The newest alerts of the teams you manage');
    expect(alerts.body).not.toContain('Mark read');
    expectNoneOf(alerts);
    const actions = await alpha.get('/console/actions');
    expect(actions.statusCode).toBe(200);
    expect(actions.body).toContain('Alpha action');
    expect(actions.body).not.toContain('Create action');
    expectNoneOf(actions);
  });

  it("comments: the team's released cell, never the organization's answer or another team's", async () => {
    const res = await alpha.get('/console/comments?from=2026-11-02&to=2026-11-08');
    expect(res.statusCode).toBe(200);
    const shown = [...res.body.matchAll(/<li><bdi>([\s\S]*?)<\/bdi>/g)].map((m) => m[1]).sort();
    expect(shown).toEqual(Array.from({ length: 7 }, (_, i) => `alpha says ${i}`));
    // The team select offers their team only, and no "whole organization".
    expect(/<select name="subteamId"[\s\S]*?<\/select>/.exec(res.body)?.[0]).toBe(
      '<select name="subteamId" id="f-team"><option value="team_a" selected>&lt;b&gt;Alpha&lt;/b&gt;</option></select>',
    );
    expect(res.body).not.toContain('action="/console/comments/hide"');
    expectNoneOf(res);
    // The same as GET /v1/comments for that team.
    const api = (await get(t.app, '/v1/comments?from=2026-11-02&to=2026-11-08&subteamId=team_a&limit=100', KEY)).json();
    expect(api.items.map((c: { comment: string }) => c.comment).sort()).toEqual(shown);
  });

  it('every other page and every change is refused with 403, as a viewer is refused, and nothing changes', async () => {
    const pages = ['/console/keys', '/console/webhooks', '/console/people', '/console/checkins', '/console/members', '/console/audit', '/console/audit/export'];
    for (const url of pages) {
      const res = await alpha.get(url);
      expect(res.statusCode, url).toBe(403);
      expect(res.body).toContain('<h1>Not allowed</h1>');
    }
    const token = ConsoleClient.token((await alpha.get('/console/overview')).body);
    const writes: [string, Record<string, string>][] = [
      ['/console/alerts/al_a/read', {}],
      ['/console/actions', { title: 'Manager made this' }],
      ['/console/actions/act_a', { status: 'done' }],
      ['/console/comments/hide', { handle: '20261102x' }],
      ['/console/keys', { name: 'manager key', scope: 'read' }],
      ['/console/webhooks', { url: 'https://hooks.example.com/x' }],
      ['/console/members/invite', { email: 'friend@mgr.example.com', role: 'owner' }],
      ['/console/people', { email: 'p@mgr.example.com', team: 'Bravo' }],
      ['/console/audit/retention', { days: '400' }],
    ];
    for (const [url, form] of writes) {
      const res = await alpha.post(url, { _csrf: token, ...form });
      expect(res.statusCode, url).toBe(403);
      expect(res.body).toContain('Your role (manager) cannot do this; ask an owner.');
    }
    // A viewer's forbidden change answers the same way.
    const viewerToken = ConsoleClient.token((await viewer.get('/console/overview')).body);
    const refused = await viewer.post('/console/actions', { _csrf: viewerToken, title: 'Viewer made this' });
    expect(refused.statusCode).toBe(403);
    expect(refused.body).toContain('Your role (viewer) cannot do this; ask an owner.');
    // Nothing moved.
    expect((await get(t.app, '/v1/alerts', KEY)).json().items.every((a: { readAt: string | null }) => a.readAt === null)).toBe(true);
    const actions = (await get(t.app, '/v1/actions', KEY)).json().items;
    expect(actions.map((a: { title: string; status: string }) => `${a.title}:${a.status}`).sort()).toEqual([
      'Alpha action:active',
      'Bravo action:active',
      'Company action:active',
    ]);
  });

  it('their own account and sessions are theirs to read', async () => {
    for (const url of ['/console/account', '/console/sessions']) expect((await alpha.get(url)).statusCode, url).toBe(200);
  });
});

describe('a manager of a team under 5', () => {
  it('sees no figure of it, and the reason', async () => {
    const res = await small.get('/console/overview?from=2026-11-01&to=2026-11-20');
    expect(res.statusCode).toBe(200);
    const heat = /<table class="heatmap"[\s\S]*?<\/table>/.exec(res.body)?.[0] ?? '';
    expect(heat).toContain('<th scope="row"><bdi>Small</bdi></th>');
    expect(heat).not.toMatch(/<b>\d/);
    expect(heat).toContain('under 5');
    expect(res.body).toContain('A cell of fewer than 5 pulses is hidden');
    expect(res.body).toContain('<td colspan="2">fewer than 5 pulses: counted in the organization&#39;s total only</td>');
    expect(res.body).toContain('Those answers still count in the organization&#39;s total, which only owners, admins and viewers see.');
    expect(res.body).not.toContain('2 pulses');
    expect(res.body).not.toContain('<table id="days-team-0"');
    expectNoneOf(res, [...OTHERS, 'Alpha']);
  });

  it("its comments are withheld (a cell of 2), with the page's reason", async () => {
    const res = await small.get('/console/comments?from=2026-11-02&to=2026-11-08');
    expect(res.statusCode).toBe(200);
    expect(res.body).not.toContain('small one');
    expect(res.body).toContain('No comments in this range.');
    expect(res.body).toContain('yes: some groups of this range have fewer than 5 pulses');
  });
});

describe('owners invite managers, and the role and teams are shown and audited', () => {
  it('the Members page: a manager invited with a team, shown with it; refused without one', async () => {
    const page = await owner.get('/console/members');
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain('<option value="manager">Manager</option>');
    expect(page.body).toContain('<dt>Manager</dt><dd>reads the overview, alerts, actions and comments of the teams you tick below, and nothing else');
    expect(page.body).toContain('<input type="checkbox" name="team:team_a" id="f-team-0">');
    expect(page.body).toContain('<td>alpha.lead@mgr.example.com</td><td>manager of &lt;b&gt;Alpha&lt;/b&gt;</td>');

    const none = await owner.submit('/console/members', '/console/members/invite', { email: 'noteam@mgr.example.com', role: 'manager' });
    expect(none.statusCode).toBe(400);
    expect(none.body).toContain('A manager needs at least one team: the teams whose figures they read.');

    const made = await owner.submit('/console/members', '/console/members/invite', {
      email: 'bravo.lead@mgr.example.com',
      role: 'manager',
      'team:team_b': 'on',
    });
    expect(made.statusCode).toBe(200);
    expect(made.body).toContain('Invitation for bravo.lead@mgr.example.com (manager of Bravo) created.');
    expect(made.body).toMatch(/<tr><td>bravo\.lead@mgr\.example\.com<\/td><td>manager of Bravo<\/td>/);
    expect(await auditOf('member.invited', 'bravo.lead@mgr.example.com')).toEqual([{ email: 'bravo.lead@mgr.example.com', role: 'manager', teams: ['Bravo'] }]);
    // A team ticked for another role is not kept.
    const plain = await owner.submit('/console/members', '/console/members/invite', { email: 'plain@mgr.example.com', role: 'viewer', 'team:team_b': 'on' });
    expect(plain.statusCode).toBe(200);
    expect(plain.body).toContain('Invitation for plain@mgr.example.com (viewer) created.');
  });

  it("changing a manager's teams and role: at once on their pages, in the audit log, and silent when nothing changes", async () => {
    const c = await joinAsManager('mover@mgr.example.com', ['team_a']);
    const id = (await listMembers(t.db, 'org_mgr')).find((m) => m.email === 'mover@mgr.example.com')!.id;
    expect((await c.get('/console/comments?subteamId=team_b')).statusCode).toBe(403);
    const moved = await owner.submit('/console/members', `/console/members/${id}/role`, { role: 'manager', 'team:team_b': 'on' });
    expect(moved.statusCode).toBe(200);
    expect(moved.body).toContain('mover@mgr.example.com is now manager of Bravo.');
    expect((await c.get('/console/comments?subteamId=team_b')).statusCode).toBe(200);
    expect((await c.get('/console/comments?subteamId=team_a')).statusCode).toBe(403);
    expect(await auditOf('member.role_changed', 'mover@mgr.example.com')).toEqual([
      { email: 'mover@mgr.example.com', from: 'manager', to: 'manager', teams: ['Bravo'] },
    ]);
    // The same again (as a sign-in that maps the same groups): no new entry.
    await setMemberRoleAndTeams(t.db, 'org_mgr', id, 'manager', ['team_b'], OP, T0);
    expect(await auditOf('member.role_changed', 'mover@mgr.example.com')).toHaveLength(1);
    // Other roles have no teams; a viewer again reads the whole organization.
    await expect(setMemberRoleAndTeams(t.db, 'org_mgr', id, 'viewer', ['team_b'], OP, T0)).rejects.toThrow(
      "Only a manager has teams; a member with the role 'viewer' reads the whole organization.",
    );
    await expect(setMemberRoleAndTeams(t.db, 'org_mgr', id, 'manager', ['team_nope'], OP, T0)).rejects.toThrow(
      '"team_nope" names no team of this organization.',
    );
    // In a transaction of the caller's (sign-in's mapping): rolled back with it.
    await expect(
      t.db.transaction(async (tx) => {
        await setMemberRoleAndTeams(tx, 'org_mgr', id, 'admin', [], OP, T0);
        throw new Error('the sign-in failed after');
      }),
    ).rejects.toThrow('the sign-in failed after');
    expect((await listMembers(t.db, 'org_mgr')).find((m) => m.id === id)).toMatchObject({ role: 'manager', teams: ['team_b'] });
    // Single sign-on's writer keeps the known teams of a group mapping, and drops the others.
    expect(await t.db.transaction((tx) => replaceManagerTeams(tx, 'org_mgr', id, ['team_gone', 'team_a', 'team_a']))).toEqual(['team_a']);
    expect((await c.get('/console/comments?subteamId=team_a')).statusCode).toBe(200);
    expect((await c.get('/console/comments?subteamId=team_b')).statusCode).toBe(403);
    const viewerAgain = await t.db.transaction((tx) => setMemberRoleAndTeams(tx, 'org_mgr', id, 'viewer', [], OP, T0));
    expect(viewerAgain).toMatchObject({ role: 'viewer', teams: [] });
    const overview = await c.get('/console/overview');
    expect(overview.statusCode).toBe(200);
    expect(overview.body).toContain('days-org');
    expect((await c.get('/console/keys')).statusCode).toBe(200);
  });

  it('the operator API invites a manager with teams, lists them, and changes a role and teams', async () => {
    const operator = await buildAdminApp(t.config, { db: t.db, token: TOKEN });
    try {
      const call = async (method: 'GET' | 'POST' | 'PATCH', url: string, payload?: object) => {
        const res = await operator.inject({ method, url, headers: { authorization: `Bearer ${TOKEN}` }, ...(payload ? { payload } : {}) });
        await expectDocumented(operator, method, url, res);
        return res;
      };
      const base = '/admin/v1/organizations/org_mgr';
      const missing = await call('POST', `${base}/invitations`, { email: 'api.lead@mgr.example.com', role: 'manager' });
      expect(missing.statusCode).toBe(400);
      expect(missing.json().error.message).toBe('A manager needs at least one team: the teams whose figures they read.');
      const made = await call('POST', `${base}/invitations`, { email: 'api.lead@mgr.example.com', role: 'manager', teams: ['team_a', 'team_s'] });
      expect(made.statusCode).toBe(201);
      expect(made.json()).toMatchObject({ email: 'api.lead@mgr.example.com', role: 'manager', teams: ['team_a', 'team_s'] });
      const pending = (await call('GET', `${base}/invitations`)).json().items.find((i: { email: string }) => i.email === 'api.lead@mgr.example.com');
      expect(pending).toMatchObject({ role: 'manager', teams: ['team_a', 'team_s'], invitedBy: null });
      const members = (await call('GET', `${base}/members`)).json().items;
      const lead = members.find((m: { email: string }) => m.email === 'alpha.lead@mgr.example.com');
      expect(lead).toMatchObject({ role: 'manager', teams: ['team_a'] });
      expect(members.find((m: { email: string }) => m.email === 'owner@mgr.example.com')).toMatchObject({ role: 'owner', teams: [] });
      const patched = await call('PATCH', `${base}/members/${lead.id}`, { role: 'manager', teams: ['team_a', 'team_b'] });
      expect(patched.statusCode).toBe(200);
      expect(patched.json()).toMatchObject({ role: 'manager', teams: ['team_a', 'team_b'] });
      const changes = (await listAuditEvents(t.db, 'org_mgr', { limit: 100, action: 'member.role_changed' })).items.filter(
        (e) => e.details.email === 'alpha.lead@mgr.example.com',
      );
      expect(changes.map((e) => e.actor.kind)).toEqual(['operator']);
      expect(changes[0].details).toEqual({ email: 'alpha.lead@mgr.example.com', from: 'manager', to: 'manager', teams: ['<b>Alpha</b>', 'Bravo'] });
      const back = await call('PATCH', `${base}/members/${lead.id}`, { role: 'manager', teams: ['team_a'] });
      expect(back.json().teams).toEqual(['team_a']);
      const stray = await call('PATCH', `${base}/members/${lead.id}`, { role: 'admin', teams: ['team_a'] });
      expect(stray.statusCode).toBe(400);
    } finally {
      await operator.close();
    }
  });
});
