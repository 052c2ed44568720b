import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadDataset } from '../../src/domain/dataset.js';
import { updateMemberRole, listMembers, deleteMember } from '../../src/domain/members.js';
import { insertMember } from '../../src/db/repositories/members.js';
import { operatorActor } from '../../src/domain/audit.js';
import { PgExecutor } from '../../src/db/pg.js';
import type { DatabaseExecutor } from '../../src/db/executor.js';
import { createTestDatabase, DB_KIND, type TestDatabase } from '../helpers/db.js';

/**
 * Issue 41, finding 2: an organization keeps at least one owner whatever role changes and removals
 * run at once, decided by the database. On PostgreSQL the two owners' changes go through two
 * separate pools (as two server processes would); on PGlite through the one executor, concurrently.
 */
const T0 = new Date('2026-11-20T12:00:00.000Z');
const OP = operatorActor('192.0.2.200');
const TRIALS = 20;

let t: TestDatabase;
let second: DatabaseExecutor;
beforeAll(async () => {
  t = await createTestDatabase();
  second = DB_KIND === 'postgres' ? new PgExecutor({ connectionString: t.url!, max: 4 }) : t.db;
  const orgs = Array.from({ length: 3 * TRIALS }, (_, i) => ({ id: `org_${i}`, name: `org ${i}`, plan: 'business', createdAt: T0.toISOString() }));
  await loadDataset(t.db, { organizations: orgs });
}, 60_000);
afterAll(async () => {
  if (second !== t.db) await second.close();
  await t?.close();
});

/** Two owners, written as the invitation's acceptance writes them (without its scrypt: 120 members here). */
async function twoOwners(orgId: string) {
  const ids = [`mem_a_${orgId}`, `mem_b_${orgId}`] as const;
  for (const id of ids) await insertMember(t.db, { orgId, id, email: `${id}@example.com`, role: 'owner', passwordHash: 'scrypt$unused', at: T0 });
  return ids;
}

const owners = async (orgId: string) => (await listMembers(t.db, orgId)).filter((m) => m.role === 'owner').length;
const settle = (p: Promise<unknown>) =>
  p.then(
    () => 'done',
    (e: Error) => e.message,
  );

describe(`at least one owner remains under concurrent changes (${DB_KIND})`, () => {
  it(`two owners demoting each other at the same instant, ${TRIALS} trials`, async () => {
    const left: number[] = [];
    for (let i = 0; i < TRIALS; i++) {
      const org = `org_${i}`;
      const [a, b] = await twoOwners(org);
      const outcomes = await Promise.all([settle(updateMemberRole(t.db, org, b, 'admin', OP, T0)), settle(updateMemberRole(second, org, a, 'viewer', OP, T0))]);
      expect(outcomes.filter((o) => o === 'done')).toHaveLength(1);
      left.push(await owners(org));
    }
    expect(left).toEqual(Array(TRIALS).fill(1));
  }, 120_000);

  it(`two owners each demoting themselves at the same instant, ${TRIALS} trials`, async () => {
    const left: number[] = [];
    for (let i = TRIALS; i < 2 * TRIALS; i++) {
      const org = `org_${i}`;
      const [a, b] = await twoOwners(org);
      await Promise.all([settle(updateMemberRole(t.db, org, a, 'admin', OP, T0)), settle(updateMemberRole(second, org, b, 'admin', OP, T0))]);
      left.push(await owners(org));
    }
    expect(left).toEqual(Array(TRIALS).fill(1));
  }, 120_000);

  it(`two owners removing each other at the same instant, ${TRIALS} trials`, async () => {
    const left: number[] = [];
    for (let i = 2 * TRIALS; i < 3 * TRIALS; i++) {
      const org = `org_${i}`;
      const [a, b] = await twoOwners(org);
      const outcomes = await Promise.all([settle(deleteMember(t.db, org, b, OP, T0)), settle(deleteMember(second, org, a, OP, T0))]);
      expect(outcomes.sort()).toEqual(['The last owner of an organization cannot be removed; make another member owner first.', 'done']);
      left.push(await owners(org));
    }
    expect(left).toEqual(Array(TRIALS).fill(1));
  }, 120_000);
});
