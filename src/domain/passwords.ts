import { createHash, createHmac, randomBytes, scrypt as scryptCallback, timingSafeEqual, type ScryptOptions } from 'node:crypto';
import type { DatabaseExecutor, Queryable } from './database.js';
import {
  countAttempts,
  countDeviceAttempts,
  deleteMemberSessions,
  findPasswordHashesByEmail,
  purgeAttempts,
  recordAttempt,
  refundAttempt,
  updateMemberPassword,
} from '../db/repositories/members.js';
import { serviceSecret } from '../db/repositories/secrets.js';
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
 * The order in which password attempts arrived: each takes the next number when it starts
 * (checkPasswordMatches, choosePassword) and keeps it through both gates, so that its place in
 * the first lane of the second gate is its arrival's, not the moment its database work ended.
 */
let arrivals = 0;
export const nextArrival = () => ++arrivals;

/**
 * A gate of `slots` concurrent tasks per process, in three lanes served in order: `known`, then
 * `first`, then `rest`.
 * - `known`: a browser whose device cookie a sign-in of that account set (its key is the cookie's
 *   nonce): it waits only for the tasks running and for other known ones, is never refused for its
 *   wait, and the bound on the whole gate's waiting tasks does not apply to it. Served key by key
 *   in turn.
 * - `first`: an account and address with no failed or running attempt in this process's memory
 *   (laneHints), so each address and each account has at most one attempt here at a time, and at
 *   most one that fails in 15 minutes: never refused for its wait. Served by arrival (the `arrival`
 *   number its attempt took when it started, kept through both gates), the newest and the oldest
 *   in turn (issue 52, M2), counting the tasks that hold their slot (a `light` one passes at once
 *   from whichever end is serving). The newest end serves a member who arrives after a burst of
 *   fresh addresses before the burst: a flood queued before them goes after them, and its tail of
 *   made-up emails, still trickling in, passes at once without taking the member's turn. The
 *   oldest end bounds every wait: a task is served within about twice the smaller of the
 *   computations that were ahead of it when it came and those that came after it while it waited,
 *   so a stream of fresh addresses sent just faster than the gate serves them cannot bury anyone
 *   for good (newest first alone would). Nothing of the order depends on what is read: the lane is chosen before, the arrival
 *   is the request's, so an email no membership has is served at the same turn as a member's.
 * - `rest`: every other, served key by key in turn (the 300 attempts of 30 addresses put a
 *   newcomer behind at most one attempt of each), refused (ran: false) after `maxWaitMs`.
 * Any task that finds its key's queue full, or (but a known one) the gate's, is not run. A task is
 * handed `release`, to give its slot back before it ends (a check that found nothing to compute);
 * a `light` task gives it back before it starts. `computed` counts the scrypt computations the
 * tasks report (for tests and metrics).
 */
export type GateLane = 'known' | 'first' | 'rest';
interface Arrived {
  key: string;
  arrival: number;
  light: boolean;
  admit: () => void;
}
export class FairGate {
  private running = 0;
  private waiting = 0;
  computed = 0;
  private readonly known = new Map<string, Array<() => void>>();
  private readonly rest = new Map<string, Array<() => void>>();
  /** The first lane, oldest arrival first; and how many of it each key has. */
  private readonly first: Arrived[] = [];
  private readonly firstOfKey = new Map<string, number>();
  private newestNext = true;

  constructor(
    readonly slots: number,
    readonly maxWaitMs: number,
    readonly maxPerKey: number,
    readonly maxWaiting: number,
  ) {}

  async run<T>(
    key: string,
    task: (release: () => void) => Promise<T>,
    lane: GateLane = 'rest',
    light = false,
    arrival = nextArrival(),
  ): Promise<{ ran: true; value: T } | { ran: false }> {
    if (!(await this.enter(key, lane, arrival, light))) return { ran: false };
    let held = true;
    const release = () => {
      if (!held) return;
      held = false;
      this.leave();
    };
    if (light) release();
    try {
      return { ran: true, value: await task(release) };
    } finally {
      release();
    }
  }

  /** Tasks running and waiting now (for tests and metrics). */
  get load() {
    return { running: this.running, waiting: this.waiting };
  }

  /** The gate whose known and first-lane waiting tasks go before this one's rest lane (see `follows`). */
  private ahead: FairGate | null = null;
  private behind: FairGate | null = null;

