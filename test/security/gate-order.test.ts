import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ApiError } from '../../src/contract/errors.js';
import { insertMember } from '../../src/db/repositories/members.js';
import { operatorActor } from '../../src/domain/audit.js';
import { inviteMember } from '../../src/domain/members.js';
import { FairGate, hashPassword, nextArrival, PASSWORD_ADMISSION, PASSWORD_GATE } from '../../src/domain/passwords.js';
import { acceptInvitation, signIn, SIGN_IN_REFUSED } from '../../src/domain/sessions.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { ConsoleClient } from '../helpers/console-client.js';
import { DB_KIND } from '../helpers/db.js';

/**
 * Issue 52, M2: a member on a new browser (no device cookie), from a fresh address, during a flood
 * of first attempts from fresh addresses (real accounts and made-up emails, each within every
 * limit). The gates' first lane serves by arrival, the newest and the oldest in turn: a flood
 * queued before the member goes after them, a stream that keeps coming cannot bury anyone, and an
 * email no membership has is served at the same turn as a member's. Tested by the order, never by
 * a time.
 */
const T0 = new Date('2026-11-22T12:00:00.000Z');
const MIN = 60_000;
const at = (ms: number) => new Date(T0.getTime() + ms);
const OP = operatorActor('192.0.2.200');
const PW = 'the member knows this passphrase';
const WRONG = 'a wrong guess at it';
const ACCOUNTS = 60;

const tick = () => new Promise((r) => setTimeout(r, 0));
/** A gate of one slot, held until the returned function is called. */
async function heldGate(maxWaitMs = 5_000) {
  const gate = new FairGate(1, maxWaitMs, 10, 1_000);
  let release!: () => void;
  const busy = gate.run('busy', () => new Promise<void>((r) => (release = r)));
  await tick();
  return { gate, busy, release: () => release() };
}

describe('the first lane, by arrival: the newest and the oldest in turn (the order, not a time)', () => {
  it('a member who arrives after N queued first attempts is served at once, and never refused for the wait', async () => {
    const { gate, busy, release } = await heldGate(10);
    const order: string[] = [];
    const flood = Array.from({ length: 100 }, (_, i) => gate.run(`10.0.${i >> 8}.${i & 255}`, async () => void order.push(`flood${i}`), 'first'));
    const member = gate.run('192.0.2.7', async () => void order.push('member'), 'first');
    expect(gate.load).toEqual({ running: 1, waiting: 101 });
    await new Promise((r) => setTimeout(r, 40)); // four times a rest task's longest wait
    release();
    const ran = await Promise.all([member, ...flood, busy]);
    expect(ran.every((r) => r.ran)).toBe(true);
    expect(order).toHaveLength(101);
    expect(order.indexOf('member')).toBeLessThanOrEqual(1); // at most one oldest turn before the newest's
  });

  it('the arrival is kept through both gates: attempts that arrived before the member but end their reads after it go after it', async () => {
    const { gate, busy, release } = await heldGate();
    const order: string[] = [];
    // The flood arrived first (its numbers), and reached the computation around the member.
    const arrived = Array.from({ length: 50 }, () => nextArrival());
    const mine = nextArrival();
    const early = arrived.slice(0, 25).map((n, i) => gate.run(`10.1.0.${i}`, async () => void order.push('flood'), 'first', false, n));
    const member = gate.run('192.0.2.8', async () => void order.push('member'), 'first', false, mine);
    const late = arrived.slice(25).map((n, i) => gate.run(`10.1.1.${i}`, async () => void order.push('flood'), 'first', false, n));
    release();
    await Promise.all([busy, member, ...early, ...late]);
    expect(order.indexOf('member')).toBeLessThanOrEqual(1);
  });

  it('a stream of newer arrivals, one more at each turn, does not bury a task: the oldest end reaches it within twice the tasks ahead of it', async () => {
    const { gate, busy, release } = await heldGate();
    const order: string[] = [];
    const running: Promise<unknown>[] = [];
    let stream = 0;
    // Each task served brings a newer one, for 200 turns: arrivals as fast as the gate serves.
    const next = (): Promise<unknown> =>
      gate.run(
        `10.2.${stream >> 8}.${stream++ & 255}`,
        async () => {
          order.push('stream');
          if (stream < 200) running.push(next());
        },
        'first',
      );
    const ahead = Array.from({ length: 3 }, () => next());
    const member = gate.run('192.0.2.9', async () => void order.push('member'), 'first');
    running.push(next()); // and one newer than the member at once
    release();
    await member;
    while (running.length > 0) await running.shift();
    await Promise.all([busy, ...ahead]);
    // Newest first alone would serve it after the stream (turn 200); by turns from both ends, after
    // at most the 3 ahead of it and as many of the newer ones.
    expect(order.indexOf('member')).toBeLessThanOrEqual(2 * 3 + 1);
    expect(order.length).toBeGreaterThanOrEqual(200);
  });

  it("made-up emails trickling in after the member pass at once and do not count as turns: the member's check is the next computation from the newest end", async () => {
    const { gate, busy, release } = await heldGate();
    const order: string[] = [];
    const light: Promise<unknown>[] = [];
    let n = 0;
    // Each computation brings three newer made-up emails (light: their turn, then the slot back at once).
    const trickle = () => {
      for (let i = 0; i < 3 && n < 150; i++) light.push(gate.run(`10.4.1.${n++}`, async () => void order.push('made-up'), 'first', true));
    };
    const real = Array.from({ length: 30 }, (_, i) =>
      gate.run(
        `10.4.0.${i}`,
        async () => {
          order.push('real');
          trickle();
        },
        'first',
      ),
    );
    const member = gate.run(
      '192.0.2.10',
      async () => {
        order.push('member');
        trickle();
      },
      'first',
    );
    trickle();
    release();
    await member;
    await Promise.all([busy, ...real]);
    while (light.length > 0) await light.shift();
    // Counting every task as a turn, the made-up emails would take every newest turn and the
    // member would wait for the oldest end to reach it, after the 30 computations queued before it.
    const computations = order.filter((o) => o !== 'made-up');
    expect(computations.indexOf('member')).toBeLessThanOrEqual(1);
    expect(computations).toHaveLength(31);
  });

  it('the lane a task waits in is chosen before anything is read: the first lane is served before the rest, whatever the email', async () => {
    const { gate, busy, release } = await heldGate();
    const order: string[] = [];
    const rest = Array.from({ length: 20 }, (_, i) => gate.run(`10.3.0.${i}`, async () => void order.push('rest'), 'rest'));
    const first = Array.from({ length: 20 }, (_, i) => gate.run(`10.3.1.${i}`, async () => void order.push('first'), 'first'));
    release();
    await Promise.all([busy, ...rest, ...first]);
    expect(order).toEqual([...Array(20).fill('first'), ...Array(20).fill('rest')]);
  });
});

