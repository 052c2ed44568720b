import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ApiError } from '../../src/contract/errors.js';
import { insertMember } from '../../src/db/repositories/members.js';
import { operatorActor } from '../../src/domain/audit.js';
import { inviteMember } from '../../src/domain/members.js';
import { FairGate, hashPassword, PASSWORD_GATE, SIGN_IN_LIMIT, updatePassword } from '../../src/domain/passwords.js';
import { acceptInvitation, signIn, SIGN_IN_REFUSED } from '../../src/domain/sessions.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { ConsoleClient } from '../helpers/console-client.js';
import { DB_KIND } from '../helpers/db.js';

/**
 * Issue 52, M2, the lane a device cookie opens: a browser where an account signed in carries a
 * token the service signed for that account; its next sign-ins of that account take the password
 * gates' known lane (ahead of every other attempt, never refused for waiting, not bounded by the
 * gates' totals) and are limited by the token's own failures, not the account's or the address's.
 * Tested by the order, not by a time.
 */
const T0 = new Date('2026-11-21T12:00:00.000Z');
const MIN = 60_000;
const at = (ms: number) => new Date(T0.getTime() + ms);
const OP = operatorActor('192.0.2.200');
const PW = 'the member knows this passphrase';
const WRONG = 'a wrong guess at it';
const ACCOUNTS = 40;

let clock = T0;
let t: TestApp;
beforeAll(async () => {
  t = await createTestApp({
    clock: () => clock,
    dataset: { organizations: [{ id: 'org_dl', name: 'Device lane', plan: 'business', createdAt: at(-60 * MIN).toISOString() }] },
  });
  // Members who joined an hour ago (an acceptance keeps its attempt for 15 minutes).
  for (const email of ['member@dl.example', 'second@dl.example', 'third@dl.example']) {
    const inv = await inviteMember(t.db, 'org_dl', { email, role: 'viewer' }, OP, at(-60 * MIN));
    await acceptInvitation(t.db, { token: inv.token, password: PW }, '198.51.100.1', at(-60 * MIN));
  }
  // Accounts the floods guess at: real scrypt hashes, so that each wrong guess is a computation.
  const hash = await hashPassword('the accounts of the flood share this');
  for (let i = 0; i < ACCOUNTS; i++)
    await insertMember(t.db, { orgId: 'org_dl', id: `mem_dl_${i}`, email: `account${i}@dl.example`, role: 'viewer', passwordHash: hash, at: at(-60 * MIN) });
});
afterAll(() => t?.close());

const answer = (p: Promise<unknown>) =>
  p.then(
    () => 'ok',
    (e: ApiError) => e.message,
  );
const tick = () => new Promise((r) => setTimeout(r, 0));

describe('the gate: the known lane goes first and is never refused (the order, not a time)', () => {
  it('with every slot taken and N unknown tasks waiting in both other lanes, a known task is admitted next', async () => {
    const gate = new FairGate(1, 5_000, 10, 1_000);
    const order: string[] = [];
    let release!: () => void;
    const busy = gate.run('x', () => new Promise<void>((r) => (release = r)));
    await tick();
    const flood = Array.from({ length: 60 }, (_, i) =>
      gate.run(`10.0.0.${i}`, async () => void order.push(i % 2 ? 'first' : 'rest'), i % 2 ? 'first' : 'rest'),
    );
    const known = gate.run('device:n', async () => void order.push('known'), 'known');
    expect(gate.load).toEqual({ running: 1, waiting: 61 });
    release();
    await Promise.all([busy, known, ...flood]);
    expect(order[0]).toBe('known');
    expect(order.slice(1, 31)).toEqual(Array(30).fill('first'));
    expect(order).toHaveLength(61);
  });

  it('a full gate refuses unknown tasks, and still takes a known one; a known one never times out', async () => {
    const gate = new FairGate(1, 20, 10, 5);
    let release!: () => void;
    const busy = gate.run('x', () => new Promise<void>((r) => (release = r)));
    await tick();
    const waiting = Array.from({ length: 5 }, (_, i) => gate.run(`a${i}`, async () => 'first', 'first'));
    expect(await gate.run('b', async () => 'rest', 'rest')).toEqual({ ran: false }); // the gate's total is reached
    expect(await gate.run('c', async () => 'first', 'first')).toEqual({ ran: false });
    const known = gate.run('device:n', async () => 'known', 'known');
    await new Promise((r) => setTimeout(r, 60)); // three times a rest task's longest wait
    release();
    expect(await known).toEqual({ ran: true, value: 'known' });
    for (const w of waiting) expect(await w).toEqual({ ran: true, value: 'first' });
    await busy;
  });
});