  /**
   * Makes this gate the second turn after `first`: while `first` has known or first-lane tasks
   * waiting, this gate starts none of its rest lane (a free slot waits for them), so that an
   * attempt of the first lanes still reading its hashes is not overtaken by the flood's guesses
   * that came through earlier. Rest tasks keep their deadline.
   */
  follows(first: FairGate) {
    this.ahead = first;
    first.behind = this;
    return this;
  }

  private get firstLanesWaiting(): boolean {
    return this.known.size > 0 || this.first.length > 0;
  }

  private get restHeld(): boolean {
    return this.ahead?.firstLanesWaiting ?? false;
  }

  private enter(key: string, laneName: GateLane, arrival: number, light: boolean): Promise<boolean> {
    if (this.running < this.slots && this.waiting === 0 && !(laneName === 'rest' && this.restHeld)) {
      this.running++;
      return Promise.resolve(true);
    }
    const ofKey = laneName === 'first' ? (this.firstOfKey.get(key) ?? 0) : (this[laneName].get(key)?.length ?? 0);
    if (ofKey >= this.maxPerKey || (laneName !== 'known' && this.waiting >= this.maxWaiting)) return Promise.resolve(false);
    return new Promise<boolean>((resolve) => {
      this.waiting++;
      if (laneName === 'first') {
        // In order of arrival: at the end in the first turn, where its arrival puts it in the second.
        let lo = 0;
        let hi = this.first.length;
        while (lo < hi) {
          const mid = (lo + hi) >> 1;
          if (this.first[mid].arrival < arrival) lo = mid + 1;
          else hi = mid;
        }
        this.first.splice(lo, 0, { key, arrival, light, admit: () => resolve(true) });
        this.firstOfKey.set(key, ofKey + 1);
      } else {
        const lane = this[laneName];
        let timer: NodeJS.Timeout | undefined;
        const admit = () => {
          clearTimeout(timer);
          resolve(true);
        };
        if (laneName === 'rest') {
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
        const queue = lane.get(key) ?? [];
        queue.push(admit);
        lane.set(key, queue);
      }
      this.pump();
    });
  }

  private leave() {
    this.running--;
    this.pump();
  }

  /** The next of a round-robin lane: the first key is the one served longest ago; after its turn it goes to the end. */
  private static inTurn(lane: Map<string, Array<() => void>>): (() => void) | undefined {
    const next = lane.entries().next();
    if (next.done) return undefined;
    const [key, queue] = next.value;
    const admit = queue.shift()!;
    lane.delete(key);
    if (queue.length > 0) lane.set(key, queue);
    return admit;
  }

  /**
   * The next of the first lane: the newest and the oldest arrival in turn, counting the tasks that
   * hold their slot (a light one passes at once and does not count: a trickle of made-up emails
   * arriving after a member, each served at once, does not turn the newest end away from them).
   */
  private byArrival(): (() => void) | undefined {
    if (this.first.length === 0) return undefined;
    const next = this.newestNext ? this.first.pop()! : this.first.shift()!;
    if (!next.light) this.newestNext = !this.newestNext;
    const left = (this.firstOfKey.get(next.key) ?? 1) - 1;
    if (left > 0) this.firstOfKey.set(next.key, left);
    else this.firstOfKey.delete(next.key);
    return next.admit;
  }

  /** Starts waiting tasks while slots are free: known, then first, then rest (unless held). */
  private pump() {
    while (this.running < this.slots) {
      const admit = FairGate.inTurn(this.known) ?? this.byArrival() ?? (this.restHeld ? undefined : FairGate.inTurn(this.rest));
      if (!admit) break;
      this.waiting--;
      this.running++;
      admit();
    }
    // The first lanes drained here: the gate behind may start its rest lane again.
    if (this.behind && !this.firstLanesWaiting) this.behind.pump();
  }
}

/**
 * The process's gate for password computations (checks, and the hashes of chosen passwords): two
 * at once (a scrypt takes one core for about 50-100 ms); a rest-lane task waits at most 5 s; an
 * address has at most 10 of its own attempts waiting (its limit in a window).
 */
export const PASSWORD_GATE = new FairGate(2, 5_000, SIGN_IN_LIMIT, 5_000);

/**
 * The turn before it, for each attempt's database work (the hashes read, the limits' counts
 * written): 8 at once, in the same lanes, so that a flood's queries queue behind a known browser's,
 * not before it (issue 52, M2): a known browser's queries wait behind at most 8 attempts' (about
 * as many as the database pool's connections), while a flood of emails that need no computation
 * still goes through several at a time.
 */
export const PASSWORD_ADMISSION = new FairGate(8, 5_000, SIGN_IN_LIMIT, 5_000);
PASSWORD_GATE.follows(PASSWORD_ADMISSION);

/**
 * What this process remembers of recent attempts, to choose a lane before anything is read: the
 * accounts and address keys with a failed check in the last 15 minutes (by the check's clock), and
 * those with an attempt running. The database's counts decide the limits; this decides only the
 * order, so a process that has not seen an address's failures (another process's, or from before a
 * restart) at worst puts it in the first lane. At most `max` keys are kept, the oldest dropped.
 */
export class LaneHints {
  private readonly failures = new Map<string, number>();
  private readonly running = new Map<string, number>();
  constructor(readonly max = 200_000) {}

