import { constants, createHash, createPublicKey, publicEncrypt, randomBytes } from 'node:crypto';
import type { DatabaseExecutor } from '../db/executor.js';
import { serviceSecret } from '../db/repositories/secrets.js';
import { MODULUS_BITS, PREFIX_LENGTH, SALT_LENGTH } from '../crypto/blind-rsa.js';
import type { Actor } from './audit.js';
import { answerCheckin, issueCheckinToken, openCheckin } from './checkins/answers.js';
import { CheckinKeys } from './checkins/keys.js';
import { replaceRoster } from './checkins/roster.js';
import { exportWeekLinks } from './checkins/rounds.js';
import { updateCheckinSettings } from './checkins/settings.js';
import { addWeeks, roundTime, weekOf } from './checkins/week.js';

/**
 * The demo organization's check-ins (issue 53: a newcomer sees check-ins at work). A roster of
 * four teams and one past round, last week's, answered by most of its people, all made through the
 * service's own operations: the roster file, the links file (which starts the round without mail,
 * as on a server without SMTP_URL), and each answer's three steps (open the link, obtain the blind
 * signature, answer with the token), so every rule of anonymity holds for the demo's data as for
 * any other: the links are never kept, and the answers are the round's unnamed pulses.
 *
 * Engineering has nobody on the roster (its pulses come through the API), and this week's round is
 * set for a day still to come: the README's walkthrough adds you to Engineering, alone there, and
 * your first download starts this week's round with you on it.
 */

const DAY = 86_400_000;

/** Who is asked, by team: Customer Support and Sales answer as teams, Design just does (5), People & Ops (3) counts in the organization's total. */
const ROSTER: Record<string, string[]> = {
  'Customer Support': ['amira.haddad', 'ben.okafor', 'carla.mendes', 'dmitri.volkov', 'eva.lindqvist', 'farid.rahimi', 'grace.chen', 'hugo.martin'],
  Sales: ['ines.garcia', 'jonas.weber', 'kiri.tane', 'lena.novak', 'marco.rossi', 'nadia.petrova', 'oscar.dubois'],
  Design: ['priya.nair', 'quentin.moreau', 'rosa.alvarez', 'sam.taylor', 'tomoko.sato'],
  'People & Ops': ['uma.kapoor', 'victor.lebrun', 'wen.li'],
};
export const DEMO_ROSTER_DOMAIN = 'demo-company.example';
export const DEMO_REASONS = ['workload', 'team', 'management', 'growth', 'balance'];
/** How many of each team answered last week (the others opened their link, or not). */
const ANSWERED: Record<string, number> = { 'Customer Support': 6, Sales: 5, Design: 4, 'People & Ops': 2 };
const COMMENTS = ['Queue was long again, but we helped each other out.', 'Good week, the new pipeline review helped.', 'Too many context switches.'];

/** The demo's round: the day after today (UTC) at 09:00, or today at 23:00 on a Sunday, so that this week's round has not started when the demo is new. */
export function demoSchedule(now: Date): { weekday: number; hour: number; timeZone: string; reminderWeekday: number | null } {
  const today = ((now.getUTCDay() + 6) % 7) + 1; // ISO: Monday 1 .. Sunday 7
  const weekday = today < 7 ? today + 1 : 7;
  return { weekday, hour: today < 7 ? 9 : 23, timeZone: 'UTC', reminderWeekday: weekday + 2 <= 7 ? weekday + 2 : null };
}

// The check-in page's half of RFC 9474 (prepare, blind, finalize), as the page does it; the
// service verifies every token it is given, so a mistake here is a refused answer.
const K = MODULUS_BITS / 8;
const toBig = (b: Uint8Array) => BigInt(`0x${Buffer.from(b).toString('hex') || '0'}`);
const toBytes = (x: bigint) => Buffer.from(x.toString(16).padStart(K * 2, '0'), 'hex');
const sha384 = (...parts: Buffer[]) => parts.reduce((h, p) => h.update(p), createHash('sha384')).digest();

function inverse(a: bigint, n: bigint): bigint {
  let [r0, r1, t0, t1] = [n, a % n, 0n, 1n];
  while (r1 !== 0n) {
    const q = r0 / r1;
    [r0, r1, t0, t1] = [r1, r0 - q * r1, t1, t0 - q * t1];
  }
  return t0 < 0n ? t0 + n : t0;
}

