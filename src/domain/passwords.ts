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
import { memberOf } from './members.js';
import type { ConsoleSession } from './sessions.js';

/**
 * Every check of a console password (CONTRACT.md section 11, "invariants under concurrency"):
 * signing in, the Account page's current password, re-authentication before replacing a second
 * factor. Each spends the same limits, per account and per address, in a sliding window, and runs
 * through one gate per process that bounds how many scrypt computations run at once and serves
 * waiting addresses in turn, so that a flood within every limit cannot starve a member.
 */

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
  return (await matchPassword(password, [stored])) === 0;
}

/**
 * Which of `stored` (hashes of one address's memberships, sharing a salt) the password matches,
 * with one scrypt computation: the index, or -1. A hash with another salt or parameters (made
 * before memberships shared one) is compared only when it is the first.
 */
export async function matchPassword(password: string, stored: string[]): Promise<number> {
  const first = stored.length > 0 ? parseHash(stored[0]) : null;
  if (!first) return -1;
  const got = await scrypt(password, first.salt, first.key.length, { N: first.n, r: first.r, p: first.p, maxmem: SCRYPT.maxmem });
  let found = -1;
  stored.forEach((h, i) => {
    const x = parseHash(h);
    if (
      x &&
      found < 0 &&
      x.saltText === first.saltText &&
      x.n === first.n &&
      x.r === first.r &&
      x.p === first.p &&
      x.key.length === got.length &&
      timingSafeEqual(got, x.key)
    )
      found = i;
  });
  return found;
}

/** Checked against when no member has the email, so that a refusal takes as long either way. */
let decoy: Promise<string> | undefined;
const decoyHash = () => (decoy ??= hashPassword(randomBytes(12).toString('base64url')));

/**
 * A gate of `slots` concurrent tasks per process. Waiting tasks are queued per key (the client's
 * address) and served in turn, one key after another, so that the 300 attempts of 30 addresses
 * put a newcomer behind at most one attempt of each, not behind all 300. A task marked `first`
 * (an address and account with no failed check in the window: a member signing in) waits only
 * behind other such tasks. A task that waits longer than `maxWaitMs`, or finds its key's queue or
 * the whole gate full, is not run (ran: false).
 */
export class FairGate {
  private running = 0;
  private waiting = 0;
  private readonly lanes = { first: new Map<string, Array<() => void>>(), rest: new Map<string, Array<() => void>>() };

  constructor(
    readonly slots: number,
    readonly maxWaitMs: number,
    readonly maxPerKey: number,
    readonly maxWaiting: number,
  ) {}

