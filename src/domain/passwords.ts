import { randomBytes, scrypt as scryptCallback, timingSafeEqual, type ScryptOptions } from 'node:crypto';
import type { DatabaseExecutor, Queryable } from './database.js';
import {
  countAttempts,
  deleteMemberSessions,
  findPasswordHashesByEmail,
  purgeAttempts,
  recordAttempt,
  refundAttempt,
  updateMemberPassword,
} from '../db/repositories/members.js';
import { ApiError, invalid } from '../contract/errors.js';
import { recordAudit, type Actor } from './audit.js';
import { addressKey } from './addresses.js';
import { memberOf, type MemberView } from './members.js';

/**
 * Every check of a console password (CONTRACT.md section 11, "invariants under concurrency"):
 * signing in, the Account page's current password, re-authentication before replacing a second
 * factor; and every password chosen (accepting an invitation, the Account page's new password).
 * Each spends the same limits, per account and per address (an IPv6 /64 is one address), in a
 * sliding window, and runs through one gate per process that bounds how many scrypt computations
 * run at once and serves waiting addresses in turn, so that a flood within every limit cannot
 * starve a member. No password is ever compared with another membership's (issue 52, H1).
 */

export { addressKey };

export const SIGN_IN_LIMIT = 10;
export const SIGN_IN_WINDOW_MS = 15 * 60_000;
export const MIN_PASSWORD = 12;
export const MAX_PASSWORD = 1024;

// Passwords: scrypt (RFC 7914) from node:crypto, N = 2^15, r = 8, p = 1, a 16-byte salt.

const SCRYPT = { N: 2 ** 15, r: 8, p: 1, maxmem: 64 * 1024 * 1024 } as const;
function scrypt(password: string, salt: Buffer, keylen: number, opts: ScryptOptions): Promise<Buffer> {
  return new Promise((resolve, reject) => scryptCallback(password.normalize('NFC'), salt, keylen, opts, (err, key) => (err ? reject(err) : resolve(key))));
}

/**
 * A new hash. `sameSaltAs`: the hash of another membership of the same address, whose salt this
 * one reuses, so that signing in derives one key for every membership of the address (one scrypt,
 * whatever their number: the time of a sign-in says nothing about it).
 */
export async function hashPassword(password: string, sameSaltAs?: string): Promise<string> {
  const reused = sameSaltAs ? parseHash(sameSaltAs) : null;
  const salt = reused && reused.n === SCRYPT.N && reused.r === SCRYPT.r && reused.p === SCRYPT.p ? reused.salt : randomBytes(16);
  const key = await scrypt(password, salt, 32, SCRYPT);
  return `scrypt$${SCRYPT.N}$${SCRYPT.r}$${SCRYPT.p}$${salt.toString('base64url')}$${key.toString('base64url')}`;
}

function parseHash(stored: string) {
  const [scheme, n, r, p, salt, key] = stored.split('$');
  if (scheme !== 'scrypt' || !key) return null;
  return { n: Number(n), r: Number(r), p: Number(p), salt: Buffer.from(salt, 'base64url'), key: Buffer.from(key, 'base64url'), saltText: salt };
}

export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  return (await matchPasswords(password, [stored])).length > 0;
}

/**
 * Which of `stored` (hashes of one address's memberships, sharing a salt) the password matches,
 * with one scrypt computation: their indices, in order. A hash with another salt or parameters
 * (made before memberships shared one) is compared only when it is the first.
 */
export async function matchPasswords(password: string, stored: string[]): Promise<number[]> {
  const first = stored.length > 0 ? parseHash(stored[0]) : null;
  if (!first) return [];
  const got = await scrypt(password, first.salt, first.key.length, { N: first.n, r: first.r, p: first.p, maxmem: SCRYPT.maxmem });
  const found: number[] = [];
  stored.forEach((h, i) => {
    const x = parseHash(h);
    // Every hash is compared (no early exit): the time says nothing about which matched.
    const same = x !== null && x.saltText === first.saltText && x.n === first.n && x.r === first.r && x.p === first.p && x.key.length === got.length;
    if (same && timingSafeEqual(got, x.key)) found.push(i);
  });
  return found;
}

