import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Dataset } from '../../src/domain/dataset.js';
import { listAuditEvents, operatorActor } from '../../src/domain/audit.js';
import { createOrgKey } from '../../src/domain/keys.js';
import { createTeam } from '../../src/domain/teams.js';
import { createTestApp, get, type TestApp } from '../helpers/app.js';
import { buildAdminApp } from '../../src/admin/app.js';
import { TOKEN } from '../admin/helpers.js';
import { joinConsole, type ConsoleClient } from '../helpers/console-client.js';
import { api } from '../helpers/openapi.js';

/**
 * Issue 28's pages over HTTP: the overview's figures are GET /stats/daily's; the read marker, the
 * actions and the comments' hide and show go through the API's operations with the API's messages;
 * hiding a comment moves nothing but that comment; a viewer reads every page and changes nothing.
 */
const T0 = new Date('2026-11-20T12:00:00.000Z'); // a Friday: weeks up to 2026-11-09 are released
const W45 = Date.parse('2026-11-02T00:00:00.000Z');
const HOUR = 3_600_000;
const KEY = 'cp_test_pages_one_0123456789abcdef';
const TWIN_KEY = 'cp_test_pages_two_0123456789abcdef';
const HOSTILE = ['<script>alert(1)</script>', '<img src=x onerror=alert(2)>', 'x'.repeat(500), 'right\u202Eleft override', 'mood 😀🎉 fine'];

function org(id: string, key: string): NonNullable<Dataset['organizations']>[number] {
  const pulses = [
    ...Array.from({ length: 7 }, (_, i) => ({
      id: `pg_a${i}`,
      level: 1 + (i % 5),
      reason: null,
      comment: i < HOSTILE.length ? HOSTILE[i] : `team a says ${i}`,
      moderationStatus: 'CLEAN' as const,
      subteamId: 'team_a',
      createdAt: new Date(W45 + 24 * HOUR + i * HOUR).toISOString(),
    })),
    ...Array.from({ length: 6 }, (_, i) => ({
      id: `pg_n${i}`,
      level: 2 + (i % 3),
      reason: null,
      comment: i % 2 === 0 ? `no team says ${i}` : null,
      moderationStatus: 'CLEAN' as const,
      subteamId: null,
      createdAt: new Date(W45 + 2 * 24 * HOUR + i * HOUR).toISOString(),
    })),
    {
      id: 'pg_late',
      level: 4,
      reason: null,
      comment: 'this week',
      moderationStatus: 'CLEAN' as const,
      subteamId: 'team_b',
      createdAt: new Date(T0.getTime() - 30 * HOUR).toISOString(),
    },
  ];
  return {
    id,
    name: `Org ${id}`,
    plan: 'business',
    memberCount: 20,
    createdAt: '2026-01-01T00:00:00.000Z',
    deletedAt: null,
    apiKeys: [{ key, name: 'bi', revoked: false }],
    teams: [
      { id: 'team_a', name: '<b>Team A</b>', createdAt: '2026-01-01T00:00:00.000Z' },
      { id: 'team_b', name: 'Team B', createdAt: '2026-01-01T00:00:00.000Z' },
    ],
    pulses,
    alerts: [
      {
        id: 'al_1',
        type: 'MOOD_DROP',
        message: 'Mood fell <script>alert(3)</script>',
        weekISO: '2026-W45',
        subteamId: 'team_a',
        readAt: null,
        createdAt: '2026-11-10T06:00:00.000Z',
      },
    ],
    actions: [],
  };
}

let t: TestApp;
let admin: ConsoleClient;
let viewer: ConsoleClient;
beforeAll(async () => {
  t = await createTestApp({ now: T0, dataset: { organizations: [org('org_pages', KEY), org('org_pages_twin', TWIN_KEY)] } });
  admin = await joinConsole(t, 'org_pages', 'admin@pages.example.com', 'admin', T0);
  viewer = await joinConsole(t, 'org_pages', 'viewer@pages.example.com', 'viewer', T0);
});
afterAll(() => t?.close());

