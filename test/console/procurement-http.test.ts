import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from '../../src/db/executor.js';
import { listAuditEvents } from '../../src/domain/audit.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { CONSOLE_PASSWORD, ConsoleClient } from '../helpers/console-client.js';
import { parseCsv } from '../helpers/csv.js';

/**
 * Issue 52, item 4 in the console: the audit log exported over a range (a viewer's export without
 * what only owners and admins see, as on the page), the retention an owner sets, and each member's
 * own sessions with "sign out everywhere".
 */
const ORG = 'org_pr';
const OWNER = 'owner@pr.example.com';
const ADMIN = 'admin@pr.example.com';
const VIEWER = 'viewer@pr.example.com';
const CSV_HEADER = ['id', 'createdAt', 'actorKind', 'actorId', 'actorLabel', 'action', 'targetKind', 'targetId', 'address', 'details'];
const today = () => new Date().toISOString().slice(0, 10);

describe('the console: audit export, retention and sessions', () => {
  let t: TestApp;
  let owner: ConsoleClient;
  let admin: ConsoleClient;
  let viewer: ConsoleClient;

  beforeAll(async () => {
    t = await createTestApp({
      dataset: {
        organizations: [
          { id: ORG, name: 'PR', plan: 'business', createdAt: '2026-01-01T00:00:00.000Z' },
          { id: 'org_other', name: 'Other', plan: 'business', createdAt: '2026-01-01T00:00:00.000Z' },
        ],
      },
    });
    owner = await ConsoleClient.join(t.app, t.db, ORG, OWNER, 'owner');
    admin = await ConsoleClient.join(t.app, t.db, ORG, ADMIN, 'admin');
    viewer = await ConsoleClient.join(t.app, t.db, ORG, VIEWER, 'viewer');
    // An owner's change that names an email and an address in the log.
    const invited = await owner.submit('/console/members', '/console/members/invite', { email: 'new.person@pr.example.com', role: 'viewer' });
    expect(invited.statusCode).toBe(200);
  }, 60_000);
  afterAll(() => t?.close());

  describe('audit export', () => {
    it('an admin exports CSV of the chosen days with every column, and the export is recorded', async () => {
      const res = await admin.get(`/console/audit/export?from=${today()}&to=${today()}&format=csv`);
      expect(res.statusCode).toBe(200);
      expect(res.headers['content-type']).toBe('text/csv; charset=utf-8');
      expect(res.headers['content-disposition']).toBe(
        `attachment; filename="audit-log-${today()}-${new Date(Date.parse(today()) + 86_400_000).toISOString().slice(0, 10)}.csv"`,
      );
      expect(res.headers['cache-control']).toBe('no-store');
      expect(res.headers['content-security-policy']).toContain("default-src 'self'");
      const [header, ...rows] = parseCsv(res.body);
      expect(header).toEqual(CSV_HEADER);
      const invited = rows.find((r) => r[2] === 'member' && r[5] === 'member.invited')!;
      expect(invited[4]).toBe(OWNER);
      expect(invited[8]).toBe('192.0.2.10');
      expect(JSON.parse(invited[9])).toMatchObject({ email: 'new.person@pr.example.com', role: 'viewer' });
      const log = await listAuditEvents(t.db, ORG, { limit: 1, action: 'audit_log.exported' });
      expect(log.items[0]).toMatchObject({
        actor: { kind: 'member', label: ADMIN },
        target: { kind: 'audit_log', id: null },
        details: { format: 'csv', from: `${today()}T00:00:00.000Z`, redacted: false },
      });
    });

    it("a viewer's export leaves out members' emails and addresses, as the page does", async () => {
      for (const format of ['csv', 'jsonl']) {
        const res = await viewer.get(`/console/audit/export?format=${format}`);
        expect(res.statusCode).toBe(200);
        expect(res.body, format).not.toContain('@pr.example.com');
        expect(res.body, format).not.toContain('192.0.2.');
        expect(res.body, format).toContain('member.invited');
      }
      const lines = (await viewer.get('/console/audit/export?format=jsonl')).body
        .trimEnd()
        .split('\n')
        .map((l) => JSON.parse(l));
      const invited = lines.find((e) => e.action === 'member.invited' && e.actor.kind === 'member');
      expect(invited.actor).toEqual({ kind: 'member', id: invited.actor.id, label: `a member (${invited.actor.id})` });
      expect(invited.address).toBeNull();
      expect(invited.details).toEqual({ role: 'viewer', invitation: invited.details.invitation });
      // The page shows a viewer the same.
      const page = await viewer.get('/console/audit?action=member.invited');
      expect(page.body).toContain(`<td>a member (<code>${invited.actor.id}</code>)</td><td>Member invited</td>`);
      expect(page.body).not.toContain('new.person@pr.example.com');
      const [recorded] = (await listAuditEvents(t.db, ORG, { limit: 1, action: 'audit_log.exported' })).items;
      expect(recorded).toMatchObject({ actor: { label: VIEWER }, details: { format: 'jsonl', redacted: true } });
    });

    it('refuses a bad date, format or range with the console page and records nothing', async () => {
      const before = (await listAuditEvents(t.db, ORG, { limit: 100, action: 'audit_log.exported' })).items.length;
      for (const [query, message] of [
        ['format=csv&from=2026-02-30', 'From must be a date (YYYY-MM-DD).'],
        ['format=xlsx', '&#39;format&#39; must be jsonl or csv.'],
        ['format=csv&from=2026-05-02&to=2026-05-01', '&#39;from&#39; must be before &#39;to&#39;.'],
      ]) {
        const res = await admin.get(`/console/audit/export?${query}`);
        expect(res.statusCode, query).toBe(400);
        expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
        expect(res.body, query).toContain(message);
      }
      expect((await listAuditEvents(t.db, ORG, { limit: 100, action: 'audit_log.exported' })).items).toHaveLength(before);
      // Signed out: the sign-in page, no file.
      const anonymous = await new ConsoleClient(t.app).get('/console/audit/export?format=csv');
      expect([anonymous.statusCode, anonymous.headers.location]).toEqual([303, '/console/sign-in']);
    });

    it('the page offers the export form to every member', async () => {
      for (const c of [owner, admin, viewer]) {
        const body = (await c.get('/console/audit')).body;
        expect(body).toContain('<form method="get" action="/console/audit/export" class="filters">');
        expect(body).toContain(`<input type="date" name="to" id="x-to" value="${today()}">`);
      }
    });
  });

  describe('retention', () => {
    const retention = () =>
      t.db.query<{ a: number; d: number }>(
        sql('test.pr.retention', `SELECT audit_retention_days AS a, delivery_retention_days AS d FROM organizations WHERE id = $1`),
        [ORG],
      );

    it('an owner sets it; the change is in the log; admins and viewers read it', async () => {
      const page = await owner.submit('/console/audit', '/console/audit/retention', { auditDays: '730', deliveryDays: '14' });
      expect(page.statusCode).toBe(200);
      expect(page.body).toContain('Retention saved: audit entries are kept 730 days, webhook delivery logs 14 days.');
      expect(page.body).toContain('name="auditDays" id="r-audit" required min="30" max="3650" value="730"');
      expect(await retention()).toEqual([{ a: 730, d: 14 }]);
      const [row] = (await listAuditEvents(t.db, ORG, { limit: 1, action: 'retention.updated' })).items;
      expect(row).toMatchObject({
        actor: { kind: 'member', label: OWNER },
        target: { kind: 'organization', id: ORG },
        details: { auditDays: 730, deliveryDays: 14 },
      });
      for (const c of [admin, viewer]) {
        const body = (await c.get('/console/audit')).body;
        expect(body).toContain('Audit entries are kept 730 days, webhook delivery logs 14 days; older ones are deleted. Owners can change this.');
        expect(body).not.toContain('action="/console/audit/retention"');
      }
    });

    it('refuses values out of bounds, and members who are not owners, changing nothing', async () => {
      for (const [form, message] of [
        [{ auditDays: '29', deliveryDays: '14' }, 'The audit log retention must be a whole number of days from 30 to 3650.'],
        [{ auditDays: '365', deliveryDays: '0' }, 'The delivery log retention must be a whole number of days from 1 to 365.'],
        [{ auditDays: 'ten', deliveryDays: '14' }, 'The audit log retention must be a whole number of days from 30 to 3650.'],
      ] as const) {
        const res = await owner.submit('/console/audit', '/console/audit/retention', form);
        expect(res.statusCode, JSON.stringify(form)).toBe(400);
        expect(res.body).toContain(message);
      }
      for (const c of [admin, viewer]) {
        const res = await c.submit('/console/audit', '/console/audit/retention', { auditDays: '40', deliveryDays: '2' });
        expect(res.statusCode).toBe(403);
      }
      expect(await retention()).toEqual([{ a: 730, d: 14 }]);
    });
  });

  describe('sessions', () => {
    const signIn = async (ip: string) => {
      const c = new ConsoleClient(t.app, ip);
      const res = await c.submit('/console/sign-in', '/console/sign-in', { email: ADMIN, password: CONSOLE_PASSWORD });
      expect([res.statusCode, res.headers.location]).toEqual([303, '/console/overview']);
      return c;
    };
    const liveRows = (memberEmail: string) =>
      t.db.query<{ n: number }>(
        sql(
          'test.pr.sessions',
          `SELECT count(*)::int AS n FROM console_sessions s JOIN members m ON m.org_id = s.org_id AND m.id = s.member_id WHERE lower(m.email) = $1`,
        ),
        [memberEmail],
      );

    it("lists the member's own sessions only, the current one marked, with address and times", async () => {
      const laptop = await signIn('198.51.100.20');
      const body = (await laptop.get('/console/sessions')).body;
      expect(body).toContain('<h1>Sessions</h1>');
      const rows = [...body.matchAll(/<tr( class="current")?><td>[^<]+<\/td><td>[^<]+<\/td><td>([^<]+)<\/td><td>([^<]+)<\/td><td>([^<]*)<\/td><\/tr>/g)].map(
        (m) => ({
          current: m[1] !== undefined,
          address: m[2],
          state: m[3],
          mark: m[4],
        }),
      );
      expect(rows).toEqual([
        { current: true, address: '198.51.100.20', state: 'signed in', mark: 'this one' },
        { current: false, address: '192.0.2.10', state: 'signed in', mark: '' },
      ]);
      expect(body).not.toContain(OWNER);
      expect(body).toContain('<button type="submit" class="secondary">Sign out other sessions</button>');
      expect(body).toContain('<button type="submit" class="danger">Sign out everywhere</button>');
      expect(body).toMatch(/<a href="\/console\/sessions" aria-current="page">Sessions<\/a>/);
    });

    it("signing out other sessions ends every other session of the member, keeps this one and the other members'", async () => {
      const phone = await signIn('198.51.100.30');
      expect((await liveRows(ADMIN))[0].n).toBe(3);
      const res = await phone.submit('/console/sessions', '/console/sessions/end-others', {});
      expect(res.statusCode).toBe(200);
      expect(res.body).toContain('Signed out of 2 other sessions.');
      expect((await liveRows(ADMIN))[0].n).toBe(1);
      expect((await phone.get('/console/overview')).statusCode).toBe(200);
      expect((await admin.get('/console/overview')).headers.location).toBe('/console/sign-in');
      expect((await owner.get('/console/overview')).statusCode).toBe(200);
      const [row] = (await listAuditEvents(t.db, ORG, { limit: 1, action: 'member.sessions_ended' })).items;
      expect(row).toMatchObject({ actor: { kind: 'member', label: ADMIN }, address: '198.51.100.30', details: { ended: 2, includingCurrent: false } });
      expect((await phone.get('/console/sessions')).body).toContain('<p>You have no other session.</p>');
    });

    it('signing out everywhere ends every session of the member, this one included', async () => {
      const phone = await signIn('198.51.100.40');
      await signIn('198.51.100.41');
      const res = await phone.submit('/console/sessions', '/console/sessions/end-all', {});
      expect([res.statusCode, res.headers.location]).toEqual([303, '/console/sign-in']);
      expect(res.headers['set-cookie']).toMatch(/^cp_session=; Path=\/console; HttpOnly; SameSite=Strict; Max-Age=0/);
      expect((await liveRows(ADMIN))[0].n).toBe(0);
      expect((await phone.get('/console/sessions')).headers.location).toBe('/console/sign-in');
      const [row] = (await listAuditEvents(t.db, ORG, { limit: 1, action: 'member.sessions_ended' })).items;
      expect(row).toMatchObject({ actor: { label: ADMIN }, details: { ended: 3, includingCurrent: true } });
    });

    it('a change without the form token ends nothing', async () => {
      const c = await signIn('198.51.100.50');
      const res = await c.post('/console/sessions/end-all', {});
      expect(res.statusCode).toBe(403);
      expect((await c.get('/console/overview')).statusCode).toBe(200);
    });
  });
});
