import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ApiError } from '../../src/contract/errors.js';
import { INVITATION_UNUSABLE, inviteMember } from '../../src/domain/members.js';
import { acceptInvitation, signIn, SIGN_IN_REFUSED } from '../../src/domain/sessions.js';
import { addressKey, FairGate, PASSWORD_GATE, SIGN_IN_LIMIT } from '../../src/domain/passwords.js';
import { operatorActor } from '../../src/domain/audit.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { ConsoleClient } from '../helpers/console-client.js';
import { DB_KIND } from '../helpers/db.js';

/**
 * Issue 52, the fourth review: H1 (another organization's password guessed through an invitation
 * link and the Account page), M1 (acceptance's scrypt outside the password gate), M2 (a flood from
 * fresh addresses, one IPv6 /64 of them, got a member's right password refused) and L2 (acceptance
 * slower for an address that is a member elsewhere). Over HTTP where the review's scripts went.
 */
const T0 = new Date('2026-11-20T12:00:00.000Z');
const MIN = 60_000;
const at = (ms: number) => new Date(T0.getTime() + ms);
const OP = operatorActor('192.0.2.200');
const A_SECRET = 'the admin of a secret passphrase';
const ATTACKER_PW = 'what the owner of b chose';

let clock = T0;
let t: TestApp;
beforeAll(async () => {
  t = await createTestApp({
    clock: () => clock,
    dataset: {
      organizations: ['org_a', 'org_b', 'org_c', 'org_d'].map((id) => ({
        id,
        name: `Org ${id.slice(4).toUpperCase()}`,
        plan: 'business',
        createdAt: T0.toISOString(),
      })),
    },
  });
  // A's admin joined an hour ago.
  const inv = await inviteMember(t.db, 'org_a', { email: 'admin@a.example', role: 'admin' }, OP, at(-60 * MIN));
  await acceptInvitation(t.db, { token: inv.token, password: A_SECRET }, '198.51.100.1', at(-60 * MIN));
});
afterAll(() => t?.close());

const answer = (p: Promise<unknown>) =>
  p.then(
    () => 'ok',
    (e: ApiError) => e.message,
  );
const auditOf = async (orgId: string) =>
  t.db.query<{ action: string; details: unknown; address: string | null }>(
    { name: 't.audit', text: `SELECT action, details, address FROM audit_events WHERE org_id = $1 ORDER BY created_at, id` } as never,
    [orgId],
  );
/** The account's attempts in the window that ends at T0. */
const accountAttempts = async (key: string) =>
  (
    await t.db.query<{ n: number }>(
      {
        name: 't.att',
        text: `SELECT COALESCE(sum(count), 0)::int AS n FROM console_sign_in_attempts WHERE scope = 'account' AND key = $1 AND window_start > $2`,
      } as never,
      [key, at(-15 * MIN).toISOString()],
    )
  )[0].n;
/** An answer as the attacker sees it: status, where it leads, the page's words (its form token aside). */
const seen = (res: { statusCode: number; headers: Record<string, unknown>; body: string }) => ({
  status: res.statusCode,
  location: res.headers.location ?? null,
  body: res.body.replace(/name="_csrf" value="[^"]*"/g, 'name="_csrf"'),
});