  async run<T>(key: string, task: () => Promise<T>, lane: 'first' | 'rest' = 'rest'): Promise<{ ran: true; value: T } | { ran: false }> {
    if (!(await this.enter(key, this.lanes[lane]))) return { ran: false };
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

  private enter(key: string, lane: Map<string, Array<() => void>>): Promise<boolean> {
    if (this.running < this.slots && this.waiting === 0) {
      this.running++;
      return Promise.resolve(true);
    }
    const queue = lane.get(key) ?? [];
    if (queue.length >= this.maxPerKey || this.waiting >= this.maxWaiting) return Promise.resolve(false);
    return new Promise<boolean>((resolve) => {
      const admit = () => {
        clearTimeout(timer);
        resolve(true);
      };
      const timer = setTimeout(() => {
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
 * The process's gate for password checks: two scrypt computations at once (each takes one core
 * for about 50-100 ms); an address with no failed check waits only behind others like it; any
 * address waits behind at most one attempt of every other waiting address, for at most 5 s, with
 * at most 10 of its own attempts waiting (its limit in a window).
 */
export const PASSWORD_GATE = new FairGate(2, 5_000, SIGN_IN_LIMIT, 1_000);

/** How long a check takes here, smoothed: a refusal without a check waits as long. */
let typicalCheckMs = 100;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export interface PasswordCheck {
  /** The account's key in the limits: the email as typed, trimmed and lower-cased. */
  account: string;
  address: string;
  password: string;
  /** The stored hashes to check against (one address's memberships); none: a decoy is checked. */
  stored: string[];
}

/**
 * One limited, uniform password check. Answers which stored hash matches (its index); 'wrong';
 * or 'limited' when the account or the address has had SIGN_IN_LIMIT failed checks in the last 15
 * minutes (sliding), or the gate could not take it in time: then nothing was checked, nothing
 * written, and the answer took about as long as a check. A failure keeps its count; a success
 * gives it back.
 */
export async function checkPassword(db: Queryable, c: PasswordCheck, now: Date): Promise<number | 'wrong' | 'limited'> {
  const started = Date.now();
  const spent = await spendAttempt(db, c.account, c.address, now);
  if (!spent) {
    // As long as a check takes, with nothing checked or written: a member and a stranger alike.
    await sleep(Math.max(0, typicalCheckMs - (Date.now() - started)));
    return 'limited';
  }
  const stored = c.stored.length > 0 ? c.stored : [await decoyHash()];
  const checked = await PASSWORD_GATE.run(
    c.address,
    async () => {
      const t = Date.now();
      const i = await matchPassword(c.password.slice(0, MAX_PASSWORD), stored);
      typicalCheckMs = Math.round(typicalCheckMs * 0.8 + (Date.now() - t) * 0.2);
      return i;
    },
    spent.failed === 0 ? 'first' : 'rest',
  );
  if (!checked.ran) {
    await spent.giveBack();
    return 'limited';
  }
  if (checked.value >= 0 && c.stored.length > 0) {
    await spent.giveBack();
    return checked.value;
  }
  return 'wrong';
}

/**
 * Counts one attempt against the account and the address, or answers null when either has had
 * SIGN_IN_LIMIT in the last 15 minutes (then nothing is written). Counted before and after this
 * attempt's own rows: of concurrent attempts, the k-th to commit its rows counts at least k, so no
 * more than the limit pass, on one process or many. A failed attempt keeps its count (for 15
 * minutes from its own instant: a sliding window); a successful one gives it back.
 */
export async function spendAttempt(db: Queryable, account: string, address: string, now: Date): Promise<{ failed: number; giveBack(): Promise<void> } | null> {
  const since = new Date(now.getTime() - SIGN_IN_WINDOW_MS);
  if ((await countAttempts(db, account, address, since)) >= SIGN_IN_LIMIT) return null;
  await recordAttempt(db, 'account', account, now);
  await recordAttempt(db, 'address', address, now);
  const giveBack = async () => {
    await refundAttempt(db, 'account', account, now);
    await refundAttempt(db, 'address', address, now);
  };
  const counted = await countAttempts(db, account, address, since);
  if (counted > SIGN_IN_LIMIT) {
    await giveBack();
    return null;
  }
  if (Math.random() < 0.01) await purgeAttempts(db, since);
  // Attempts of the account or address besides this one, failed or still running.
  return { failed: counted - 1, giveBack };
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
 * A password's hash for a membership of `email`: with the salt its other memberships share (one
 * scrypt signs in whichever matches), and never the password of another of them (a sign-in must
 * name one membership). Telling that reaches only someone who knows that other password.
 */
export async function hashMembershipPassword(db: Queryable, email: string, password: string, exceptMemberId: string | null): Promise<string> {
  const others = (await findPasswordHashesByEmail(db, email)).filter((h) => h.id !== exceptMemberId).map((h) => h.passwordHash);
  const hash = await hashPassword(password, others[0]);
  if (others.length > 0 && (await matchPassword(password, others)) >= 0) {
    throw invalid('Choose a password that you do not use for your membership of another organization on this service.');
  }
  return hash;
}

/** A password change ends every session of the member, the current one included (sign in again). */
export async function updatePassword(
  db: DatabaseExecutor,
  session: ConsoleSession,
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
  const hash = await hashMembershipPassword(db, m.email, next, m.id);
  await db.transaction(async (tx) => {
    await updateMemberPassword(tx, m.orgId, m.id, hash);
    await deleteMemberSessions(tx, m.orgId, m.id);
    await recordAudit(tx, m.orgId, actor, { action: 'member.password_changed', target: { kind: 'member', id: m.id }, details: {} }, now);
  });
}
