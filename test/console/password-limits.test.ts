import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ApiError } from '../../src/contract/errors.js';
import { loadDataset } from '../../src/domain/dataset.js';
import { acceptInvitation, resolveSession, SIGN_IN_REFUSED, signIn } from '../../src/domain/sessions.js';
import { updatePassword, PASSWORD_REFUSED } from '../../src/domain/passwords.js';
import { inviteMember, memberActor } from '../../src/domain/members.js';
import { operatorActor } from '../../src/domain/audit.js';
import { FairGate } from '../../src/domain/passwords.js';
import { createTestDatabase, DB_KIND, type TestDatabase } from '../helpers/db.js';

/**
 * Issue 41 findings 4, 6 and 7 and issue 43 item 3: every password check is limited and uniform.
 * After the limit a member's email and a stranger's cost the same (nothing written for either);
 * the window slides, so 20 checks cannot pass across a fixed window's edge; the Account page's
 * current-password check spends the same limits; and a flood within every per-address limit does
 * not starve a member's sign-in (a fair gate of scrypt checks per process).
 */
const T0 = new Date('2026-11-20T12:00:00.000Z'); // a fixed 15-minute window of the old code started here
const at = (ms: number) => new Date(T0.getTime() + ms);
const MIN = 60_000;
const OP = operatorActor('192.0.2.200');
const PASSWORD = 'correct horse battery';

let t: TestDatabase;
beforeAll(async () => {
  t = await createTestDatabase();
  await loadDataset(t.db, { organizations: [{ id: 'org_a', name: 'A', plan: 'business', createdAt: T0.toISOString() }] });
  for (const email of ['member@a.example.com', 'edge@a.example.com', 'account@a.example.com', 'busy@a.example.com']) {
    const inv = await inviteMember(t.db, 'org_a', { email, role: 'viewer' }, OP, T0);
    // An hour before: choosing a password spends one of the account's attempts (issue 52, H1).
    await acceptInvitation(t.db, { token: inv.token, password: PASSWORD }, null, at(-60 * MIN));
  }
});
afterAll(() => t?.close());

const answer = (p: Promise<unknown>) =>
  p.then(
    () => 'ok',
    (e: ApiError) => e.message,
  );
const rows = async (table: string) =>
  (await t.db.query<{ n: number }>({ name: `t.n.${table}`, text: `SELECT count(*)::int AS n FROM ${table}` } as never, []))[0].n;
/** A key's attempts since T0 (the acceptances an hour before keep one each, outside every window here). */
const attemptsOf = async (key: string) =>
  (
    await t.db.query<{ n: number }>(
      { name: 't.a', text: `SELECT COALESCE(sum(count), 0)::int AS n FROM console_sign_in_attempts WHERE key = $1 AND window_start >= $2` } as never,
      [key, T0.toISOString()],
    )
  )[0].n;