describe(`H1: another organization's password is never compared, and every choice is limited (${DB_KIND})`, () => {
  it("B's owner invites A's admin twice, accepts the first, guesses through the second link and B's Account page: no answer differs for A's password, and at most the sign-in limit's choices run", async () => {
    clock = T0;
    const first = await inviteMember(t.db, 'org_b', { email: 'Admin@A.example', role: 'owner' }, OP, T0);
    const second = await inviteMember(t.db, 'org_b', { email: 'admin@a.example', role: 'viewer' }, OP, T0);
    const attacker = new ConsoleClient(t.app, '203.0.113.66');
    const joined = await attacker.submit(`/console/invitations/${first.token}`, `/console/invitations/${first.token}`, { password: ATTACKER_PW });
    expect(joined.statusCode).toBe(303);
    expect(joined.headers.location).toBe('/console/overview');
    const auditA = await auditOf('org_a');
    const auditB0 = (await auditOf('org_b')).length;
    const computed = PASSWORD_GATE.computed;

    // The second link: the first well-formed post uses it up (a member of B already), before any
    // password work; every later one, A's password among them, meets a used link.
    const page = await attacker.get(`/console/invitations/${second.token}`);
    const csrf = ConsoleClient.token(page.body);
    const guesses = Array.from({ length: 40 }, (_, i) => (i === 25 ? A_SECRET : `wrong guess number ${i}`));
    const link: ReturnType<typeof seen>[] = [];
    for (const password of guesses) link.push(seen(await attacker.postOnly(`/console/invitations/${second.token}`, { _csrf: csrf, password })));
    expect(link[0]).toMatchObject({ status: 404 });
    expect(link[0].body).toContain('This invitation link is not valid');
    for (const [i, a] of link.entries()) expect(a, `guess ${i}`).toEqual(link[0]);
    expect(PASSWORD_GATE.computed).toBe(computed); // not one scrypt
    const changedB = async () => (await auditOf('org_b')).filter((r) => r.action === 'member.password_changed');
    const changedBefore = (await changedB()).length;
    expect(await auditOf('org_b')).toHaveLength(auditB0); // the link's posts wrote nothing

    // B's Account page: a new password is never compared with A's; each choice spends one of the
    // address's account attempts (A's admin's email), kept: at most SIGN_IN_LIMIT in 15 minutes.
    const changes: ReturnType<typeof seen>[] = [];
    let stopped: ReturnType<typeof seen> | undefined;
    let current = ATTACKER_PW;
    const tries = Array.from({ length: 20 }, (_, i) => (i === 3 || i === 15 ? A_SECRET : `account guess number ${i}`));
    for (const next of tries) {
      if (!attacker.cookies.has('cp_session')) {
        // Signed out by the change: back into B with the password just chosen, naming B.
        const back = await attacker.submit('/console/sign-in', '/console/sign-in', { email: 'admin@a.example', password: current, organization: 'org_b' });
        if (back.statusCode !== 303) {
          stopped = seen(back);
          break;
        }
        expect(back.headers.location).toBe('/console/overview');
      }
      const res = await attacker.submit('/console/account', '/console/account/password', { current, next });
      changes.push(seen(res));
      if (res.statusCode === 303) current = next;
    }
    // The acceptance of the first link was a choice too: with it, no more than the limit.
    expect(changes.map((c) => [c.status, c.body.match(/role="alert">([^<]*)/)?.[1] ?? ''])).toHaveLength(SIGN_IN_LIMIT - 1);
    for (const c of changes) expect(c).toEqual({ status: 303, location: '/console/sign-in', body: '' });
    // Choosing A's password (the 4th) answered as every other choice did; then the limit holds
    // the account, for the attacker's next step as for A's admin.
    expect(changes[3]).toEqual(changes[2]);
    expect(stopped?.status).toBe(401);
    expect(stopped?.body).toContain(SIGN_IN_REFUSED);
    expect(await accountAttempts('admin@a.example')).toBe(SIGN_IN_LIMIT);
    // B's log holds one row per change, alike whatever was chosen; A's log holds nothing of it.
    const newB = await changedB();
    expect(newB).toHaveLength(changedBefore + SIGN_IN_LIMIT - 1);
    for (const r of newB) expect(r).toEqual({ action: 'member.password_changed', details: {}, address: '203.0.113.66' });
    expect(await auditOf('org_a')).toEqual(auditA);
    // A's admin still signs in to A, with A's password, once the window has passed.
    expect((await signIn(t.db, { email: 'admin@a.example', password: A_SECRET, organization: 'org_a' }, '198.51.100.1', at(16 * MIN))).orgId).toBe('org_a');
  }, 120_000);

  it('a malformed form changes nothing; a well-formed post uses the link up whatever follows', async () => {
    clock = T0;
    const inv = await inviteMember(t.db, 'org_c', { email: 'new@c.example', role: 'viewer' }, OP, T0);
    for (const password of [undefined, 'too short', 'x'.repeat(1025)]) {
      expect(await answer(acceptInvitation(t.db, { token: inv.token, password }, '198.51.100.9', T0))).not.toBe('ok');
    }
    expect((await acceptInvitation(t.db, { token: inv.token, password: 'a fine long password' }, '198.51.100.9', T0)).orgId).toBe('org_c');
    // Past the limits (10 failed sign-ins of the address): the well-formed post still uses the link up.
    for (let i = 0; i < SIGN_IN_LIMIT; i++) await answer(signIn(t.db, { email: `nobody${i}@c.example`, password: 'wrong password!!' }, '198.51.100.10', T0));
    const limited = await inviteMember(t.db, 'org_c', { email: 'late@c.example', role: 'viewer' }, OP, T0);
    expect(await answer(acceptInvitation(t.db, { token: limited.token, password: 'a fine long password' }, '198.51.100.10', T0))).toMatch(
      /^Too many password attempts/,
    );
    expect(await answer(acceptInvitation(t.db, { token: limited.token, password: 'a fine long password' }, '198.51.100.11', T0))).toBe(INVITATION_UNUSABLE);
  });
});

