import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from '../../src/db/executor.js';
import { operatorActor } from '../../src/domain/audit.js';
import { createOrganization } from '../../src/domain/orgs.js';
import { createScimToken } from '../../src/domain/scim.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { GROUP, newUser, NOW, PATCH_OP } from './helpers.js';
import { validateScim } from './validate.js';

/**
 * A property (fast-check): any sequence of SCIM operations (users made, turned off and on,
 * readdressed, deleted; groups made, joined, left, deleted) leaves the roster equal to a plain
 * model of it, and every answer's status is the one the model expects. Each run provisions an
 * organization of its own.
 */
const USERS = 4;
const GROUPS = 3;

type Cmd =
  | { op: 'create'; u: number }
  | { op: 'active'; u: number; active: boolean }
  | { op: 'readdress'; u: number; n: number }
  | { op: 'delete'; u: number }
  | { op: 'group'; g: number }
  | { op: 'join'; g: number; u: number }
  | { op: 'leave'; g: number; u: number }
  | { op: 'ungroup'; g: number };

const u = fc.integer({ min: 0, max: USERS - 1 });
const g = fc.integer({ min: 0, max: GROUPS - 1 });
const cmd: fc.Arbitrary<Cmd> = fc.oneof(
  fc.record({ op: fc.constant('create' as const), u }),
  fc.record({ op: fc.constant('active' as const), u, active: fc.boolean() }),
  fc.record({ op: fc.constant('readdress' as const), u, n: fc.integer({ min: 1, max: 3 }) }),
  fc.record({ op: fc.constant('delete' as const), u }),
  fc.record({ op: fc.constant('group' as const), g }),
  fc.record({ op: fc.constant('join' as const), g, u }),
  fc.record({ op: fc.constant('leave' as const), g, u }),
  fc.record({ op: fc.constant('ungroup' as const), g }),
);

interface ModelUser {
  id: string;
  email: string;
  active: boolean;
  /** The group slot they are in (an inactive user remembers theirs). */
  team: number | null;
}

describe('any sequence of SCIM operations', () => {
  let t: TestApp;
  let run = 0;
  beforeAll(async () => {
    t = await createTestApp({ now: NOW, env: { SCIM_REQUESTS_PER_MINUTE: '1000000' } });
  }, 60_000);
  afterAll(() => t?.close());

  it('leaves the roster equal to the model', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(cmd, { minLength: 1, maxLength: 18 }), async (cmds) => {
        const orgId = `org_model_${run++}`;
        await createOrganization(t.db, { id: orgId, name: 'Model', plan: 'business' }, operatorActor(), NOW);
        const { token } = await createScimToken(t.db, orgId, {}, operatorActor(), NOW);
        const call = async (method: string, path: string, body?: unknown) => {
          const res = await t.app.inject({
            method: method as 'GET',
            url: `/scim/v2${path}`,
            headers: { authorization: `Bearer ${token}`, ...(body ? { 'content-type': 'application/scim+json' } : {}) },
            payload: body ? JSON.stringify(body) : undefined,
          });
          const json = res.body ? (JSON.parse(res.body) as Record<string, unknown>) : {};
          validateScim(method, path, res.statusCode, json);
          return { status: res.statusCode, json };
        };
        const users = new Map<number, ModelUser>();
        const groups = new Map<number, string>();
        const emailOf = (i: number, n = 0) => `u${i}${n ? `.${n}` : ''}@model.test`;
        for (const c of cmds) {
          const user = 'u' in c ? users.get(c.u) : undefined;
          const group = 'g' in c ? groups.get(c.g) : undefined;
          switch (c.op) {
            case 'create': {
              const res = await call('POST', '/Users', newUser(emailOf(c.u)));
              if (user) expect(res.status).toBe(409);
              else {
                expect(res.status).toBe(201);
                users.set(c.u, { id: res.json.id as string, email: emailOf(c.u), active: true, team: null });
              }
              break;
            }
            case 'active': {
              if (!user) break;
              const res = await call('PATCH', `/Users/${user.id}`, {
                schemas: [PATCH_OP],
                Operations: [{ op: 'Replace', path: 'active', value: c.active ? 'True' : 'False' }],
              });
              expect(res.status).toBe(200);
              if (c.active && !user.active && user.team !== null && !groups.has(user.team)) user.team = null;
              user.active = c.active;
              break;
            }
            case 'readdress': {
              if (!user) break;
              const email = emailOf(c.u, c.n);
              const res = await call('PATCH', `/Users/${user.id}`, {
                schemas: [PATCH_OP],
                Operations: [{ op: 'replace', value: { userName: email, emails: [{ value: email, primary: true }] } }],
              });
              expect(res.status).toBe(200);
              user.email = email;
              break;
            }
            case 'delete': {
              if (!user) break;
              expect((await call('DELETE', `/Users/${user.id}`)).status).toBe(204);
              users.delete(c.u);
              break;
            }
            case 'group': {
              const res = await call('POST', '/Groups', { schemas: [GROUP], displayName: `G${c.g}` });
              if (group) expect(res.status).toBe(409);
              else {
                expect(res.status).toBe(201);
                groups.set(c.g, res.json.id as string);
              }
              break;
            }
            case 'join': {
              if (!group || !user) break;
              const res = await call('PATCH', `/Groups/${group}`, {
                schemas: [PATCH_OP],
                Operations: [{ op: 'Add', path: 'members', value: [{ value: user.id }] }],
              });
              expect(res.status).toBe(200);
              if (user.active) user.team = c.g;
              break;
            }
            case 'leave': {
              if (!group || !user) break;
              const res = await call('PATCH', `/Groups/${group}`, {
                schemas: [PATCH_OP],
                Operations: [{ op: 'Remove', path: 'members', value: [{ value: user.id }] }],
              });
              expect(res.status).toBe(200);
              if (user.active && user.team === c.g) user.team = null;
              break;
            }
            case 'ungroup': {
              if (!group) break;
              expect((await call('DELETE', `/Groups/${group}`)).status).toBe(204);
              groups.delete(c.g);
              for (const m of users.values()) if (m.active && m.team === c.g) m.team = null;
              break;
            }
          }
        }
        const roster = await t.db.query<{ id: string; email: string; team: string | null }>(
          sql(
            't.model',
            `SELECT r.id, r.email, t.name AS team FROM respondents r LEFT JOIN teams t ON t.org_id = r.org_id AND t.id = r.team_id WHERE r.org_id = $1 ORDER BY r.id`,
          ),
          [orgId],
        );
        const expected = [...users.values()]
          .filter((m) => m.active)
          .map((m) => ({ id: m.id, email: m.email, team: m.team === null ? null : `G${m.team}` }))
          .sort((a, b) => (a.id < b.id ? -1 : 1));
        expect(roster).toEqual(expected);
        expect((await call('GET', '/Users?count=0')).json.totalResults).toBe(users.size);
        expect((await call('GET', '/Groups?count=0')).json.totalResults).toBe(groups.size);
      }),
      { numRuns: 12, seed: Number(process.env.FC_SEED ?? 56), endOnFailure: true },
    );
  }, 120_000);
});