/**
 * A gate of `slots` concurrent tasks per process. Waiting tasks are queued per key (the client's
 * address key) and served in turn, one key after another, so that the 300 attempts of 30 addresses
 * put a newcomer behind at most one attempt of each, not behind all 300. A task in the `first`
 * lane (an address and account with no other attempt in the window: a member signing in) waits
 * only behind other such tasks, and is never refused for its wait. A `light` task (a check with
 * nothing to compute: no membership has the email) waits for its turn as any other, then gives its
 * slot back at once: it answers when a check in its place would, and costs the others nothing. A
 * task of the `rest` lane that waits longer than `maxWaitMs`, or any task that finds its key's
 * queue or the whole gate full, is not run (ran: false).
 */
export class FairGate {
  private running = 0;
  private waiting = 0;
  /** Tasks that held a slot (light ones do not count): the scrypt computations, for tests and metrics. */
  computed = 0;
  private readonly lanes = { first: new Map<string, Array<() => void>>(), rest: new Map<string, Array<() => void>>() };

  constructor(
    readonly slots: number,
    readonly maxWaitMs: number,
    readonly maxPerKey: number,
    readonly maxWaiting: number,
  ) {}

  async run<T>(key: string, task: () => Promise<T>, lane: 'first' | 'rest' = 'rest', light = false): Promise<{ ran: true; value: T } | { ran: false }> {
    if (!(await this.enter(key, this.lanes[lane], lane === 'rest'))) return { ran: false };
    if (light) {
      this.leave();
      return { ran: true, value: await task() };
    }
    this.computed++;
    try {
      return { ran: true, value: await task() };
    } finally {
      this.leave();
    }
  }

  /** Tasks running and waiting now (for tests and metrics). */
  get load() {
    return { running: this.running, waiting: this.waiting };
  }

  private enter(key: string, lane: Map<string, Array<() => void>>, timesOut: boolean): Promise<boolean> {
    if (this.running < this.slots && this.waiting === 0) {
      this.running++;
      return Promise.resolve(true);
    }
    const queue = lane.get(key) ?? [];
    if (queue.length >= this.maxPerKey || this.waiting >= this.maxWaiting) return Promise.resolve(false);
    return new Promise<boolean>((resolve) => {
      let timer: NodeJS.Timeout | undefined;
      const admit = () => {
        clearTimeout(timer);
        resolve(true);
      };
      if (timesOut) {
        timer = setTimeout(() => {
          const q = lane.get(key);
          const i = q?.indexOf(admit) ?? -1;
          if (q && i >= 0) {
            q.splice(i, 1);
            if (q.length === 0) lane.delete(key);
            this.waiting--;
          }
          resolve(false);
        }, this.maxWaitMs);
        timer.unref?.();
      }
      queue.push(admit);
      lane.set(key, queue);
      this.waiting++;
    });
  }

  private leave() {
    this.running--;
    const lane = this.lanes.first.size > 0 ? this.lanes.first : this.lanes.rest;
    // The first key of a lane is the one served longest ago; after its turn it goes to the end.
    const next = lane.entries().next();
    if (next.done) return;
    const [key, queue] = next.value;
    const admit = queue.shift()!;
    lane.delete(key);
    if (queue.length > 0) lane.set(key, queue);
    this.waiting--;
    this.running++;
    admit();
  }
}

/**
 * The process's gate for password work (checks, and the hashes of chosen passwords): two scrypt
 * computations at once (each takes one core for about 50-100 ms); an address with no failed check
 * waits only behind others like it, and is never refused for waiting; any other waits behind at
 * most one attempt of every other waiting address, for at most 5 s; an address has at most 10 of
 * its own attempts waiting (its limit in a window).
 */
export const PASSWORD_GATE = new FairGate(2, 5_000, SIGN_IN_LIMIT, 5_000);

/** How long a check takes here, smoothed: a refusal without a check, and a light check, wait as long. */
let typicalCheckMs = 100;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const timed = async <T>(work: () => Promise<T>): Promise<T> => {
  const t = Date.now();
  const value = await work();
  typicalCheckMs = Math.round(typicalCheckMs * 0.8 + (Date.now() - t) * 0.2);
  return value;
};