describe('two turns: the computation waits for the first lanes still reading', () => {
  it('the second turn starts no rest-lane task while the first turn has first-lane tasks waiting, even with a slot free', async () => {
    const reads = new FairGate(1, 5_000, 10, 100);
    const checks = new FairGate(1, 5_000, 10, 100).follows(reads);
    const order: string[] = [];
    let endRead!: () => void;
    let endCheck!: () => void;
    const reading = reads.run('x', () => new Promise<void>((r) => (endRead = r)));
    const checking = checks.run('y', () => new Promise<void>((r) => (endCheck = r)));
    await tick();
    const member = reads.run('m', async () => void order.push('member read'), 'first');
    const guess = checks.run('f', async () => void order.push('flood guess'), 'rest');
    endCheck();
    await new Promise((r) => setTimeout(r, 20));
    expect(order).toEqual([]); // a slot is free, and the guess still waits
    endRead();
    await Promise.all([reading, checking, member, guess]);
    expect(order).toEqual(['member read', 'flood guess']);
  });
});

describe(`a sign-in with the device cookie of that account, under a flood (${DB_KIND})`, () => {
  it('sign-ins set a cookie per account; a token is good for its own account only, and a forged one is nobody', async () => {
    clock = T0;
    const first = await signIn(t.db, { email: 'member@dl.example', password: PW }, '198.51.100.10', T0);
    expect(first.device).toMatch(/^[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{22}$/);
    // Another account on the same browser: its token first, the member's kept.
    const both = (await signIn(t.db, { email: 'second@dl.example', password: PW }, '198.51.100.10', T0, first.device)).device;
    expect(both.split('~')).toHaveLength(2);
    expect(both.split('~')[1]).toBe(first.device);
    // Signing in again replaces the account's own token, never adds a second one.
    const again = (await signIn(t.db, { email: 'Member@DL.example ', password: PW }, '198.51.100.10', T0, both)).device;
    expect(again.split('~')).toHaveLength(2);
    expect(again).not.toContain(first.device);
    expect(again.split('~')[1]).toBe(both.split('~')[0]);
  });

  it("N real accounts guessed from N fresh addresses fill both gates; the member's right password with its cookie is checked before the flood's waiting guesses", async () => {
    const start = at(30 * MIN);
    clock = start;
    const device = (await signIn(t.db, { email: 'member@dl.example', password: PW }, '198.51.100.10', start)).device;
    const done: string[] = [];
    const flood = Array.from({ length: ACCOUNTS }, (_, i) =>
      answer(signIn(t.db, { email: `account${i}@dl.example`, password: WRONG }, `10.61.0.${i + 1}`, start)).then((a) => {
        done.push('flood');
        return a;
      }),
    );
    for (let waited = 0; PASSWORD_GATE.load.waiting < 20 && waited < 30_000; waited += 5) await new Promise((r) => setTimeout(r, 5));
    expect(PASSWORD_GATE.load.waiting).toBeGreaterThanOrEqual(20);
    const before = done.length;
    const mine = await answer(signIn(t.db, { email: 'member@dl.example', password: PW }, '198.51.100.10', start, device));
    const passedMe = done.length - before;
    const outcomes = await Promise.all(flood);
    expect(mine).toBe('ok');
    expect(new Set(outcomes)).toEqual(new Set([SIGN_IN_REFUSED]));
    // Only what was computing when it arrived, and what started while its own rows were read and
    // written, finished before it: never the 20 and more that were waiting.
    expect(passedMe).toBeLessThanOrEqual(8);
  }, 120_000);

  it("the flood spends the member account's limit: from a new browser the member is refused, with the cookie signed in; the token keeps a limit of its own", async () => {
    const start = at(60 * MIN);
    clock = start;
    const device = (await signIn(t.db, { email: 'third@dl.example', password: PW }, '198.51.100.30', start)).device;
    // SIGN_IN_LIMIT wrong guesses at the member's account, each from its own address (one after
    // another: a guess refused for its wait in the gate gives its count back).
    for (let i = 0; i < SIGN_IN_LIMIT; i++)
      expect(await answer(signIn(t.db, { email: 'third@dl.example', password: WRONG }, `10.62.0.${i + 1}`, start))).toBe(SIGN_IN_REFUSED);
    const member = { email: 'third@dl.example', password: PW };
    expect(await answer(signIn(t.db, member, '198.51.100.30', start))).toBe(SIGN_IN_REFUSED); // no cookie: the account is at its limit
    expect(await answer(signIn(t.db, member, '198.51.100.30', start, device))).toBe('ok');
    expect(await answer(signIn(t.db, member, '203.0.113.9', start, device))).toBe('ok'); // the cookie, not the address
    // A token made up, or another account's, opens nothing.
    const forged = device.replace(/^(.{23})./, (_, head: string) => `${head}${device[23] === 'A' ? 'B' : 'A'}`);
    expect(await answer(signIn(t.db, member, '198.51.100.30', start, forged))).toBe(SIGN_IN_REFUSED);
    const others = (await signIn(t.db, { email: 'second@dl.example', password: PW }, '198.51.100.31', start)).device;
    expect(await answer(signIn(t.db, member, '198.51.100.30', start, others))).toBe(SIGN_IN_REFUSED);
    // Whoever holds the cookie has SIGN_IN_LIMIT wrong passwords of its own, then is refused too.
    for (let i = 0; i < SIGN_IN_LIMIT; i++)
      expect(await answer(signIn(t.db, { ...member, password: `${WRONG} ${i}` }, '198.51.100.30', start, device))).toBe(SIGN_IN_REFUSED);
    expect(await answer(signIn(t.db, member, '198.51.100.30', start, device))).toBe(SIGN_IN_REFUSED);
  }, 120_000);

  it("a password change voids the exemption: the old token no longer passes the account's limit", async () => {
    const start = at(120 * MIN);
    clock = start;
    const s = await signIn(t.db, { email: 'second@dl.example', password: PW }, '198.51.100.40', start);
    await updatePassword(t.db, s, { current: PW, next: 'a brand new passphrase' }, operatorActor('198.51.100.40'), start);
    const later = at(140 * MIN);
    for (let i = 0; i < SIGN_IN_LIMIT; i++) await answer(signIn(t.db, { email: 'second@dl.example', password: WRONG }, `10.63.0.${i + 1}`, later));
    const member = { email: 'second@dl.example', password: 'a brand new passphrase' };
    expect(await answer(signIn(t.db, member, '198.51.100.40', later, s.device))).toBe(SIGN_IN_REFUSED);
  }, 60_000);
});

describe(`the review's M2 flood replayed over HTTP: 300 addresses, one wrong sign-in each (${DB_KIND})`, () => {
  it("the member's right password, sent from the browser it signed in with before, signs in during the flood and after it", async () => {
    const start = at(200 * MIN);
    clock = start;
    const member = new ConsoleClient(t.app, '198.51.100.50');
    const earlier = await member.submit('/console/sign-in', '/console/sign-in', { email: 'member@dl.example', password: PW });
    expect(earlier.statusCode).toBe(303);
    expect(earlier.headers['set-cookie']).toEqual(
      expect.arrayContaining([expect.stringMatching(/^cp_device=[^;]+; Path=\/console; HttpOnly; SameSite=Strict; Max-Age=15552000$/)]),
    );
    member.cookies.delete('cp_session');

    const flooder = new ConsoleClient(t.app, '203.0.113.1');
    const csrf = ConsoleClient.token((await flooder.get('/console/sign-in')).body);
    const cookie = `cp_form=${flooder.cookies.get('cp_form')}`;
    // 300 distinct addresses, one wrong sign-in each: ten for the member's own account (its limit,
    // one after another, so that each is counted), then 290 for emails no one has, all at once.
    const post = (i: number) =>
      t.app
        .inject({
          method: 'POST',
          url: '/console/sign-in',
          remoteAddress: `10.64.${i >> 8}.${i & 255}`,
          payload: new URLSearchParams({ _csrf: csrf, email: i < SIGN_IN_LIMIT ? 'member@dl.example' : `nobody${i}@m2.example`, password: WRONG }).toString(),
          headers: { cookie, 'content-type': 'application/x-www-form-urlencoded', 'sec-fetch-site': 'same-origin' },
        })
        .then((r) => r.statusCode);
    const limit: number[] = [];
    for (let i = 0; i < SIGN_IN_LIMIT; i++) limit.push(await post(i));
    expect(limit).toEqual(Array(SIGN_IN_LIMIT).fill(401));
    const flood = Array.from({ length: 300 - SIGN_IN_LIMIT }, (_, i) => post(SIGN_IN_LIMIT + i));
    const page = await member.get('/console/sign-in');
    const during = await member.postOnly('/console/sign-in', { _csrf: ConsoleClient.token(page.body), email: 'member@dl.example', password: PW });
    const statuses = await Promise.all(flood);
    expect(new Set(statuses)).toEqual(new Set([401]));
    expect(during.statusCode).toBe(303);
    expect(during.headers.location).toBe('/console/overview');
    // After the flood the account is at its limit: the same browser still signs in, a new one does not.
    member.cookies.delete('cp_session');
    const after = await member.submit('/console/sign-in', '/console/sign-in', { email: 'member@dl.example', password: PW });
    expect(after.statusCode).toBe(303);
    const stranger = new ConsoleClient(t.app, '198.51.100.51');
    expect((await stranger.submit('/console/sign-in', '/console/sign-in', { email: 'member@dl.example', password: PW })).statusCode).toBe(401);
  }, 120_000);
});