describe(`M1 and L2: acceptance runs one scrypt, in the gate, whatever the address (${DB_KIND})`, () => {
  it('30 concurrent posts to one pending link compute one scrypt, in the gate; the others meet a used link', async () => {
    const inv = await inviteMember(t.db, 'org_d', { email: 'race@d.example', role: 'viewer' }, OP, T0);
    const before = PASSWORD_GATE.computed;
    const answers = await Promise.all(
      Array.from({ length: 30 }, (_, i) => answer(acceptInvitation(t.db, { token: inv.token, password: `concurrent password ${i}` }, `192.0.2.${i + 1}`, T0))),
    );
    expect(answers.filter((a) => a === 'ok')).toHaveLength(1);
    expect(answers.filter((a) => a === INVITATION_UNUSABLE)).toHaveLength(29);
    expect(PASSWORD_GATE.computed - before).toBe(1);
  });

  it('an address that is a member elsewhere and one that is not: the same work (one scrypt each), the same answer', async () => {
    const elsewhere = await inviteMember(t.db, 'org_d', { email: 'admin@a.example', role: 'viewer' }, OP, at(20 * MIN));
    const nowhere = await inviteMember(t.db, 'org_d', { email: 'fresh@d.example', role: 'viewer' }, OP, at(20 * MIN));
    const work = async (token: string) => {
      const before = PASSWORD_GATE.computed;
      const s = await acceptInvitation(t.db, { token, password: A_SECRET }, '198.51.100.30', at(20 * MIN));
      return { computed: PASSWORD_GATE.computed - before, stage: s.stage, orgId: s.orgId };
    };
    expect(await work(elsewhere.token)).toEqual({ computed: 1, stage: 'active', orgId: 'org_d' });
    expect(await work(nowhere.token)).toEqual({ computed: 1, stage: 'active', orgId: 'org_d' });
  });
});