describe(`password checks limited and uniform (${DB_KIND})`, () => {
  it('a refused sign-in writes nothing more for a member than for an unknown email, limited or not', async () => {
    const audit0 = await rows('audit_events');
    expect(await answer(signIn(t.db, { email: 'member@a.example.com', password: 'wrong password!!' }, '198.51.100.1', T0))).toBe(SIGN_IN_REFUSED);
    expect(await answer(signIn(t.db, { email: 'stranger@a.example.com', password: 'wrong password!!' }, '198.51.100.2', T0))).toBe(SIGN_IN_REFUSED);
    expect(await rows('audit_events')).toBe(audit0);
    // Past the address's limit: ten more wrong checks from one address, then both kinds of email again.
    for (let i = 0; i < 9; i++) await answer(signIn(t.db, { email: `x${i}@a.example.com`, password: 'wrong password!!' }, '198.51.100.1', T0));
    const before = { audit: await rows('audit_events'), attempts: await rows('console_sign_in_attempts') };
    expect(await answer(signIn(t.db, { email: 'member@a.example.com', password: PASSWORD }, '198.51.100.1', T0))).toBe(SIGN_IN_REFUSED);
    expect(await answer(signIn(t.db, { email: 'stranger@a.example.com', password: PASSWORD }, '198.51.100.1', T0))).toBe(SIGN_IN_REFUSED);
    expect({ audit: await rows('audit_events'), attempts: await rows('console_sign_in_attempts') }).toEqual(before);
  });

  it('the window slides: 10 failures just before a fixed window would end keep the account limited 15 minutes from each', async () => {
    const edge = at(14 * MIN + 50_000);
    for (let i = 0; i < 10; i++) {
      expect(await answer(signIn(t.db, { email: 'edge@a.example.com', password: `wrong guess ${i}` }, `203.0.113.${i}`, edge))).toBe(SIGN_IN_REFUSED);
    }
    // 20 s later, past the old window's edge: still refused, the right password too.
    expect(await answer(signIn(t.db, { email: 'edge@a.example.com', password: PASSWORD }, '203.0.113.100', at(15 * MIN + 10_000)))).toBe(SIGN_IN_REFUSED);
    expect(await answer(signIn(t.db, { email: 'edge@a.example.com', password: PASSWORD }, '203.0.113.100', at(29 * MIN + 49_000)))).toBe(SIGN_IN_REFUSED);
    expect(await answer(signIn(t.db, { email: 'edge@a.example.com', password: PASSWORD }, '203.0.113.100', at(29 * MIN + 51_000)))).toBe('ok');
  });

  it("the Account page's current-password check spends the same limits: 10 wrong, then the right one is refused, and sign-in from that address too", async () => {
    const s = await signIn(t.db, { email: 'account@a.example.com', password: PASSWORD }, '198.51.100.50', T0);
    const session = (await resolveSession(t.db, s.cookie, T0))!;
    const actor = memberActor(session.member, '198.51.100.50');
    for (let i = 0; i < 10; i++) {
      expect(await answer(updatePassword(t.db, session, { current: `wrong current ${i}`, next: 'a new passphrase here' }, actor, T0))).toBe(PASSWORD_REFUSED);
    }
    expect(await answer(updatePassword(t.db, session, { current: PASSWORD, next: 'a new passphrase here' }, actor, T0))).toBe(PASSWORD_REFUSED);
    expect(await answer(signIn(t.db, { email: 'busy@a.example.com', password: PASSWORD }, '198.51.100.50', T0))).toBe(SIGN_IN_REFUSED);
    expect(await attemptsOf('account@a.example.com')).toBe(10);
    // The password did not change.
    expect(await answer(signIn(t.db, { email: 'account@a.example.com', password: PASSWORD }, '198.51.100.51', at(16 * MIN)))).toBe('ok');
  });

  it("300 wrong sign-ins from 30 addresses, each within its limit, in flight: a member's right password is answered (issue 43)", async () => {
    const start = at(40 * MIN);
    const flood = Array.from({ length: 300 }, (_, i) =>
      answer(signIn(t.db, { email: `flood${i}@elsewhere.example`, password: 'wrong password!!' }, `10.0.${i % 30}.1`, start)),
    );
    await new Promise((r) => setTimeout(r, 200)); // the flood is queued first
    const mine = await answer(signIn(t.db, { email: 'busy@a.example.com', password: PASSWORD }, '192.0.2.77', start));
    const outcomes = await Promise.all(flood);
    expect(mine).toBe('ok');
    // No membership has the flood's emails: their checks compute nothing and hold no slot (issue 52,
    // M2), so the member waits behind none of them; the order among real checks is tested in
    // test/security/review4-passwords.test.ts.
    expect(new Set(outcomes)).toEqual(new Set([SIGN_IN_REFUSED]));
  }, 180_000);
});

describe('the fair gate', () => {
  it('runs at most `slots` at once, serves waiting keys in turn, and clean ones first', async () => {
    const gate = new FairGate(1, 5_000, 10, 100);
    const order: string[] = [];
    let release!: () => void;
    const first = gate.run('a', () => new Promise<void>((r) => (release = r)));
    const tasks = ['a', 'a', 'a', 'b', 'c'].map((k, i) => gate.run(k, async () => void order.push(`${k}${i}`)));
    expect(gate.load).toEqual({ running: 1, waiting: 5 });
    const clean = gate.run('d', async () => void order.push('d5'), 'first');
    await new Promise((r) => setTimeout(r, 0));
    release();
    await Promise.all([first, clean, ...tasks]);
    expect(order).toEqual(['d5', 'a0', 'b3', 'c4', 'a1', 'a2']);
  });

  it('refuses a key whose queue is full, and a wait past its limit', async () => {
    const gate = new FairGate(1, 50, 1, 100);
    let release!: () => void;
    const first = gate.run('a', () => new Promise<void>((r) => (release = r)));
    await new Promise((r) => setTimeout(r, 0));
    const waits = gate.run('b', async () => 'b');
    expect(await gate.run('b', async () => 'again')).toEqual({ ran: false });
    expect(await waits).toEqual({ ran: false }); // waited 50 ms
    release();
    expect(await first).toEqual({ ran: true, value: undefined });
  });
});