export interface PasswordCheck {
  /** The account's key in the limits: the email as typed, trimmed and lower-cased. */
  account: string;
  /** The client's address (its key in the limits is addressKey's). */
  address: string;
  password: string;
  /** The stored hashes to check against (one address's memberships); none: nothing is computed, and the answer waits as long. */
  stored: string[];
}

/**
 * One limited, uniform password check. Answers which stored hashes match (their indices, in order;
 * several memberships of one address may share a password), none, or 'limited' when the account or
 * the address has had SIGN_IN_LIMIT failed checks in the last 15 minutes (sliding), or the gate
 * could not take it in time: then nothing was checked, nothing written, and the answer took about
 * as long as a check. A failure keeps its count; a success gives it back.
 */
export async function checkPasswordMatches(db: Queryable, c: PasswordCheck, now: Date): Promise<number[] | 'limited'> {
  const started = Date.now();
  const spent = await spendAttempt(db, c.account, c.address, now);
  if (!spent) {
    // As long as a check takes, with nothing checked or written: a member and a stranger alike.
    await sleep(Math.max(0, typicalCheckMs - (Date.now() - started)));
    return 'limited';
  }
  const lane = spent.failed === 0 ? 'first' : 'rest';
  const key = addressKey(c.address);
  const checked =
    c.stored.length > 0
      ? await PASSWORD_GATE.run(key, () => timed(() => matchPasswords(c.password.slice(0, MAX_PASSWORD), c.stored)), lane)
      : // No membership has the email: its turn in the gate, then a check's time, without the check.
        await PASSWORD_GATE.run(key, () => sleep(typicalCheckMs).then(() => [] as number[]), lane, true);
  if (!checked.ran) {
    await spent.giveBack();
    return 'limited';
  }
  if (checked.value.length > 0) await spent.giveBack();
  return checked.value;
}

/** checkPasswordMatches for one membership's check: the first match's index, 'wrong' or 'limited'. */
export async function checkPassword(db: Queryable, c: PasswordCheck, now: Date): Promise<number | 'wrong' | 'limited'> {
  const found = await checkPasswordMatches(db, c, now);
  return found === 'limited' ? found : (found[0] ?? 'wrong');
}

/**
 * A password chosen for an address (accepting an invitation, the Account page's new password): its
 * hash, made in the same gate under the same limits as a check, never compared with anything. The
 * account's attempt is kept even though nothing failed: a chosen password becomes one the address
 * signs in with, and signing in then tells whether it opens another membership too, so choosing is
 * a guess at the address's other passwords and counts as one (at most SIGN_IN_LIMIT in 15 minutes,
 * as for failed sign-ins). The address's attempt is given back (colleagues behind one address may
 * join together). 'limited': nothing was made.
 */
export async function choosePassword(
  db: Queryable,
  c: { account: string; address: string; password: string; sameSaltAs?: string },
  now: Date,
): Promise<string | 'limited'> {
  const started = Date.now();
  const spent = await spendAttempt(db, c.account, c.address, now);
  if (!spent) {
    await sleep(Math.max(0, typicalCheckMs - (Date.now() - started)));
    return 'limited';
  }
  const made = await PASSWORD_GATE.run(addressKey(c.address), () => timed(() => hashPassword(c.password, c.sameSaltAs)), spent.failed === 0 ? 'first' : 'rest');
  if (!made.ran) {
    await spent.giveBack();
    return 'limited';
  }
  await spent.giveBackAddress();
  return made.value;
}

/**
 * Counts one attempt against the account and the address (its addressKey), or answers null when
 * either has had SIGN_IN_LIMIT in the last 15 minutes (then nothing is written). Counted before and
 * after this attempt's own rows: of concurrent attempts, the k-th to commit its rows counts at least
 * k, so no more than the limit pass, on one process or many. A failed attempt keeps its count (for
 * 15 minutes from its own instant: a sliding window); a successful one gives it back.
 */