  clean(keys: string[], now: Date): boolean {
    return keys.every((k) => !this.running.has(k) && !((this.failures.get(k) ?? Number.NEGATIVE_INFINITY) > now.getTime()));
  }
  begin(keys: string[]) {
    for (const k of keys) this.running.set(k, (this.running.get(k) ?? 0) + 1);
  }
  end(keys: string[]) {
    for (const k of keys) {
      const n = (this.running.get(k) ?? 1) - 1;
      if (n > 0) this.running.set(k, n);
      else this.running.delete(k);
    }
  }
  failed(keys: string[], now: Date) {
    for (const k of keys) {
      this.failures.delete(k);
      this.failures.set(k, now.getTime() + SIGN_IN_WINDOW_MS);
      if (this.failures.size > this.max) this.failures.delete(this.failures.keys().next().value!);
    }
  }
}
const LANE_HINTS = new LaneHints();
const hintKeys = (account: string, address: string) => [`account:${account}`, `address:${addressKey(address)}`];

/** How long a check takes here, smoothed: a refusal without a check, and a light check, wait as long. */
let typicalCheckMs = 100;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const timed = async <T>(work: () => Promise<T>): Promise<T> => {
  const t = Date.now();
  const value = await work();
  typicalCheckMs = Math.round(typicalCheckMs * 0.8 + (Date.now() - t) * 0.2);
  return value;
};

// Device cookies (OWASP's "device cookies"): a browser where an account signed in keeps, per
// account, a token the service signed: `nonce.laneTag.limitTag`, each part 22 base64url
// characters. The lane tag, HMAC(device key, account, nonce), is checked before anything is read
// and puts the browser's attempts for that account in the gate's known lane. The limit tag,
// HMAC(device key, account, nonce, the membership's password hash), is checked against the hashes
// read in the gate: when it holds, the attempt is limited by the token's own failures (10 in 15
// minutes) instead of the account's and the address's, so a flood that spends the account's limit
// does not lock its member out of the browser they use; a password change voids it. A cookie holds
// at most DEVICE_TOKENS tokens (accounts), the newest first.

export const DEVICE_TOKENS = 5;
const TOKEN = /^([A-Za-z0-9_-]{22})\.([A-Za-z0-9_-]{22})\.([A-Za-z0-9_-]{22})$/;
const deviceKeys = new WeakMap<object, Promise<Buffer>>();

/** The device key of a database, read once per executor (serviceSecret writes it the first time). */
function deviceKeyOf(db: Queryable): Promise<Buffer> {
  let key = deviceKeys.get(db);
  if (!key) {
    key = serviceSecret(db, 'device_cookie_key').then((secret) => createHash('sha256').update('climate-pulse device cookie\0').update(secret).digest());
    key.catch(() => deviceKeys.delete(db));
    deviceKeys.set(db, key);
  }
  return key;
}
const tag = (key: Buffer, ...parts: string[]) => createHmac('sha256', key).update(parts.join('\0')).digest('base64url').slice(0, 22);
const sameTag = (a: string, b: string) => a.length === b.length && timingSafeEqual(Buffer.from(a), Buffer.from(b));

interface DeviceToken {
  text: string;
  nonce: string;
  laneTag: string;
  limitTag: string;
}
function deviceTokens(cookie: string | undefined): DeviceToken[] {
  if (!cookie || cookie.length > DEVICE_TOKENS * 70) return [];
  return cookie
    .split('~')
    .slice(0, DEVICE_TOKENS)
    .flatMap((text) => {
      const m = TOKEN.exec(text);
      return m ? [{ text, nonce: m[1], laneTag: m[2], limitTag: m[3] }] : [];
    });
}

/** The token of `cookie` that a sign-in of `account` set (its lane tag holds), if any. */
async function deviceTokenFor(db: Queryable, cookie: string | undefined, account: string): Promise<DeviceToken | null> {
  const tokens = deviceTokens(cookie);
  if (tokens.length === 0 || !account) return null;
  const key = await deviceKeyOf(db);
  return tokens.find((t) => sameTag(t.laneTag, tag(key, 'lane', account, t.nonce))) ?? null;
}

/**
 * The device cookie to set after `account` signed in with the password whose stored hash is
 * `hash`: a new token for it first, then the cookie's tokens of other accounts (at most
 * DEVICE_TOKENS in all). A token of the same account is replaced.
 */
export async function deviceCookieAfterSignIn(db: Queryable, previous: string | undefined, account: string, hash: string): Promise<string> {
  const key = await deviceKeyOf(db);
  const nonce = randomBytes(16).toString('base64url');
  const fresh = `${nonce}.${tag(key, 'lane', account, nonce)}.${tag(key, 'limit', account, nonce, hash)}`;
  const others = deviceTokens(previous).filter((t) => !sameTag(t.laneTag, tag(key, 'lane', account, t.nonce)));
  return [fresh, ...others.map((t) => t.text)].slice(0, DEVICE_TOKENS).join('~');
}

export interface PasswordCheck {
  /** The account's key in the limits: the email as typed, trimmed and lower-cased. */
  account: string;
  /** The client's address (its key in the limits is addressKey's). */
  address: string;
  password: string;
  /**
   * The stored hashes to check against (one address's memberships), or how to read them: read in
   * the gate, in the attempt's turn. None: nothing is computed, and the answer waits as long.
   */
  stored: string[] | (() => Promise<string[]>);
  /** The device cookie the browser sent with a sign-in, if any. */
  device?: string;
}

/**
 * One limited, uniform password check. Answers which stored hashes match (their indices, in order;
 * several memberships of one address may share a password), none, or 'limited' when the account or
 * the address has had SIGN_IN_LIMIT failed checks in the last 15 minutes (sliding), or, for a
 * device cookie whose limit tag holds, the token has; or a gate could not take it in time: then
 * nothing was checked, nothing written, and the answer took about as long as a check. A failure
 * keeps its count; a success gives it back.
 *
 * Two turns, in the same lane and with the same arrival (taken first thing): the database's
 * (PASSWORD_ADMISSION: the hashes read, the limits spent), then the computation's (PASSWORD_GATE).
 * A check for an email no membership has takes its turn in the second as well, the turn a member's
 * would have, gives it back at once, and answers after a check's time.
 */
export async function checkPasswordMatches(db: Queryable, c: PasswordCheck, now: Date): Promise<number[] | 'limited'> {
  const started = Date.now();
  const arrival = nextArrival();
  const device = c.device ? await deviceTokenFor(db, c.device, c.account) : null;
  const key = device ? `device:${device.nonce}` : addressKey(c.address);
  const hints = hintKeys(c.account, c.address);
  let lane: GateLane = device ? 'known' : LANE_HINTS.clean(hints, now) ? 'first' : 'rest';
  LANE_HINTS.begin(hints);
  let outcome: number[] | 'limited' = 'limited';
  try {
    const read = await PASSWORD_ADMISSION.run(
      key,
      async () => {
        const stored = typeof c.stored === 'function' ? await c.stored() : c.stored;
        let trusted: string | undefined;
        if (device) {
          const deviceKey = await deviceKeyOf(db);
          if (stored.some((h) => sameTag(device.limitTag, tag(deviceKey, 'limit', c.account, device.nonce, h)))) trusted = device.nonce;
        }
        return { stored, spent: await spendAttempt(db, c.account, c.address, now, trusted) };
      },
      lane,
      false,
      arrival,
    );
    const spent = read.ran ? read.value.spent : null;
    if (!read.ran || !spent) {
      // Refused for its wait, a full queue, or the limits: nothing was checked, and nothing written.
      await sleep(Math.max(0, typicalCheckMs - (Date.now() - started)));
    } else {
      const { stored } = read.value;
      // The database knows failures this process has not seen (another's, or from before a restart).
      if (lane === 'first' && spent.failed > 0) lane = 'rest';
      const checked =
        stored.length > 0
          ? await PASSWORD_GATE.run(
              key,
              () => {
                PASSWORD_GATE.computed++;
                return timed(() => matchPasswords(c.password.slice(0, MAX_PASSWORD), stored));
              },
              lane,
              false,
              arrival,
            )
          : // No membership has the email: its turn in the gate (the same turn: the lane and the
            // arrival were fixed before the read), then a check's time, without the check.
            await PASSWORD_GATE.run(key, () => sleep(typicalCheckMs).then(() => [] as number[]), lane, true, arrival);
      if (!checked.ran) await spent.giveBack();
      else {
        if (checked.value.length > 0) await spent.giveBack();
        outcome = checked.value;
      }
    }
  } finally {
    LANE_HINTS.end(hints);
  }
  if (outcome === 'limited' || outcome.length === 0) LANE_HINTS.failed(hints, now);
  return outcome;
}

/** checkPasswordMatches for one membership's check: the first match's index, 'wrong' or 'limited'. */
export async function checkPassword(db: Queryable, c: PasswordCheck, now: Date): Promise<number | 'wrong' | 'limited'> {
  const found = await checkPasswordMatches(db, c, now);
  return found === 'limited' ? found : (found[0] ?? 'wrong');
}

/**
 * A password chosen for an address (accepting an invitation, the Account page's new password): its
 * hash, made in the same gates under the same limits as a check, never compared with anything. The
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
  const arrival = nextArrival();
  const key = addressKey(c.address);
  const hints = hintKeys(c.account, c.address);
  let lane: GateLane = LANE_HINTS.clean(hints, now) ? 'first' : 'rest';
  LANE_HINTS.begin(hints);
  let made: string | 'limited' = 'limited';
  try {
    const read = await PASSWORD_ADMISSION.run(key, () => spendAttempt(db, c.account, c.address, now), lane, false, arrival);
    const spent = read.ran ? read.value : null;
    if (!spent) await sleep(Math.max(0, typicalCheckMs - (Date.now() - started)));
    else {
      if (lane === 'first' && spent.failed > 0) lane = 'rest';
      const hashed = await PASSWORD_GATE.run(
        key,
        () => {
          PASSWORD_GATE.computed++;
          return timed(() => hashPassword(c.password, c.sameSaltAs));
        },
        lane,
        false,
        arrival,
      );
      if (!hashed.ran) await spent.giveBack();
      else {
        await spent.giveBackAddress();
        made = hashed.value;
      }
    }
  } finally {
    LANE_HINTS.end(hints);
  }
  // The account's attempt is kept, as a failure's is: so is its place in the order.
  LANE_HINTS.failed([hints[0]], now);
  return made;
}

/**
 * Counts one attempt against the account and the address (its addressKey), or answers null when
 * either has had SIGN_IN_LIMIT in the last 15 minutes (then nothing is written). With `device` (a
 * device token's nonce whose limit tag holds), the token's own attempts are what may refuse it,
 * and it counts against all three. Counted before and after this attempt's own rows: of concurrent
 * attempts, the k-th to commit its rows counts at least k, so no more than the limit pass, on one
 * process or many. A failed attempt keeps its count (for 15 minutes from its own instant: a
 * sliding window); a successful one gives it back.
 */
export async function spendAttempt(
  db: Queryable,
  account: string,
  address: string,
  now: Date,
  device?: string,
): Promise<{ failed: number; giveBack(): Promise<void>; giveBackAddress(): Promise<void> } | null> {
  const since = new Date(now.getTime() - SIGN_IN_WINDOW_MS);
  const addr = addressKey(address);
  const count = () => (device ? countDeviceAttempts(db, device, since) : countAttempts(db, account, addr, since));
  if ((await count()) >= SIGN_IN_LIMIT) return null;
  await recordAttempt(db, 'account', account, now);
  await recordAttempt(db, 'address', addr, now);
  if (device) await recordAttempt(db, 'device', device, now);
  const giveBackAddress = () => refundAttempt(db, 'address', addr, now);
  const giveBack = async () => {
    await refundAttempt(db, 'account', account, now);
    await giveBackAddress();
    if (device) await refundAttempt(db, 'device', device, now);
  };
  const counted = await count();
  if (counted > SIGN_IN_LIMIT) {
    await giveBack();
    return null;
  }
  if (Math.random() < 0.01) await purgeAttempts(db, since);
  // Attempts of the account or address (or of the device token) besides this one, failed or still running.
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