const cells = (body: string, tableId: string) => {
  const table = new RegExp(`<table id="${tableId}"[\\s\\S]*?</table>`).exec(body)?.[0] ?? '';
  return [...table.matchAll(/<tr><td><time datetime="([^"]*)">[^<]*<\/time>(?:<\/td>)?<td>([^<]*)(?:<\/td>)?<td>([^<]*)(?:<\/td>)?(?:<\/tr>)?/g)].map((m) => ({
    date: m[1],
    count: Number(m[2]),
    avg: Number(m[3]),
  }));
};
const handles = (body: string, what: 'hide' | 'show') =>
  [...body.matchAll(new RegExp(`action="/console/comments/${what}">[\\s\\S]*?name="handle" value="([^"]+)"`, 'g'))].map((m) => m[1]);

describe('the organization pages of the console', () => {
  it("the overview's table is GET /stats/daily for the same range, and each team's figures come from its pulses", async () => {
    const res = await admin.get('/console/overview?from=2026-11-01&to=2026-11-20');
    expect(res.statusCode).toBe(200);
    const daily = await get(t.app, '/v1/stats/daily?from=2026-11-01T00:00:00.000Z&to=2026-11-21T00:00:00.000Z', KEY);
    expect(daily.statusCode).toBe(200);
    expect(cells(res.body, 'days-org')).toEqual(daily.json().days);
    expect(cells(res.body, 'days-org')).toHaveLength(3);
    // Team A (index 0 by name): 7 pulses on 2026-11-03, levels 1,2,3,4,5,1,2.
    expect(cells(res.body, 'days-team-0')).toEqual([{ date: '2026-11-03', count: 7, avg: 2.57 }]);
    // Team B's one pulse is a figure under 5: no day of its chart, no figure in its row, but words.
    expect(res.body).not.toContain('<table id="days-team-1"');
    expect(res.body).toContain('No day of this team had 5 pulses or more in this range.');
    expect(res.body).toContain(`<tr><td><bdi>Team B</bdi></td><td colspan="2">fewer than 5 pulses: counted in the organization&#39;s total only</td>`);
    expect(res.body).toContain('data-chart-for="days-org"');
    expect(res.body).toContain('&lt;b&gt;Team A&lt;/b&gt;');
    expect(res.body).toContain('Mood fell &lt;script&gt;alert(3)&lt;/script&gt;'); // an unread alert
    // More than a year, or further back than a year, is refused with the reason.
    const long = await admin.get('/console/overview?from=2025-11-01&to=2026-11-20');
    expect(long.statusCode).toBe(400);
    expect(long.body).toContain('The overview covers at most 365 days');
    const year = await admin.get('/console/overview?from=2025-11-21&to=2026-11-19');
    expect(year.statusCode).toBe(200);
  });

  it('marking an alert read sets the readAt GET /alerts shows; unread clears it', async () => {
    const read = await admin.submit('/console/alerts', '/console/alerts/al_1/read', {});
    expect(read.statusCode).toBe(200);
    expect((await get(t.app, '/v1/alerts', KEY)).json().items[0].readAt).toBe(T0.toISOString());
    expect(read.body).toContain('Mark unread');
    const unread = await admin.submit('/console/alerts', '/console/alerts/al_1/unread', {});
    expect(unread.statusCode).toBe(200);
    expect((await get(t.app, '/v1/alerts', KEY)).json().items[0].readAt).toBeNull();
    expect((await admin.submit('/console/alerts', '/console/alerts/al_nope/read', {})).statusCode).toBe(404);
  });

  it("actions: created, edited and moved as the API does, refused with the API's status and its reason in words", async () => {
    const short = await admin.submit('/console/actions', '/console/actions', { title: 'x' });
    const apiShort = await api(t.app, KEY).post('/v1/actions', { title: 'x' }, { 'idempotency-key': 'pages-short-title' });
    expect(short.statusCode).toBe(400);
    expect(apiShort.statusCode).toBe(400);
    // The same refusal, in the reader's words (issue 57): chosen by the API's code and the field it names.
    expect(apiShort.json().error.message).toContain("'title'");
    expect(short.body).toContain('<p class="notice error" role="alert">The title must be 2 to 120 characters long.</p>');

    const made = await admin.submit('/console/actions', '/console/actions', { title: 'Retro <on> workload', subteamId: 'team_a', endDate: '2026-12-01' });
    expect(made.statusCode).toBe(200);
    const [action] = (await get(t.app, '/v1/actions', KEY)).json().items;
    expect(action).toMatchObject({
      title: 'Retro <on> workload',
      status: 'active',
      subteamId: 'team_a',
      endDate: '2026-12-01T23:59:59.999Z',
      startDate: T0.toISOString(),
    });
    expect(made.body).toContain('Retro &lt;on&gt; workload');

    const done = await admin.submit('/console/actions', `/console/actions/${action.$id}`, { status: 'done' });
    expect(done.statusCode).toBe(200);
    expect((await get(t.app, '/v1/actions', KEY)).json().items[0].status).toBe('done');
    const jump = await admin.submit('/console/actions', `/console/actions/${action.$id}`, { status: 'cancelled' });
    const apiJump = await api(t.app, KEY).patch(`/v1/actions/${action.$id}`, { status: 'cancelled' });
    expect(jump.statusCode).toBe(409);
    expect(apiJump.statusCode).toBe(409);
    expect(apiJump.json().error.code).toBe('invalid_transition');
    expect(jump.body).toContain('An action that is done cannot become cancelled directly; set it active first.');
    const cleared = await admin.submit('/console/actions', `/console/actions/${action.$id}`, { status: 'active', subteamId: '', endDate: '' });
    expect(cleared.statusCode).toBe(200);
    expect((await get(t.app, '/v1/actions', KEY)).json().items[0]).toMatchObject({
      status: 'active',
      subteamId: null,
      endDate: null,
      title: 'Retro <on> workload',
    });
    const events = await listAuditEvents(t.db, 'org_pages', { limit: 10, action: 'action.updated' });
    // Both at the pinned clock's instant: compared as a set.
    expect(events.items.map((e) => JSON.stringify([e.actor.label, e.details.changed])).sort()).toEqual([
      JSON.stringify(['admin@pages.example.com', ['endDate', 'subteamId', 'status']]),
      JSON.stringify(['admin@pages.example.com', ['status']]),
    ]);
  });

  it('hiding a comment by its handle: it leaves GET /comments, nothing else moves, and showing brings it back', async () => {
    const range = 'from=2026-11-02&to=2026-11-08';
    const read = async () => ({
      comments: (await get(t.app, `/v1/comments?${range}&limit=100`, KEY)).json(),
      pulses: (await get(t.app, '/v1/pulses?from=2026-11-01T00:00:00.000Z&limit=200', KEY)).body,
      stats: (await get(t.app, '/v1/stats', KEY)).body,
      daily: (await get(t.app, '/v1/stats/daily?from=2026-11-01T00:00:00.000Z&to=2026-11-21T00:00:00.000Z', KEY)).body,
      team: (await get(t.app, `/v1/comments?${range}&subteamId=team_a`, KEY)).json(),
    });
    const before = await read();
    const page = await admin.get(`/console/comments?${range}`);
    expect(page.statusCode).toBe(200);
    // The page is the API's answer, in its order, with nothing beside a comment but its handle.
    const shown = [...page.body.matchAll(/<li><bdi>([\s\S]*?)<\/bdi>/g)].map((m) => m[1]);
    expect(shown).toHaveLength(before.comments.items.length);
    expect(page.body).toContain('&lt;script&gt;alert(1)&lt;/script&gt;');
    expect(page.body).not.toContain('<script>alert');
    expect(page.body).not.toMatch(/pg_[an]\d/);
    const hs = handles(page.body, 'hide');
    expect(hs).toHaveLength(before.comments.items.length);
    const i = before.comments.items.findIndex((c: { comment: string }) => c.comment === 'team a says 6');
    const handle = hs[i];
    expect(handle).toMatch(/^20261102[A-Za-z0-9_-]{43}$/);

    const hidden = await admin.submit(`/console/comments?${range}`, '/console/comments/hide', { handle, from: '2026-11-02', to: '2026-11-08' });
    expect(hidden.statusCode).toBe(200);
    expect(hidden.body).toContain('Comment hidden');
    const after = await read();
    expect(after.comments.items).toEqual(before.comments.items.filter((_: unknown, j: number) => j !== i));
    expect({ ...after.comments, items: [] }).toEqual({ ...before.comments, items: [] });
    expect(after.team.items.map((c: { comment: string }) => c.comment)).not.toContain('team a says 6');
    expect(after.team.suppressed).toBe(before.team.suppressed);
    expect(after.pulses).toBe(before.pulses);
    expect(after.stats).toBe(before.stats);
    expect(after.daily).toBe(before.daily);
    // Hidden comments are listed to show them again; the twin organization's answer is untouched.
    expect(handles(hidden.body, 'show')).toEqual([handle]);
    expect((await get(t.app, `/v1/comments?${range}&limit=100`, TWIN_KEY)).json().items).toHaveLength(before.comments.items.length);

    // The audit log names the handle and the member, never a pulse.
    const [event] = (await listAuditEvents(t.db, 'org_pages', { limit: 1, action: 'comment.hidden' })).items;
    expect(event).toMatchObject({
      actor: { kind: 'member', label: 'admin@pages.example.com' },
      target: { kind: 'comment', id: handle },
      address: '192.0.2.10',
    });
    expect(JSON.stringify(event)).not.toMatch(/pg_[an]\d|team a says/);

    const again = await admin.submit(`/console/comments?${range}`, '/console/comments/show', { handle, from: '2026-11-02', to: '2026-11-08' });
    expect(again.statusCode).toBe(200);
    expect((await read()).comments).toEqual(before.comments);
  });

  it('a handle is no pulse id, differs between organizations holding the same pulses, and no API takes it', async () => {
    const range = '/console/comments?from=2026-11-02&to=2026-11-08';
    const mine = handles((await admin.get(range)).body, 'hide');
    const twinAdmin = await joinConsole(t, 'org_pages_twin', 'admin@twin.example.com', 'admin', T0);
    const theirs = handles((await twinAdmin.get(range)).body, 'hide');
    expect(mine.length).toBeGreaterThan(5);
    expect(theirs).toHaveLength(mine.length);
    expect(mine.filter((h) => theirs.includes(h))).toEqual([]);
    // One organization's handle names nothing in the other.
    const foreign = await twinAdmin.submit(range, '/console/comments/hide', { handle: mine[0] });
    expect(foreign.statusCode).toBe(404);
    for (const bad of ['pg_a0', '', '20261102', `20261103${mine[0].slice(8)}`]) {
      expect((await admin.submit(range, '/console/comments/hide', { handle: bad })).statusCode, bad).toBe(404);
    }
    // The operator API moderates by pulse id only: a handle there is an unknown pulse.
    const operator = await buildAdminApp(t.config, { db: t.db, token: TOKEN });
    const op = await operator.inject({
      method: 'PATCH',
      url: `/admin/v1/organizations/org_pages/pulses/${mine[0]}`,
      payload: { moderationStatus: 'FLAGGED' },
      headers: { authorization: `Bearer ${TOKEN}` },
    });
    await operator.close();
    expect(op.statusCode).toBe(404);
    expect(op.json().error.code).toBe('not_found');
  });

  it("a key's creator is named however many keys were made after it (it was read from the newest 100 key events of the audit log)", async () => {
    const made = await admin.submit('/console/keys', '/console/keys', { name: 'creator check', scope: 'read' });
    expect(made.statusCode).toBe(200);
    for (let i = 0; i < 101; i++) await createOrgKey(t.db, 'org_pages', { name: `later ${i}` }, operatorActor(), T0);
    const row = /<tr>\s*<td>creator check<\/td>[\s\S]*?<\/tr>/.exec((await admin.get('/console/keys')).body)?.[0] ?? '';
    expect(row).toContain('<td>admin@pages.example.com</td>');
    // A viewer reads the creator's role, never an email (issue 52, L3: test/console/keys-creator.test.ts).
    const viewerRow = /<tr>\s*<td>creator check<\/td>[\s\S]*?<\/tr>/.exec((await viewer.get('/console/keys')).body)?.[0] ?? '';
    expect(viewerRow).toContain('<td>an admin</td>');
  });

  it('a viewer reads every page and every change is refused on the server', async () => {
    for (const url of ['/console/overview', '/console/alerts', '/console/actions', '/console/comments?from=2026-11-02&to=2026-11-08']) {
      const res = await viewer.get(url);
      expect(res.statusCode, url).toBe(200);
      expect(res.body, url).not.toMatch(/<form method="post" action="\/console\/(alerts|actions|comments)/);
    }
    const handle = handles((await admin.get('/console/comments?from=2026-11-02&to=2026-11-08')).body, 'hide')[0];
    const before = (await listAuditEvents(t.db, 'org_pages', { limit: 100 })).items.length;
    for (const [url, form] of [
      ['/console/alerts/al_1/read', {}],
      ['/console/alerts/al_1/unread', {}],
      ['/console/actions', { title: 'Viewer action' }],
      ['/console/actions/act_whatever', { status: 'done' }],
      ['/console/comments/hide', { handle }],
      ['/console/comments/show', { handle }],
    ] as const) {
      const res = await viewer.submit('/console/overview', url, form);
      expect(res.statusCode, url).toBe(403);
      expect(res.body).toContain('Your role (viewer) cannot do this');
    }
    expect((await listAuditEvents(t.db, 'org_pages', { limit: 100 })).items.length).toBe(before);
  });

  it('beyond 2,000 days of team figures the overview lists the teams with their range figures, and draws the chosen one', async () => {
    for (let i = 1; i <= 4; i++) await createTeam(t.db, 'org_pages', `Zeta ${i}`, operatorActor(), T0);
    const summary = (body: string) =>
      [
        ...(/<table id="teams-summary">[\s\S]*?<\/table>/.exec(body)?.[0] ?? '').matchAll(/<tr><td><bdi>([^<]*)<\/bdi><\/td><td>(\d+)<\/td><td>([^<]*)<\/td>/g),
      ].map((m) => [m[1], Number(m[2]), m[3]]);
    // Six teams over 365 days: 2,190 days of figures.
    const year = await viewer.get('/console/overview?from=2025-11-21&to=2026-11-20');
    expect(year.statusCode).toBe(200);
    expect(summary(year.body)).toEqual([['&lt;b&gt;Team A&lt;/b&gt;', 7, '2.57']]);
    expect(year.body.match(/<td colspan="2">fewer than 5 pulses: counted in the organization&#39;s total only<\/td>/g)).toHaveLength(5);
    expect(year.body).not.toContain('<table id="days-team-');
    expect(year.body).toContain('href="/console/overview?from=2025-11-21&amp;to=2026-11-20&amp;team=team_a#days-team-0-figure"');
    const a = await viewer.get('/console/overview?from=2025-11-21&to=2026-11-20&team=team_a');
    expect(a.statusCode).toBe(200);
    expect(cells(a.body, 'days-team-0')).toEqual([{ date: '2026-11-03', count: 7, avg: 2.57 }]);
    expect(a.body).not.toContain('<table id="days-team-1"');
    expect(cells(a.body, 'days-org')).toEqual(cells(year.body, 'days-org'));
    // Within the bound (six teams over 30 days), every team's chart is on the page.
    const month = await viewer.get('/console/overview?from=2026-10-22&to=2026-11-20');
    expect(cells(month.body, 'days-team-0')).toEqual([{ date: '2026-11-03', count: 7, avg: 2.57 }]);
    expect(month.body).toContain('<figure class="series" id="days-team-5-figure">'); // Zeta 4: no pulses, no table
    const unknown = await viewer.get('/console/overview?team=team_of_another_org');
    expect(unknown.statusCode).toBe(400);
    expect(unknown.body).toContain('names no team of this organization');
  });
});