let clock = T0;
let t: TestApp;
beforeAll(async () => {
  t = await createTestApp({
    clock: () => clock,
    dataset: { organizations: [{ id: 'org_go', name: 'Gate order', plan: 'business', createdAt: at(-60 * MIN).toISOString() }] },
  });
  // Members who joined an hour ago (an acceptance keeps its attempt for 15 minutes).
  for (const email of ['member@go.example', 'second@go.example', 'spare@go.example', 'spare2@go.example']) {
    const inv = await inviteMember(t.db, 'org_go', { email, role: 'viewer' }, OP, at(-60 * MIN));
    await acceptInvitation(t.db, { token: inv.token, password: PW }, '198.51.100.1', at(-60 * MIN));
  }
  // Accounts the flood guesses at: real scrypt hashes, so that each wrong guess is a computation.
  const hash = await hashPassword('the accounts of the flood share this');
  for (let i = 0; i < 2 * ACCOUNTS; i++)
    await insertMember(t.db, { orgId: 'org_go', id: `mem_go_${i}`, email: `account${i}@go.example`, role: 'viewer', passwordHash: hash, at: at(-60 * MIN) });
});
afterAll(() => t?.close());

const answer = (p: Promise<unknown>) =>
  p.then(
    () => 'ok',
    (e: ApiError) => e.message,
  );
/** Until the flood waits in the gates (the member then arrives after it). */
async function queued(atLeast: number) {
  for (let waited = 0; PASSWORD_ADMISSION.load.waiting + PASSWORD_GATE.load.waiting < atLeast && waited < 30_000; waited += 5)
    await new Promise((r) => setTimeout(r, 5));
  expect(PASSWORD_ADMISSION.load.waiting + PASSWORD_GATE.load.waiting).toBeGreaterThanOrEqual(atLeast);
}

