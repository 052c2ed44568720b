/**
 * Issue 52, L3: viewers read members' emails in the API keys page's "creator" column. Members'
 * emails are what only owners may see (CONTRACT.md section 11): a viewer now reads the creator's
 * role ('an admin'), 'a former member', 'the operator', or a key's prefix; owners and admins read
 * the email, as in the audit log.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { operatorActor } from '../../src/domain/audit.js';
import { createOrgKey } from '../../src/domain/keys.js';
import { deleteMember, listMembers } from '../../src/domain/members.js';
import { creatorForViewer } from '../../src/console/pages/keys/view.js';
import { NOW, readDataset } from '../fixtures/dataset.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { joinConsole, type ConsoleClient } from '../helpers/console-client.js';

const ORG = 'org_acme';
const rowOf = (body: string, name: string) => new RegExp(`<tr>\\s*<td>${name}</td>[\\s\\S]*?</tr>`).exec(body)?.[0] ?? '';
/** The creator cell: the fourth cell of a key's row. */
const creatorCell = (row: string) =>
  /<td>(?:[^<]|<code>[^<]*<\/code>)*<\/td><td>(?:[^<]|<code>[^<]*<\/code>)*<\/td><td>[^<]*<\/td><td>([^<]*)<\/td>/.exec(row)?.[1];

describe("issue 52 L3: a viewer reads a key's creator as a role, never an email", () => {
  let t: TestApp;
  let owner: ConsoleClient;
  let admin: ConsoleClient;
  let leaver: ConsoleClient;
  let viewer: ConsoleClient;

  beforeAll(async () => {
    t = await createTestApp({ dataset: readDataset(), now: NOW });
    owner = await joinConsole(t, ORG, 'owner.l3@example.com', 'owner', NOW);
    admin = await joinConsole(t, ORG, 'Admin.L3@example.com', 'admin', NOW);
    leaver = await joinConsole(t, ORG, 'leaver.l3@example.com', 'admin', NOW);
    viewer = await joinConsole(t, ORG, 'viewer.l3@example.com', 'viewer', NOW);
    for (const [client, name] of [
      [owner, 'by-owner'],
      [admin, 'by-admin'],
      [leaver, 'by-leaver'],
    ] as const) {
      expect((await client.submit('/console/keys', '/console/keys', { name, scope: 'read' })).statusCode).toBe(200);
    }
    await createOrgKey(t.db, ORG, { name: 'by-operator' }, operatorActor('192.0.2.1'), NOW);
    const gone = (await listMembers(t.db, ORG)).find((m) => m.email === 'leaver.l3@example.com')!;
    await deleteMember(t.db, ORG, gone.id, operatorActor('192.0.2.1'), NOW);
  }, 60_000);
  afterAll(async () => t?.close());

  it("the viewer reads roles, a former member and the operator, and no member's email anywhere on the page", async () => {
    const page = await viewer.get('/console/keys');
    expect(page.statusCode).toBe(200);
    expect(creatorCell(rowOf(page.body, 'by-owner'))).toBe('an owner');
    expect(creatorCell(rowOf(page.body, 'by-admin'))).toBe('an admin');
    expect(creatorCell(rowOf(page.body, 'by-leaver'))).toBe('a former member');
    expect(creatorCell(rowOf(page.body, 'by-operator'))).toBe('the operator');
    for (const email of ['owner.l3@example.com', 'admin.l3@example.com', 'leaver.l3@example.com']) expect(page.body.toLowerCase()).not.toContain(email);
  });

  it('owners and admins read the email, as in the audit log', async () => {
    for (const client of [owner, admin]) {
      const page = await client.get('/console/keys');
      expect(creatorCell(rowOf(page.body, 'by-owner'))).toBe('owner.l3@example.com');
      expect(creatorCell(rowOf(page.body, 'by-admin'))).toBe('Admin.L3@example.com');
      expect(creatorCell(rowOf(page.body, 'by-leaver'))).toBe('leaver.l3@example.com');
      expect(creatorCell(rowOf(page.body, 'by-operator'))).toBe('operator');
    }
  });

  it('creatorForViewer: every kind of creator', () => {
    const roles = new Map([['a@x.example', 'viewer' as const]]);
    expect(creatorForViewer('A@x.example', roles)).toBe('a viewer');
    expect(creatorForViewer('b@x.example', roles)).toBe('a former member');
    expect(creatorForViewer('operator', roles)).toBe('the operator');
    expect(creatorForViewer('cp_live_ab12', roles)).toBe('cp_live_ab12');
    expect(creatorForViewer(null, roles)).toBeNull();
  });
});