export async function spendAttempt(
  db: Queryable,
  account: string,
  address: string,
  now: Date,
): Promise<{ failed: number; giveBack(): Promise<void>; giveBackAddress(): Promise<void> } | null> {
  const since = new Date(now.getTime() - SIGN_IN_WINDOW_MS);
  const addr = addressKey(address);
  if ((await countAttempts(db, account, addr, since)) >= SIGN_IN_LIMIT) return null;
  await recordAttempt(db, 'account', account, now);
  await recordAttempt(db, 'address', addr, now);
  const giveBackAddress = () => refundAttempt(db, 'address', addr, now);
  const giveBack = async () => {
    await refundAttempt(db, 'account', account, now);
    await giveBackAddress();
  };
  const counted = await countAttempts(db, account, addr, since);
  if (counted > SIGN_IN_LIMIT) {
    await giveBack();
    return null;
  }
  if (Math.random() < 0.01) await purgeAttempts(db, since);
  // Attempts of the account or address besides this one, failed or still running.
  return { failed: counted - 1, giveBack, giveBackAddress };
}

// A member's own password: the rule, a new hash, and the change.

/** The Account page's (and re-authentication's) one answer for every refused check of the current password. */
export const PASSWORD_REFUSED =
  'The current password is not right, or too many attempts were made. After 10 failed attempts, password checks pause for 15 minutes.';

export function checkPasswordRule(password: unknown, field = 'password'): string {
  if (typeof password !== 'string' || [...password].length < MIN_PASSWORD) throw invalid(`The ${field} must be at least ${MIN_PASSWORD} characters long.`);
  if (password.length > MAX_PASSWORD) throw invalid(`The ${field} must be at most ${MAX_PASSWORD} characters long.`);
  return password;
}

/**
 * The hash of a password chosen for a membership of `email` (choosePassword: gated, limited), with
 * the salt its other memberships share, so that one scrypt signs in whichever the password opens.
 * It is never compared with them: whether another membership uses the same password is no
 * business of this one's (issue 52, H1), and the work is the same whatever their number (L2).
 */
export async function chooseMembershipPassword(
  db: Queryable,
  c: { email: string; address: string | null; password: string; exceptMemberId: string | null },
  now: Date,
): Promise<string | 'limited'> {
  const others = (await findPasswordHashesByEmail(db, c.email)).filter((h) => h.id !== c.exceptMemberId);
  return choosePassword(db, { account: c.email.toLowerCase(), address: c.address ?? '', password: c.password, sameSaltAs: others[0]?.passwordHash }, now);
}

/**
 * Whose password changes: the signed-in member (a console session is one). Named here, not taken
 * from sessions.ts, which builds on this module (its sign-in checks passwords here): the password
 * layer sits below sessions, and needs only the organization and the member.
 */
export interface SignedInMember {
  orgId: string;
  member: Pick<MemberView, 'id'>;
}

/** A password change ends every session of the member, the current one included (sign in again). */
export async function updatePassword(
  db: DatabaseExecutor,
  session: SignedInMember,
  input: { current: unknown; next: unknown },
  actor: Actor,
  now: Date,
): Promise<void> {
  const next = checkPasswordRule(input.next, 'new password');
  const m = await memberOf(db, session.orgId, session.member.id);
  const current = typeof input.current === 'string' ? input.current : '';
  // The same limits and gate as signing in: a session is not a way around them.
  const outcome = await checkPassword(db, { account: m.email.toLowerCase(), address: actor.address ?? '', password: current, stored: [m.passwordHash] }, now);
  if (outcome !== 0) throw new ApiError('unauthorized', PASSWORD_REFUSED);
  const hash = await chooseMembershipPassword(db, { email: m.email, address: actor.address ?? null, password: next, exceptMemberId: m.id }, now);
  if (hash === 'limited') throw new ApiError('unauthorized', PASSWORD_REFUSED);
  await db.transaction(async (tx) => {
    await updateMemberPassword(tx, m.orgId, m.id, hash);
    await deleteMemberSessions(tx, m.orgId, m.id);
    await recordAudit(tx, m.orgId, actor, { action: 'member.password_changed', target: { kind: 'member', id: m.id }, details: {} }, now);
  });
}