describe(`a member on a new browser, from a fresh address, after a flood of first attempts (${DB_KIND})`, () => {
  it("the member's right password is checked before the flood's queued guesses, and a made-up email is answered at the same turn as a real one", async () => {
    const start = at(30 * MIN);
    clock = start;
    // ACCOUNTS real accounts and 240 made-up emails, one wrong sign-in each, each from a fresh address.
    const done: string[] = [];
    const flood = [
      ...Array.from({ length: ACCOUNTS }, (_, i) => ({ email: `account${i}@go.example`, address: `10.71.0.${i + 1}` })),
      ...Array.from({ length: 240 }, (_, i) => ({ email: `nobody${i}@nowhere.example`, address: `10.72.${i >> 8}.${(i & 255) + 1}` })),
    ].map((f) =>
      answer(signIn(t.db, { email: f.email, password: WRONG }, f.address, start)).then((a) => {
        done.push(f.email.startsWith('account') ? 'real' : 'none');
        return a;
      }),
    );
    await queued(100);
    const computedAtArrival = PASSWORD_GATE.computed;
    const doneAtArrival = done.length;
    // The member, a real account's wrong password and a made-up email's, each from a fresh address,
    // no cookie; for each, the computations started by its answer (its own and the other two's among them).
    const computedBy: Record<string, number> = {};
    const probe = (name: string, email: string, password: string, address: string) =>
      answer(signIn(t.db, { email, password }, address, start)).then((a) => {
        computedBy[name] = PASSWORD_GATE.computed - computedAtArrival;
        return a;
      });
    const [mine, real, madeUp] = await Promise.all([
      probe('member', 'member@go.example', PW, '192.0.2.71'),
      probe('real', 'spare@go.example', WRONG, '192.0.2.72'),
      probe('made-up', 'ghost@nowhere.example', WRONG, '192.0.2.73'),
    ]);
    // The flood's computations that ran while the three were in the gates, theirs (two) aside.
    const floodChecksMeanwhile = PASSWORD_GATE.computed - computedAtArrival - 2;
    const outcomes = await Promise.all(flood);
    expect(mine).toBe('ok'); // never refused
    expect([real, madeUp]).toEqual([SIGN_IN_REFUSED, SIGN_IN_REFUSED]);
    expect(new Set(outcomes)).toEqual(new Set([SIGN_IN_REFUSED]));
    // The flood's real accounts still waiting when they came: at least half of them.
    expect(done.slice(0, doneAtArrival).filter((d) => d === 'real').length).toBeLessThan(ACCOUNTS / 2);
    // Served at the newest end: behind the checks running and a few turns of the oldest end,
    // never behind the flood's queued guesses (at least ACCOUNTS / 2 of them).
    expect(floodChecksMeanwhile).toBeLessThanOrEqual(12);
    // A made-up email and a real one: both answered before the flood's queued computations, within
    // the same few of them (made-up emails of the flood, which compute nothing, may pass meanwhile).
    for (const name of ['member', 'real', 'made-up']) expect(computedBy[name], name).toBeLessThanOrEqual(14);
  }, 180_000);

  it("the review's M2 over HTTP: 300 fresh addresses, one wrong sign-in each, and a member from a new browser signs in during it, ahead of it", async () => {
    const start = at(60 * MIN);
    clock = start;
    const flooder = new ConsoleClient(t.app, '203.0.113.1');
    const csrf = ConsoleClient.token((await flooder.get('/console/sign-in')).body);
    const cookie = `cp_form=${flooder.cookies.get('cp_form')}`;
    // 300 distinct addresses: ACCOUNTS real accounts not guessed before (a computation each), the rest made-up emails.
    const computedBefore = PASSWORD_GATE.computed;
    const post = (i: number) =>
      t.app
        .inject({
          method: 'POST',
          url: '/console/sign-in',
          remoteAddress: `10.73.${i >> 8}.${i & 255}`,
          payload: new URLSearchParams({
            _csrf: csrf,
            email: i < ACCOUNTS ? `account${ACCOUNTS + i}@go.example` : `nobody${i}@m2.example`,
            password: WRONG,
          }).toString(),
          headers: { cookie, 'content-type': 'application/x-www-form-urlencoded', 'sec-fetch-site': 'same-origin' },
        })
        .then((r) => r.statusCode);
    const flood = Array.from({ length: 300 }, (_, i) => post(i));
    const member = new ConsoleClient(t.app, '198.51.100.77'); // a new browser: no device cookie
    const page = await member.get('/console/sign-in');
    await queued(100);
    const computedAtArrival = PASSWORD_GATE.computed;
    const during = await member.postOnly('/console/sign-in', { _csrf: ConsoleClient.token(page.body), email: 'second@go.example', password: PW });
    const floodChecksMeanwhile = PASSWORD_GATE.computed - computedAtArrival - 1;
    const statuses = await Promise.all(flood);
    expect(during.statusCode).toBe(303);
    expect(during.headers.location).toBe('/console/overview');
    expect(new Set(statuses)).toEqual(new Set([401]));
    // Every real account's guess was computed (each within its limit: one), the member's between them.
    expect(PASSWORD_GATE.computed - computedBefore).toBe(ACCOUNTS + 1);
    expect(floodChecksMeanwhile).toBeLessThanOrEqual(12);
  }, 180_000);
});