describe(`M2: an IPv6 /64 is one address, and a flood does not refuse a member (${DB_KIND})`, () => {
  it('addressKey: an IPv6 address stands for its /64, an IPv4-mapped one for its IPv4 address', () => {
    expect(addressKey('2001:db8:1:2:3:4:5:6')).toBe('2001:db8:1:2::/64');
    expect(addressKey('2001:DB8:1:2::ffff')).toBe('2001:db8:1:2::/64');
    expect(addressKey('2001:db8::1')).toBe('2001:db8:0:0::/64');
    expect(addressKey('fe80::1%eth0')).toBe('fe80:0:0:0::/64');
    expect(addressKey('::ffff:192.0.2.7')).toBe('192.0.2.7');
    expect(addressKey('192.0.2.7')).toBe('192.0.2.7');
    expect(addressKey('')).toBe('');
  });

  it('300 wrong sign-ins from 300 addresses of one /64 count as one address: then its member is refused there, and signs in from another /64', async () => {
    const start = at(60 * MIN);
    const slash64 = (i: number) => `2001:db8:52:64:${(i + 1).toString(16)}::1`;
    const flood = await Promise.all(
      Array.from({ length: 300 }, (_, i) => answer(signIn(t.db, { email: `v6-${i}@elsewhere.example`, password: 'wrong password!!' }, slash64(i), start))),
    );
    expect(new Set(flood)).toEqual(new Set([SIGN_IN_REFUSED]));
    const counted = async () =>
      (
        await t.db.query<{ n: number }>(
          { name: 't.addr', text: `SELECT COALESCE(sum(count), 0)::int AS n FROM console_sign_in_attempts WHERE scope = 'address' AND key = $1` } as never,
          ['2001:db8:52:64::/64'],
        )
      )[0].n;
    // A burst over the limit may be refused whole; the rest of the limit, one at a time.
    for (let i = await counted(); i < SIGN_IN_LIMIT; i++)
      await answer(signIn(t.db, { email: `v6-late-${i}@elsewhere.example`, password: 'wrong password!!' }, slash64(400 + i), start));
    expect(await counted()).toBe(SIGN_IN_LIMIT);
    const member = { email: 'admin@a.example', password: A_SECRET, organization: 'org_a' };
    expect(await answer(signIn(t.db, member, '2001:db8:52:64:ffff:ffff:ffff:fffe', start))).toBe(SIGN_IN_REFUSED);
    expect((await signIn(t.db, member, '2001:db8:52:65::1', start)).orgId).toBe('org_a');
  }, 120_000);

  it("a flood within every limit, from fresh addresses, queued first: the member's right password is served, before the flood's tail", async () => {
    const start = at(120 * MIN);
    // Ten real accounts, each guessed ten times (its limit), and 200 unknown emails, each from a fresh address.
    for (let i = 0; i < 10; i++) {
      const inv = await inviteMember(t.db, 'org_c', { email: `busy${i}@c.example`, role: 'viewer' }, OP, at(90 * MIN));
      await acceptInvitation(t.db, { token: inv.token, password: A_SECRET }, '198.51.100.40', at(90 * MIN));
    }
    const order: string[] = [];
    const flood = [
      ...Array.from({ length: 100 }, (_, i) => ({ email: `busy${i % 10}@c.example`, address: `10.52.${Math.floor(i / 10)}.${i % 10}` })),
      ...Array.from({ length: 200 }, (_, i) => ({ email: `nobody${i}@elsewhere.example`, address: `10.53.${Math.floor(i / 100)}.${i % 100}` })),
    ].map((f, i) =>
      answer(signIn(t.db, { email: f.email, password: 'wrong password!!' }, f.address, start)).then((a) => {
        order.push(i < 100 ? 'real' : 'none');
        return a;
      }),
    );
    // The flood is queued first.
    for (let waited = 0; PASSWORD_GATE.load.waiting < 20 && waited < 20_000; waited += 10) await new Promise((r) => setTimeout(r, 10));
    const realAtArrival = order.filter((o) => o === 'real').length;
    // The computations that started while the member's attempt was in the gates (its own aside):
    // the flood's guesses served before it (the order, not a time).
    const computedAtArrival = PASSWORD_GATE.computed;
    const mine = await answer(signIn(t.db, { email: 'admin@a.example', password: A_SECRET, organization: 'org_a' }, '192.0.2.52', start));
    const checkedBeforeMine = PASSWORD_GATE.computed - computedAtArrival - 1;
    const outcomes = await Promise.all(flood);
    expect(mine).toBe('ok');
    expect(new Set(outcomes)).toEqual(new Set([SIGN_IN_REFUSED]));
    // Behind at most the accounts' first attempts (one each) and the checks running, never behind
    // the tail of their guesses (100 in all).
    expect(realAtArrival).toBeLessThan(50);
    expect(checkedBeforeMine).toBeLessThanOrEqual(15);
  }, 180_000);
});

describe('the gate (issue 52, M2): the order, not a time', () => {
  it('a first-lane task is never refused for its wait; a rest-lane one is', async () => {
    const gate = new FairGate(1, 30, 10, 100);
    let release!: () => void;
    const busy = gate.run('x', () => new Promise<void>((r) => (release = r)));
    await new Promise((r) => setTimeout(r, 0));
    const member = gate.run('m', async () => 'member', 'first');
    const flood = gate.run('f', async () => 'flood', 'rest');
    await new Promise((r) => setTimeout(r, 80)); // past maxWaitMs
    release();
    expect(await flood).toEqual({ ran: false });
    expect(await member).toEqual({ ran: true, value: 'member' });
    await busy;
  });

  it('light tasks take their turn and give the slot back at once: a real task behind N of them waits for none', async () => {
    const gate = new FairGate(1, 5_000, 10, 1_000);
    const order: string[] = [];
    let release!: () => void;
    const busy = gate.run('x', () => new Promise<void>((r) => (release = r)));
    await new Promise((r) => setTimeout(r, 0));
    const light = Array.from({ length: 50 }, (_, i) =>
      gate.run(
        `fresh${i}`,
        () =>
          new Promise<void>((r) =>
            setTimeout(() => {
              order.push('light');
              r();
            }, 20),
          ),
        'first',
        true,
      ),
    );
    const member = gate.run('m', async () => void order.push('member'), 'first');
    release();
    await Promise.all([busy, member, ...light]);
    expect(order[0]).toBe('member'); // the 50 light tasks ahead of it held no slot while they waited out their time
    expect(order).toHaveLength(51);
  });
});