function emsaPss(message: Buffer): Buffer {
  const hLen = 48;
  const salt = randomBytes(SALT_LENGTH);
  const h = sha384(Buffer.alloc(8), sha384(message), salt);
  const db = Buffer.alloc(K - hLen - 1);
  db[K - SALT_LENGTH - hLen - 2] = 0x01;
  salt.copy(db, K - SALT_LENGTH - hLen - 1);
  for (let c = 0, at = 0; at < db.length; c++, at += hLen) {
    const counter = Buffer.alloc(4);
    counter.writeUInt32BE(c);
    const mask = sha384(h, counter);
    for (let i = 0; i < hLen && at + i < db.length; i++) db[at + i] ^= mask[i]!;
  }
  db[0] &= 0x7f;
  return Buffer.concat([db, h, Buffer.from([0xbc])]);
}

function blind(publicKeyB64: string) {
  const key = createPublicKey({ key: Buffer.from(publicKeyB64, 'base64url'), format: 'der', type: 'spki' });
  const n = toBig(Buffer.from((key.export({ format: 'jwk' }) as { n: string }).n, 'base64url'));
  const prepared = Buffer.concat([randomBytes(PREFIX_LENGTH), randomBytes(32)]);
  let r: bigint;
  do r = toBig(randomBytes(K)) % n;
  while (r < 2n);
  const x = toBig(publicEncrypt({ key, padding: constants.RSA_NO_PADDING }, toBytes(r)));
  return {
    message: prepared.toString('base64url'),
    blindedMessage: toBytes((toBig(emsaPss(prepared)) * x) % n).toString('base64url'),
    finalize: (blindSig: Buffer) => toBytes((toBig(blindSig) * inverse(r, n)) % n).toString('base64url'),
  };
}

/** A small seeded generator (mulberry32), so a demo looks the same for one seed. */
function prng(seed: number) {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export interface DemoCheckins {
  respondents: number;
  /** Last week's round: its week and how many answered. */
  week: string;
  answers: number;
}

/**
 * The demo's roster (joined two months ago), its schedule and reasons, and last week's round with
 * its answers, each given on a working day of that week. Not an operation of its own (so not
 * named like one, test/contract/layers.test.ts): each operation it goes through writes its own
 * audit row as `actor`'s (the operator, for the demo), and the answers none, as any answer.
 */
export async function seedDemoCheckins(
  db: DatabaseExecutor,
  orgId: string,
  actor: Actor,
  now: Date,
  opts: { seed?: number; releaseDelayHours?: number } = {},
): Promise<DemoCheckins> {
  const rnd = prng(opts.seed ?? 7);
  const lines = ['email,team', ...Object.entries(ROSTER).flatMap(([team, people]) => people.map((p) => `${p}@${DEMO_ROSTER_DOMAIN},${team}`))];
  const joined = new Date(now.getTime() - 60 * DAY);
  await replaceRoster(db, orgId, lines.join('\n'), actor, joined);
  const schedule = demoSchedule(now);
  await updateCheckinSettings(db, orgId, { ...schedule, reasons: DEMO_REASONS }, actor, joined);

  const week = addWeeks(weekOf(now), -1);
  const started = roundTime(week, schedule);
  const keys = new CheckinKeys(await serviceSecret(db, 'checkin_key_seal'));
  // The links file starts last week's round, as it did on that day without SMTP_URL.
  const file = await exportWeekLinks(db, orgId, { linkFor: (_o, token) => token, mails: false, keys }, actor, started);
  let answers = 0;
  for (const team of Object.keys(ROSTER)) {
    const mine = file.links.filter((l) => l.team === team);
    for (const [i, person] of mine.entries()) {
      const at = new Date(Math.min(started.getTime() + (1 + rnd() * 50) * 3_600_000, now.getTime() - 3_600_000));
      if (i >= ANSWERED[team]! + 1) continue; // never opened
      const opened = await openCheckin(db, keys, orgId, person.link, at);
      if (i === ANSWERED[team]) continue; // opened, no answer
      const b = blind(opened.publicKey);
      const sig = await issueCheckinToken(db, keys, orgId, person.link, b.blindedMessage, at);
      const low = team === 'Customer Support';
      const level = Math.min(5, Math.max(1, Math.round((low ? 2.4 : 3.8) + (rnd() - 0.5) * 2.4)));
      await answerCheckin(
        db,
        keys,
        orgId,
        {
          keyId: opened.keyId,
          message: b.message,
          signature: b.finalize(sig),
          level,
          reason: rnd() < 0.6 ? DEMO_REASONS[Math.floor(rnd() * DEMO_REASONS.length)] : null,
          comment: rnd() < 0.25 ? COMMENTS[Math.floor(rnd() * COMMENTS.length)] : null,
        },
        { releaseDelayHours: opts.releaseDelayHours ?? 24 },
        at,
      );
      answers++;
    }
  }
  return { respondents: lines.length - 1, week, answers };
}
