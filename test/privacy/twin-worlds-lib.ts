import { constants, createHash, createPublicKey, randomBytes, verify } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';
import { sql, type DatabaseExecutor } from '../../src/db/executor.js';
import { ROLLUP_TABLES } from '../../src/db/pulse-writes.js';
import { insertSessionRow } from '../../src/db/repositories/members.js';
import { operatorActor } from '../../src/domain/audit.js';
import { CommentReleases, listCommentPageWithHandles, updateCommentHidden } from '../../src/domain/comments.js';
import { loadDataset } from '../../src/domain/dataset.js';
import { importPulses } from '../../src/domain/import.js';
import { ingestPulses } from '../../src/domain/ingest.js';
import { inviteMember } from '../../src/domain/members.js';
import { acceptInvitation } from '../../src/domain/sessions.js';
import { moderatePulse } from '../../src/domain/moderation.js';
import { emsa_pss_encode } from '@cloudflare/blindrsa-ts/lib/src/util.js';
import { generateBlindKeyPair, type BlindKeyPair } from '../../src/crypto/blind-rsa.js';
import { insertCheckinKey, roundSlots } from '../../src/db/repositories/checkins.js';
import { serviceSecret } from '../../src/db/repositories/secrets.js';
import { CheckinKeys } from '../../src/domain/checkins/keys.js';
import { createRespondent, deleteRespondent, MIN_TEAM, moveRespondent } from '../../src/domain/checkins/roster.js';
import { participation, RECENT_JOIN_MS, runRounds } from '../../src/domain/checkins/rounds.js';
import { holdsFlaggedWord, updateCheckinSettings } from '../../src/domain/checkins/settings.js';
import { addWeeks, roundTime, weekOf, weekStart } from '../../src/domain/checkins/week.js';

/**
 * The twin-worlds proof of CONTRACT.md section 5 (issue 40). Two organizations of one database are
 * two worlds that differ only in which pulse of one team-week wrote one comment (the *twin*
 * comment): pulse X holds it in world A, pulse Y (same team, same week) in world B, and the other of
 * the two has none. Every operation is applied to both worlds; the moderations, hidings and
 * showings of a comment follow the comment to the pulse that holds it in each world (and do nothing
 * in a world where it has not arrived yet). Every read (every public endpoint, the console's comments
 * data) is compared between the worlds at every step. When the twin comment ends up released, the
 * two worlds must have answered alike: nothing an organization can read tells which pulse wrote it.
 *
 * Inside a week comments come in the order of a keyed hash of their pulse ids: a pseudo-random
 * permutation that nobody without the server's secret can compute, which differs between the two
 * worlds as it would between two secrets. Answers are therefore compared with each week's comments
 * as a set (in a canonical order), and a sealed cursor by the pages it leads to.
 *
 * This file imports no test runner: test/privacy/twin-worlds.test.ts runs it in CI with a fixed
 * seed, and `npm run prove-privacy -- --runs N` runs it by hand (scripts/prove-privacy.ts).
 */

const DAY = 86_400_000;
const HOUR = 3_600_000;
/** Monday of week 0 of every scenario. */
const BASE = Date.parse('2026-06-01T00:00:00.000Z');
const WEEKS = 3;
const TEAMS = ['team_a', 'team_b'] as const;
const SECRET = 'twin-worlds-comment-secret-0123456789abcdef';

export type Status = 'CLEAN' | 'FLAGGED';
type Group = (typeof TEAMS)[number] | null;

/** One pulse of a scenario, the same in both worlds but for the twin comment. */
export interface Spec {
  week: number;
  hour: number;
  group: Group;
  status: Status;
  level: number;
  reason: string | null;
  comment: boolean;
}

export type Op =
  | { k: 'ingest'; n: number; via: 'api' | 'import' | 'load' }
  | { k: 'time'; hours: number }
  | { k: 'modTwin'; status: Status }
  | { k: 'mod'; spec: number; status: Status }
  | { k: 'hide'; twin: boolean; spec: number }
  | { k: 'show'; twin: boolean; spec: number }
  | { k: 'comments'; from: number; days: number; team: Group | undefined; limit: number }
  | { k: 'pulses'; from: number; days: number; team: Group | undefined; level: number | undefined; limit: number }
  | { k: 'stats' }
  | { k: 'daily'; from: number; days: number }
  | { k: 'console'; from: number; days: number; team: Group | undefined }
  // Check-ins (issue 51): rounds, openings, answers through the page's three requests, roster and words.
  | { k: 'round' }
  | { k: 'open'; who: number }
  | { k: 'answer'; who: number; level: number; reason: string | null; comment: boolean; word: boolean; team: boolean; late: boolean }
  | { k: 'twinAnswer'; which: 0 | 1; level: number; reason: string | null; late: boolean }
  | { k: 'move'; who: number; team: Group }
  | { k: 'add'; team: Group }
  | { k: 'remove'; who: number }
  | { k: 'flags'; words: string[] }
  | { k: 'participation' };

export interface Scenario {
  specs: Spec[];
  /** Indexes into specs: the twin comment is on `x` in world A, on `y` in world B. */
  x: number;
  y: number;
  ops: Op[];
  /** The check-in roster at the start: each respondent's team. None: the scenario has no check-ins. */
  roster?: Group[];
  /**
   * When set, the twin comment is a check-in answer's: respondent `tx` writes it in world A and `ty`
   * in world B (both of one team at the start), the other answering without a comment; both attach
   * their team or not (`team`), and the comment holds the word 'reorg' or not (`word`). Pulses x and
   * y are then ordinary pulses, alike in both worlds.
   */
  checkinTwin?: { tx: number; ty: number; team: boolean; word: boolean };
}

const statusArb = fc.constantFrom<Status>('CLEAN', 'CLEAN', 'CLEAN', 'FLAGGED');
const groupArb = fc.constantFrom<Group>('team_a', 'team_a', 'team_a', 'team_a', 'team_b', null);
const teamFilterArb = fc.constantFrom<Group | undefined>(undefined, 'team_a', 'team_a', 'team_b');
const specArb: fc.Arbitrary<Spec> = fc.record({
  week: fc.constantFrom(0, 0, 0, 0, 1, 1, 2),
  hour: fc.integer({ min: 0, max: 7 * 24 - 1 }),
  group: groupArb,
  status: statusArb,
  level: fc.integer({ min: 1, max: 5 }),
  reason: fc.constantFrom(null, 'workload', 'team'),
  comment: fc.boolean(),
});
/** A day offset from BASE and a length in days: ranges around the scenario's weeks. */
const rangeArb = fc.record({ from: fc.integer({ min: -3, max: 7 * WEEKS + 2 }), days: fc.integer({ min: 1, max: 7 * WEEKS + 3 }) });

const opArb = (nSpecs: number): fc.Arbitrary<Op> =>
  fc.oneof(
    {
      weight: 6,
      arbitrary: fc.record({
        k: fc.constant('ingest' as const),
        n: fc.integer({ min: 1, max: 4 }),
        via: fc.constantFrom('api' as const, 'api' as const, 'import' as const, 'load' as const),
      }),
    },
    { weight: 5, arbitrary: fc.record({ k: fc.constant('time' as const), hours: fc.constantFrom(1, 6, 24, 48, 24 * 7, 24 * 9) }) },
    { weight: 5, arbitrary: fc.record({ k: fc.constant('modTwin' as const), status: fc.constantFrom<Status>('CLEAN', 'FLAGGED') }) },
    { weight: 3, arbitrary: fc.record({ k: fc.constant('mod' as const), spec: fc.nat({ max: nSpecs - 1 }), status: statusArb }) },
    { weight: 2, arbitrary: fc.record({ k: fc.constant('hide' as const), twin: fc.boolean(), spec: fc.nat({ max: nSpecs - 1 }) }) },
    { weight: 2, arbitrary: fc.record({ k: fc.constant('show' as const), twin: fc.boolean(), spec: fc.nat({ max: nSpecs - 1 }) }) },
    {
      weight: 5,
      arbitrary: fc.record({
        k: fc.constant('comments' as const),
        from: rangeArb.map((r) => r.from),
        days: rangeArb.map((r) => r.days),
        team: teamFilterArb,
        limit: fc.integer({ min: 1, max: 8 }),
      }),
    },
    {
      weight: 3,
      arbitrary: fc.record({
        k: fc.constant('pulses' as const),
        from: rangeArb.map((r) => r.from),
        days: rangeArb.map((r) => r.days),
        team: teamFilterArb,
        level: fc.option(fc.integer({ min: 1, max: 5 }), { nil: undefined }),
        limit: fc.integer({ min: 5, max: 30 }),
      }),
    },
    { weight: 1, arbitrary: fc.constant({ k: 'stats' as const }) },
    { weight: 1, arbitrary: fc.record({ k: fc.constant('daily' as const), from: rangeArb.map((r) => r.from), days: rangeArb.map((r) => r.days) }) },
    {
      weight: 2,
      arbitrary: fc.record({ k: fc.constant('console' as const), from: rangeArb.map((r) => r.from), days: rangeArb.map((r) => r.days), team: teamFilterArb }),
    },
  );

const whoArb = fc.nat({ max: 15 });
const levelArb = fc.integer({ min: 1, max: 5 });
const reasonArb = fc.constantFrom(null, 'workload', 'team');
/** Check-in operations: rounds, openings and answers (the twin pair's among them), roster moves and flag words. */
const checkinOpArb: fc.Arbitrary<Op> = fc.oneof(
  { weight: 3, arbitrary: fc.constant({ k: 'round' as const }) },
  { weight: 1, arbitrary: fc.record({ k: fc.constant('open' as const), who: whoArb }) },
  {
    weight: 8,
    arbitrary: fc.record({
      k: fc.constant('answer' as const),
      who: whoArb,
      level: levelArb,
      reason: reasonArb,
      comment: fc.boolean(),
      word: fc.boolean(),
      team: fc.constantFrom(true, true, true, false),
      late: fc.constantFrom(false, false, false, true),
    }),
  },
  {
    weight: 4,
    arbitrary: fc.record({
      k: fc.constant('twinAnswer' as const),
      which: fc.constantFrom<0 | 1>(0, 1),
      level: levelArb,
      reason: reasonArb,
      late: fc.constantFrom(false, false, false, true),
    }),
  },
  { weight: 2, arbitrary: fc.record({ k: fc.constant('move' as const), who: whoArb, team: groupArb }) },
  { weight: 1, arbitrary: fc.record({ k: fc.constant('add' as const), team: groupArb }) },
  { weight: 1, arbitrary: fc.record({ k: fc.constant('remove' as const), who: whoArb }) },
  { weight: 3, arbitrary: fc.record({ k: fc.constant('flags' as const), words: fc.constantFrom<string[]>([], ['reorg'], ['Reorg', 'layoffs'], ['layoffs']) }) },
  { weight: 1, arbitrary: fc.constant({ k: 'participation' as const }) },
);

/**
 * Scenarios: 6-30 pulses over 3 weeks and 3 groups, a twin pair of one team-week (its second pulse
 * moved there), and 1-`maxOps` operations. Shrinking keeps the pair a pair. `twinArrival` fixes the
 * pair's status on arrival (to look for one family of leaks at a time).
 */
export function scenarioArb(maxOps = 30, opts: { twinArrival?: Status; twin?: 'pulse' | 'checkin' } = {}): fc.Arbitrary<Scenario> {
  const twinArb = opts.twin === 'pulse' ? fc.constant(false) : opts.twin === 'checkin' ? fc.constant(true) : fc.boolean();
  return fc
    .array(specArb, { minLength: 6, maxLength: 30 })
    .chain((specs) =>
      fc.record({
        specs: fc.constant(specs),
        x: fc.nat({ max: specs.length - 1 }),
        y: fc.nat({ max: specs.length - 1 }),
        ops: fc.array(fc.oneof({ weight: 3, arbitrary: opArb(specs.length) }, { weight: 2, arbitrary: checkinOpArb }), { minLength: 1, maxLength: maxOps }),
        roster: fc.array(fc.constantFrom<Group>('team_a', 'team_a', 'team_a', 'team_b', 'team_b', null), { minLength: 6, maxLength: 12 }),
        checkin: twinArb,
        tx: fc.nat({ max: 11 }),
        ty: fc.nat({ max: 11 }),
        twinTeam: fc.constantFrom(true, true, false),
        twinWord: fc.boolean(),
        // Where the pair's two answers go among the operations, and a round before the first (most often).
        at: fc.tuple(fc.nat({ max: maxOps }), fc.nat({ max: maxOps }), fc.nat({ max: maxOps })),
        late: fc.constantFrom(false, false, false, true),
      }),
    )
    .filter((s) => s.x !== s.y)
    .map(({ checkin, tx, ty, twinTeam, twinWord, at, late, ...s }) => {
      // The check-in twins: two respondents of one team at the start.
      const roster = [...s.roster];
      const a = tx % roster.length;
      const b = a === ty % roster.length ? (a + 1) % roster.length : ty % roster.length;
      roster[b] = roster[a];
      if (!checkin) return { ...s, roster };
      // Both answers of the pair among the operations (so that moves, words and rounds fall between
      // them), the first after a round; the second late (with the week before's link) now and then.
      const ops = [...s.ops];
      const [p, q] = [Math.min(at[0], at[1]) % (ops.length + 1), Math.max(at[0], at[1]) % (ops.length + 1)].sort((u, v) => u - v);
      const first = at[0] <= at[1] ? 0 : 1;
      ops.splice(q, 0, { k: 'twinAnswer', which: (1 - first) as 0 | 1, level: 1 + (at[2] % 5), reason: null, late });
      ops.splice(p, 0, { k: 'twinAnswer', which: first as 0 | 1, level: 1 + ((at[2] >> 3) % 5), reason: 'workload', late: false });
      if (at[2] % 4 !== 0) ops.splice(Math.min(p, at[2] % (p + 1)), 0, { k: 'round' });
      return { ...s, roster, ops, checkinTwin: { tx: a, ty: b, team: twinTeam, word: twinWord } };
    })
    .map((s) => {
      const specs = s.specs.map((p) => ({ ...p }));
      // The pair is of one cell: same team, same week, and the same status as it arrived (a comment
      // hides only among the pulses shown with its own pulse's status).
      if (opts.twinArrival) specs[s.x] = { ...specs[s.x], status: opts.twinArrival };
      specs[s.y] = { ...specs[s.y], week: specs[s.x].week, group: specs[s.x].group, status: specs[s.x].status };
      specs[s.x] = { ...specs[s.x], comment: true };
      specs[s.y] = { ...specs[s.y], comment: false };
      return { ...s, specs };
    });
}

const commentText = (i: number) => `comment ${i}`;
const pulseId = (i: number) => `tw_p${String(i).padStart(3, '0')}`;
const dayOf = (offset: number) => new Date(BASE + offset * DAY).toISOString().slice(0, 10);

interface World {
  name: 'A' | 'B';
  orgId: string;
  key: string;
  /** The comment each spec holds in this world. */
  comment: (i: number) => string | null;
  /** The spec that holds the twin comment in this world. */
  twinHolder: number;
  /** The console's admin of this world's organization. */
  memberId: string;
  /** The check-in roster's ids, by the model's index. */
  respondents: string[];
  /** Each respondent's links from the round's mails: by week index, the token and whether its token was issued. */
  links: Map<number, Map<number, { token: string; issued: boolean }>>;
  /** The pulses of this organization seen so far (to find each answer's own). */
  pulses: Set<string>;
  /** The week index of each check-in comment (its link's week). */
  commentWeek: Map<string, number>;
  /** The check-in twin: the pulse of its comment here, and the pulse of the other answer of the pair. */
  checkinHolder: string | null;
  checkinOther: string | null;
  /** Whether a moderation of the twin comment's pulse changed its status in this world. */
  modded: boolean;
}

/** The model of the check-ins, the same for both worlds: the roster, the words, and each round as it was at its start. */
interface CheckinModel {
  roster: { team: Group; removed: boolean; since: number }[];
  flagWords: string[];
  /** By week index: each respondent's key slot ('' the organization's; absent: not on the round) and the words. */
  rounds: Map<number, { slot: Map<number, string>; people: Map<string, number>; recent: Map<string, number>; words: string[] }>;
  /** The week of the first answer of the check-in twin pair, in both worlds alike. */
  twinWeek: number | null;
  twinDone: [boolean, boolean];
}

/** Where the model and a world disagree: a check-in answer or opening not as the round fixed it at its start. */
export class ModelMismatch extends Error {}

/** A place where the two worlds answered differently. */
export interface Difference {
  step: number;
  op: Op;
  a: unknown;
  b: unknown;
}

export interface TwinHarness {
  /** Runs one scenario in both worlds; the first difference, and whether the twin comment ended up released. */
  run(s: Scenario): Promise<{ difference: Difference | null; twinReleased: boolean }>;
  close(): Promise<void>;
}

const resetTables = [
  'pulses',
  ...ROLLUP_TABLES,
  'comment_cells',
  'comment_release_members',
  'comment_frozen_groups',
  'audit_events',
  'console_sessions',
  'checkin_outbox',
  'checkin_round_links',
  'checkin_round_members',
  'checkin_spent',
  'checkin_round_slots',
  'checkin_keys',
  'checkin_rounds',
  'respondents',
  'checkin_settings',
];

const REASONS = ['workload', 'team'];
const twinText = (word: boolean) => (word ? 'checkin twin, about the reorg' : 'checkin twin');
const emailOf = (i: number) => `r${i}@twin.example`;
const weekIndex = (week: string) => Math.round((weekStart(week).getTime() - BASE) / (7 * DAY));

const big = (b: Uint8Array) => BigInt(`0x${Buffer.from(b).toString('hex') || '0'}`);
const bytesOf = (x: bigint, len: number) => Buffer.from(x.toString(16).padStart(len * 2, '0'), 'hex');
function modPow(b: bigint, e: bigint, m: bigint): bigint {
  let r = 1n;
  let x = b % m;
  for (let k = e; k > 0n; k >>= 1n) {
    if (k & 1n) r = (r * x) % m;
    x = (x * x) % m;
  }
  return r;
}
function modInverse(a: bigint, m: bigint): bigint {
  let [r0, r1, s0, s1] = [a, m, 1n, 0n];
  while (r1 !== 0n) {
    const q = r0 / r1;
    [r0, r1] = [r1, r0 - q * r1];
    [s0, s1] = [s1, s0 - q * s1];
  }
  if (r0 !== 1n) throw new Error('not invertible');
  return ((s0 % m) + m) % m;
}

/**
 * The page's client half of RFC 9474 (RSABSSA-SHA384-PSS-Randomized): the message prepared (a random
 * prefix), PSS-encoded by the library the page uses, blinded by a random r, and the blind signature
 * unblinded and verified. The arithmetic is done here with native BigInt, as the library's does with
 * its own big numbers (100-200 ms a token there, 2-10 ms here): the requests are the page's.
 */
async function blindClient(publicKeyB64: string) {
  const pub = createPublicKey({ key: Buffer.from(publicKeyB64, 'base64url'), format: 'der', type: 'spki' });
  const jwk = pub.export({ format: 'jwk' });
  const n = big(Buffer.from(jwk.n!, 'base64url'));
  const e = big(Buffer.from(jwk.e!, 'base64url'));
  const kLen = Math.ceil(n.toString(16).length / 2);
  const prepared = new Uint8Array(Buffer.concat([randomBytes(32), randomBytes(32)]));
  const encoded = await emsa_pss_encode(prepared, kLen * 8 - 1, { hash: 'SHA-384', sLen: 48 });
  let r = 0n;
  while (r <= 1n) r = big(randomBytes(kLen)) % n;
  const inv = modInverse(r, n);
  const z = (big(encoded) * modPow(r, e, n)) % n;
  return {
    blindedMessage: bytesOf(z, kLen).toString('base64url'),
    finalize(blindSignature: string) {
      const sig = bytesOf((big(Buffer.from(blindSignature, 'base64url')) * inv) % n, kLen);
      if (!verify('sha384', prepared, { key: pub, padding: constants.RSA_PKCS1_PSS_PADDING, saltLength: 48 }, sig))
        throw new Error('the blind signature does not verify');
      return { prepared: Buffer.from(prepared), sig };
    },
  };
}

/**
 * GET /v1/pulses' pages as compared: a check-in pulse's id is random (newId), as its cursor, so ids
 * of check-in pulses are masked, cursors reduced to whether there is a next page, and the pulses of
 * one instant (an hour's answers) put in a canonical order, as the comments of a week.
 */
function canonicalPulses(pages: unknown[]): unknown {
  const items: Record<string, unknown>[] = [];
  const shape = pages.map((p) => {
    const { items: its, nextCursor, ...rest } = p as { items?: Record<string, unknown>[]; nextCursor?: string | null };
    if (!its) return p;
    items.push(...its.map((i) => ({ ...i, id: typeof i.id === 'string' && i.id.startsWith('pls_') ? 'CHECKIN' : i.id })));
    return { ...rest, count: its.length, more: Boolean(nextCursor) };
  });
  const groups: Record<string, unknown>[][] = [];
  for (const i of items) {
    const last = groups[groups.length - 1];
    if (last && last[0].createdAt === i.createdAt) last.push(i);
    else groups.push([i]);
  }
  return { shape, items: groups.map((g) => g.map((i) => JSON.stringify(i)).sort()) };
}

/**
 * A console page in the form compared between the worlds: what differs by design between any two
 * requests is masked (form tokens, comment handles, sealed cursors, the organization's id), and
 * each week's comments are put in a canonical order, as for the API's answers.
 */
function canonicalPage(body: string, orgId: string, weekOfComment: (c: string) => number): string {
  const masked = body
    .replaceAll(orgId, 'ORG')
    .replace(/name="_csrf" value="[^"]*"/g, 'name="_csrf" value="TOKEN"')
    .replace(/name="handle" value="[^"]*"/g, 'name="handle" value="HANDLE"')
    .replace(/cursor=[^"&]*/g, 'cursor=CURSOR');
  // The items of each list of comments, each week's in a canonical order (by its text).
  return masked.replace(/<ol class="comments">([\s\S]*?)<\/ol>/g, (_, inner: string) => {
    const items = inner.match(/<li>[\s\S]*?<\/li>/g) ?? [];
    const text = (li: string) => /<bdi>([^<]*)<\/bdi>/.exec(li)?.[1] ?? '';
    const weeks: string[][] = [];
    for (const li of items) {
      const last = weeks[weeks.length - 1];
      if (last && weekOfComment(text(last[0])) === weekOfComment(text(li))) last.push(li);
      else weeks.push([li]);
    }
    // A button's label numbers the item ("Hide comment 3"): numbered again in the canonical order.
    let n = 0;
    const ordered = weeks.flatMap((w) => [...w].sort((a, b) => (text(a) < text(b) ? -1 : text(a) > text(b) ? 1 : 0)));
    return `<ol class="comments">${ordered.map((li) => li.replace(/comment \d+"/g, () => `comment ${++n}"`)).join('')}</ol>`;
  });
}

/** Two organizations on `db` and the app on them, with its clock in the harness's hands. */
export async function openTwinHarness(db: DatabaseExecutor, options: { model?: boolean; keyPool?: number } = {}): Promise<TwinHarness> {
  options.model ??= true;
  let clock = BASE;
  const now = () => new Date(clock);
  const config = loadConfig({
    LOG_LEVEL: 'silent',
    MAX_EVENT_LOOP_DELAY_MS: '0',
    COMMENTS_RELEASE_DELAY_HOURS: '0',
    COMMENT_CURSOR_SECRET: SECRET,
    CHECKIN_REQUESTS_PER_MINUTE: '1000000',
  });
  const app: FastifyInstance = await buildApp(config, { db, now, rateLimitNamespace: `twin-${process.pid}-${Date.now()}:` });
  const releases = new CommentReleases(SECRET, 0);
  const dir = mkdtempSync(join(tmpdir(), 'cp-twins-'));
  const worlds: World[] = [];
  for (const name of ['A', 'B'] as const) {
    const orgId = `org_twin_${name.toLowerCase()}`;
    const key = `cp_test_twin_${name.toLowerCase()}_0123456789abcdef`;
    await loadDataset(db, {
      plans: [{ name: 'twin', restApi: true, rateLimitPerMinute: 1_000_000_000 }],
      organizations: [
        {
          id: orgId,
          name: 'Twin',
          plan: 'twin',
          memberCount: 5,
          createdAt: '2026-01-01T00:00:00.000Z',
          deletedAt: null,
          apiKeys: [{ key, name: 'reader', revoked: false }],
          teams: TEAMS.map((id) => ({ id, name: id, createdAt: '2026-01-01T00:00:00.000Z' })),
        },
      ],
    });
    // One order salt for both: the worlds then differ in nothing but the twin comment's pulse.
    await db.query(sql('test.twin.salt', `UPDATE organizations SET order_salt = '\\x00112233445566778899aabbccddeeff' WHERE id = $1`), [orgId]);
    const invitation = await inviteMember(db, orgId, { email: 'admin@twin.example', role: 'admin' }, operatorActor(), now());
    const { memberId } = await acceptInvitation(db, { token: invitation.token, password: `twin worlds password ${name}` }, null, now());
    worlds.push({
      name,
      orgId,
      key,
      comment: () => null,
      twinHolder: -1,
      memberId,
      respondents: [],
      links: new Map(),
      pulses: new Set(),
      commentWeek: new Map(),
      checkinHolder: null,
      checkinOther: null,
      modded: false,
    });
  }
  const [A, B] = worlds;
  // The check-in keys: 2048-bit pairs made once and reused by every scenario (a key made at each
  // opening, as the service does, costs 0.2 s), inserted under new ids as the service's own keys
  // (sealed with its secret) right after each round starts. A scenario's first `keyPool` keys are
  // distinct pairs; later ones take the pool's pairs again.
  const sealer = new CheckinKeys(await serviceSecret(db, 'checkin_key_seal'));
  const pool: BlindKeyPair[] = [];
  const poolSize = options.keyPool ?? 8;
  let poolNext = 0;
  let keySerial = 0;
  const keysOfRound = async (w: World, week: string) => {
    for (const slot of await roundSlots(db, w.orgId, week)) {
      if (pool.length < poolSize && poolNext >= pool.length) pool.push(await generateBlindKeyPair());
      const pair = pool[poolNext++ % pool.length];
      const id = `ck_twin${++keySerial}p${process.pid}`;
      await insertCheckinKey(db, w.orgId, {
        id,
        week,
        teamSlot: slot.teamSlot,
        publicSpki: pair.publicSpki,
        privateSealed: sealer.seal(w.orgId, id, pair.privatePkcs8),
      });
    }
  };

  /** Every pulse and what follows from them removed, as an erase does (pulses are otherwise append-only). */
  async function reset() {
    for (const w of worlds) {
      await db.transaction(async (tx) => {
        await tx.exec(`SET LOCAL citus.propagate_set_commands = 'local'; SET LOCAL climate_pulse.erase_org = '${w.orgId}'`);
        for (const table of resetTables) await tx.query(sql(`test.twin.reset.${table}`, `DELETE FROM ${table} WHERE org_id = $1`), [w.orgId]);
      });
      w.respondents = [];
      w.links = new Map();
      w.pulses = new Set();
      w.commentWeek = new Map();
      w.checkinHolder = null;
      w.checkinOther = null;
      w.modded = false;
    }
    poolNext = 0;
    clock = BASE;
  }

  const get = async (w: World, url: string) => {
    const res = await app.inject({ method: 'GET', url, headers: { authorization: `Bearer ${w.key}` } });
    if (res.statusCode !== 200 && res.statusCode !== 400) throw new Error(`${url} in world ${w.name}: ${res.statusCode} ${res.body}`);
    return { status: res.statusCode, body: res.json() as Record<string, unknown> };
  };

  /** Each week's comments as a set: the items of a walk grouped by week (the twin comment's week is the same in both worlds). */
  const canonicalItems = (items: string[], weekOf: (c: string) => number) => {
    const out: string[][] = [];
    for (const c of items) {
      const last = out[out.length - 1];
      if (last && weekOf(last[0]) === weekOf(c)) last.push(c);
      else out.push([c]);
    }
    return out.map((week) => [...week].sort());
  };

  return {
    async run(s: Scenario) {
      await reset();
      const ct = s.checkinTwin;
      A.comment = (i) => (s.specs[i].comment ? commentText(i) : null);
      // With a check-in twin, the pulses are alike in both worlds.
      B.comment = ct ? A.comment : (i) => (i === s.x ? null : i === s.y ? commentText(s.x) : s.specs[i].comment ? commentText(i) : null);
      A.twinHolder = s.x;
      B.twinHolder = ct ? s.x : s.y;
      const twin = ct ? twinText(ct.word) : commentText(s.x);
      const weeksOf = (w: World) => (c: string) => (c.startsWith('checkin') ? (w.commentWeek.get(c) ?? -1) : s.specs[Number(c.slice('comment '.length))].week);
      const model: CheckinModel = {
        roster: (s.roster ?? []).map((team) => ({ team, removed: false, since: clock })),
        flagWords: [],
        rounds: new Map(),
        twinWeek: null,
        twinDone: [false, false],
      };
      for (const w of worlds) {
        if (!s.roster) continue;
        await updateCheckinSettings(db, w.orgId, { reasons: REASONS }, operatorActor(), now());
        for (const [i, team] of s.roster.entries())
          w.respondents.push((await createRespondent(db, w.orgId, { email: emailOf(i), team }, operatorActor(), now())).id);
      }
      let next = 0;
      const pulseOf = (w: World, i: number) => {
        const p = s.specs[i];
        return {
          id: pulseId(i),
          level: p.level,
          reason: p.reason,
          comment: w.comment(i),
          moderationStatus: p.status,
          subteamId: p.group,
          createdAt: new Date(BASE + p.week * 7 * DAY + p.hour * HOUR + i * 1000).toISOString(),
        };
      };
      const ingested = (i: number) => i < next;

      const ingest = async (w: World, from: number, to: number, via: 'api' | 'import' | 'load') => {
        const batch = Array.from({ length: to - from }, (_, k) => pulseOf(w, from + k));
        if (via === 'api') await ingestPulses(db, w.orgId, batch, operatorActor(), now());
        else if (via === 'load') {
          await loadDataset(db, {
            organizations: [{ id: w.orgId, name: 'Twin', plan: 'twin', memberCount: 5, createdAt: '2026-01-01T00:00:00.000Z', deletedAt: null, pulses: batch }],
          });
        } else {
          const file = join(dir, `${w.name}.ndjson`);
          writeFileSync(file, `${batch.map((p) => JSON.stringify(p)).join('\n')}\n`);
          await importPulses(db, { orgId: w.orgId, file, onError: 'abort' }, operatorActor(), now());
        }
      };

      /** The console's handle of a comment in world w, among the weeks of its pulse (shown or hidden). */
      const handleOf = async (w: World, text: string, week: number) => {
        const q = { from: dayOf(week * 7), to: dayOf(week * 7 + 6), limit: 100 };
        const { list, handles, hidden } = await listCommentPageWithHandles(db, w.orgId, q, releases, now());
        const i = list.items.findIndex((c) => c.comment === text);
        return { shown: i >= 0 ? handles[i] : undefined, hidden: hidden.find((h) => h.comment === text)?.handle };
      };

      /** What world w answers to a read, in the form compared between the worlds. */
      const read = async (w: World, op: Op): Promise<unknown> => {
        switch (op.k) {
          case 'comments': {
            const base = `/v1/comments?from=${dayOf(op.from)}&to=${dayOf(op.from + op.days - 1)}&limit=${op.limit}${op.team ? `&subteamId=${op.team}` : ''}`;
            const pages: unknown[] = [];
            const items: string[] = [];
            let url = base;
            for (let n = 0; n < 60; n++) {
              const r = await get(w, url);
              if (r.status !== 200) return { status: r.status, body: r.body };
              const { items: page, nextCursor, ...envelope } = r.body as { items: { comment: string }[]; nextCursor: string | null };
              pages.push({ ...envelope, count: page.length, more: nextCursor !== null });
              items.push(...page.map((c) => c.comment));
              if (!nextCursor) break;
              url = `${base}&cursor=${encodeURIComponent(nextCursor)}`;
            }
            return { pages, items: canonicalItems(items, weeksOf(w)) };
          }
          case 'pulses': {
            const q = `from=${dayOf(op.from)}T00:00:00.000Z&to=${dayOf(op.from + op.days)}T00:00:00.000Z&limit=${op.limit}${op.team ? `&subteamId=${op.team}` : ''}${op.level ? `&level=${op.level}` : ''}`;
            const out: unknown[] = [];
            let url = `/v1/pulses?${q}`;
            for (let n = 0; n < 60; n++) {
              const r = await get(w, url);
              out.push(r.body);
              const cursor = (r.body as { nextCursor?: string | null }).nextCursor;
              if (r.status !== 200 || !cursor) break;
              url = `/v1/pulses?${q}&cursor=${encodeURIComponent(cursor)}`;
            }
            return canonicalPulses(out);
          }
          case 'stats':
            return (await get(w, '/v1/stats')).body;
          case 'participation':
            return participation(db, w.orgId, now(), 60);
          case 'daily': {
            const from = Math.max(op.from, -300);
            return (await get(w, `/v1/stats/daily?from=${dayOf(from)}T00:00:00.000Z&to=${dayOf(from + op.days)}T00:00:00.000Z`)).body;
          }
          case 'console': {
            const q = { from: dayOf(op.from), to: dayOf(op.from + op.days - 1), limit: 50, ...(op.team ? { subteamId: op.team } : {}) };
            const { list, hidden } = await listCommentPageWithHandles(db, w.orgId, q, releases, now());
            const { items, nextCursor, ...envelope } = list;
            // The pages an admin of the organization sees: comments (this range and team) and overview.
            const cookie = randomBytes(32).toString('base64url');
            await insertSessionRow(db, {
              orgId: w.orgId,
              idHash: createHash('sha256').update(cookie).digest(),
              memberId: w.memberId,
              stage: 'active',
              csrfToken: 'T'.repeat(32),
              address: null,
              at: now(),
            });
            const pageOf = async (url: string) => {
              const res = await app.inject({ method: 'GET', url, headers: { cookie: `cp_session=${cookie}`, 'sec-fetch-site': 'same-origin' } });
              if (res.statusCode !== 200) throw new Error(`${url} in world ${w.name}: ${res.statusCode} ${res.body.slice(0, 300)}`);
              return canonicalPage(res.body, w.orgId, weeksOf(w));
            };
            const search = new URLSearchParams({ from: q.from, to: q.to, ...(op.team ? { subteamId: op.team } : {}) }).toString();
            const overview = new URLSearchParams({ from: q.from, to: q.to, ...(op.team ? { team: op.team } : {}) }).toString();
            const pages = [await pageOf(`/console/comments?${search}`), await pageOf(`/console/overview?${overview}`)];
            return {
              pages,
              ...envelope,
              more: nextCursor !== null,
              items: canonicalItems(
                items.map((c) => c.comment),
                weeksOf(w),
              ),
              hidden: canonicalItems(
                hidden.map((c) => c.comment),
                weeksOf(w),
              ),
            };
          }
          default:
            throw new Error(`not a read: ${op.k}`);
        }
      };

      /** Applies a change to world w; what it answers is part of what the worlds must agree on. */
      const change = async (w: World, op: Op): Promise<unknown> => {
        switch (op.k) {
          case 'modTwin': {
            if (ct) {
              if (!w.checkinHolder) return 'not yet';
              const r = await moderatePulse(db, w.orgId, w.checkinHolder, op.status, operatorActor(), now());
              if (r.changed) w.modded = true;
              return r.changed;
            }
            if (!ingested(w.twinHolder)) return 'not yet';
            const r = await moderatePulse(db, w.orgId, pulseId(w.twinHolder), op.status, operatorActor(), now());
            return r.changed;
          }
          case 'mod': {
            if (op.spec === s.x || op.spec === s.y || !ingested(op.spec)) return 'skipped';
            const r = await moderatePulse(db, w.orgId, pulseId(op.spec), op.status, operatorActor(), now());
            return r.changed;
          }
          case 'hide':
          case 'show': {
            // Another comment is named by its pulse, which holds it in both worlds (never x or y).
            if (!op.twin && (op.spec === s.x || op.spec === s.y)) return 'skipped';
            const spec = op.twin ? s.x : op.spec;
            const text = op.twin ? twin : w.comment(spec);
            // The admin reads the page of the comment's week first, in both worlds alike (a read releases what is due).
            if (op.twin && ct) {
              const h = await handleOf(w, text ?? '', model.twinWeek ?? 0);
              if (!w.checkinHolder) return 'no comment';
              const handle = op.k === 'hide' ? h.shown : h.hidden;
              if (!handle) return 'no handle';
              return (await updateCommentHidden(db, w.orgId, handle, op.k === 'hide', operatorActor(), now())).changed;
            }
            const h = await handleOf(w, text ?? '', s.specs[spec].week);
            if (text === null || !ingested(op.twin ? w.twinHolder : spec)) return 'no comment';
            const handle = op.k === 'hide' ? h.shown : h.hidden;
            if (!handle) return 'no handle';
            const r = await updateCommentHidden(db, w.orgId, handle, op.k === 'hide', operatorActor(), now());
            return r.changed;
          }
          default:
            throw new Error(`not a change: ${op.k}`);
        }
      };

      /** The round of the clock's week (of the next week when this one's has started), started by the round job; its mails captured. */
      const round = async (): Promise<[unknown, unknown]> => {
        let week = weekOf(now());
        if (model.rounds.has(weekIndex(week))) week = addWeeks(week, 1);
        // The default schedule: Monday 09:00 UTC. A clock past it starts the round late (as after a down time).
        clock = Math.max(clock, roundTime(week, { weekday: 1, hour: 9, timeZone: 'UTC', reminderWeekday: 4 }).getTime());
        const wi = weekIndex(week);
        const members = model.roster.flatMap((r, i) => (r.removed ? [] : [{ ...r, i }]));
        if (members.length > 0 && !model.rounds.has(wi)) {
          const sizes = new Map<Group, number>();
          for (const m of members) sizes.set(m.team, (sizes.get(m.team) ?? 0) + 1);
          const r = {
            slot: new Map<number, string>(),
            people: new Map<string, number>([['', 0]]),
            recent: new Map<string, number>([['', 0]]),
            words: [...model.flagWords],
          };
          for (const m of members) {
            const slot = m.team !== null && (sizes.get(m.team) ?? 0) >= MIN_TEAM ? m.team : '';
            r.slot.set(m.i, slot);
            r.people.set(slot, (r.people.get(slot) ?? 0) + 1);
            r.recent.set(slot, (r.recent.get(slot) ?? 0) + (clock - m.since < RECENT_JOIN_MS ? 1 : 0));
          }
          model.rounds.set(wi, r);
        }
        const mails: { to: string; subject: string; text: string }[] = [];
        await runRounds(db, { linkFor: (o, t) => `http://twin.example/checkin/o/${o}#${t}`, send: async (m) => void mails.push(m) }, now());
        // A reminder names no link, and the two worlds' rosters have the same addresses: reminders are counted together.
        const reminders = mails.filter((m) => m.subject.startsWith('Reminder')).length;
        const seen = new Map<World, { first: number; reminders: number }>(worlds.map((w) => [w, { first: 0, reminders }]));
        for (const m of mails) {
          const link = /\/checkin\/o\/([^#\s]+)#([A-Za-z0-9_-]+)/.exec(m.text);
          if (!link) continue;
          const i = Number(/^r(\d+)@/.exec(m.to)?.[1]);
          const w = worlds.find((x) => x.orgId === link[1]);
          if (!w) throw new Error(`a mail of no world: ${m.to} ${m.subject}`);
          seen.get(w)!.first++;
          const mine = w.links.get(i) ?? new Map();
          mine.set(wi, { token: link[2], issued: false });
          w.links.set(i, mine);
        }
        for (const w of worlds) await keysOfRound(w, week);
        return [seen.get(A), seen.get(B)];
      };

      const postCheckin = async (url: string, payload: Record<string, unknown>) => {
        const res = await app.inject({ method: 'POST', url, payload });
        return { status: res.statusCode, body: res.json() as Record<string, unknown> };
      };
      const pulseRow = sql('test.twin.checkin_pulse', `SELECT level, subteam_id, moderation_status, created_at FROM pulses WHERE org_id = $1 AND id = $2`);
      const checkinPulses = sql('test.twin.checkin_pulses', `SELECT id FROM pulses WHERE org_id = $1 AND id LIKE 'pls_%'`);

      /** The respondent's link opened (the page loaded): what the page is told, its key masked (a random key of each world). */
      const open = async (w: World, i: number, wi: number) => {
        const link = w.links.get(i)?.get(wi);
        if (!link) return { obs: 'no link' as unknown, link, opened: null };
        const r = await postCheckin(`/checkin/o/${w.orgId}/open`, { token: link.token });
        if (r.status !== 200) return { obs: r as unknown, link, opened: null };
        const o = r.body as {
          keyId: string;
          publicKey: string;
          teamId: string | null;
          team: { people: number; recentJoiners: number } | null;
          organization: { people: number };
        };
        if (options.model) {
          const round = model.rounds.get(wi);
          const slot = round?.slot.get(i);
          const expected = {
            teamId: slot || null,
            team: slot ? { people: round!.people.get(slot), recentJoiners: round!.recent.get(slot) } : null,
            organization: { people: round?.people.get('') },
          };
          const got = { teamId: o.teamId, team: o.team, organization: o.organization };
          if (JSON.stringify(expected) !== JSON.stringify(got))
            throw new ModelMismatch(
              `world ${w.name}: respondent ${i}'s link of week ${wi} opened as ${JSON.stringify(got)}, not as its round fixed it: ${JSON.stringify(expected)}`,
            );
        }
        return { obs: { ...r, body: { ...r.body, keyId: 'KEY', publicKey: 'KEY' } } as unknown, link, opened: o };
      };

      /** What the page's script does: the link opened, a token obtained on the respondent's gesture (a blind signature), the answer sent. */
      const answerVia = async (
        w: World,
        i: number,
        wi: number,
        a: { level: number; reason: string | null; comment: string | null; team: boolean },
      ): Promise<{ obs: Record<string, unknown>; pulse: string | null }> => {
        const { obs: opened, link, opened: o } = await open(w, i, wi);
        if (!link || !o) return { obs: { opened }, pulse: null };
        if (link.issued) return { obs: { opened, issued: 'before' }, pulse: null };
        const client = await blindClient(o.publicKey);
        const issued = await postCheckin(`/checkin/o/${w.orgId}/issue`, { token: link.token, blindedMessage: client.blindedMessage });
        if (issued.status !== 200) return { obs: { opened, issued }, pulse: null };
        link.issued = true;
        const { prepared, sig } = client.finalize(issued.body.blindSignature as string);
        const answered = await postCheckin('/checkin/answer', {
          orgId: w.orgId,
          keyId: o.keyId,
          message: Buffer.from(prepared).toString('base64url'),
          signature: Buffer.from(sig).toString('base64url'),
          level: a.level,
          reason: a.reason,
          comment: a.comment,
          team: a.team,
        });
        if (answered.status !== 200) return { obs: { opened, issued: 200, answered }, pulse: null };
        const fresh = (await db.query<{ id: string }>(checkinPulses, [w.orgId])).map((r) => r.id).filter((id) => !w.pulses.has(id));
        if (fresh.length !== 1) throw new ModelMismatch(`world ${w.name}: an answer wrote ${fresh.length} pulses`);
        const pulse = fresh[0];
        w.pulses.add(pulse);
        if (a.comment !== null) w.commentWeek.set(a.comment, wi);
        if (options.model) {
          const round = model.rounds.get(wi)!;
          const [p] = await db.query<{ level: number; subteam_id: string | null; moderation_status: string; created_at: Date | string }>(pulseRow, [
            w.orgId,
            pulse,
          ]);
          const at = new Date(p.created_at).getTime();
          const got = { level: p.level, group: p.subteam_id, status: p.moderation_status, week: Math.floor((at - BASE) / (7 * DAY)) };
          const expected = {
            level: a.level,
            group: a.team ? round.slot.get(i) || null : null,
            status: a.comment !== null && holdsFlaggedWord(a.comment, round.words) ? 'FLAGGED' : 'CLEAN',
            week: wi,
          };
          if (JSON.stringify(got) !== JSON.stringify(expected))
            throw new ModelMismatch(
              `world ${w.name}: respondent ${i}'s answer (${JSON.stringify(a)}) with the link of week ${wi} wrote ${JSON.stringify(got)}, not what its round fixed: ${JSON.stringify(expected)}`,
            );
        }
        return { obs: { opened, issued: 200, answered }, pulse };
      };

      const who = (n: number) => (model.roster.length === 0 ? -1 : n % model.roster.length);
      const latestLink = (w: World, i: number) => Math.max(-1, ...(w.links.get(i)?.keys() ?? []));

      /** A check-in operation in world w (the model is updated once both worlds had it); what it answers is compared. */
      const checkin = async (w: World, op: Op, step: number): Promise<unknown> => {
        switch (op.k) {
          case 'open': {
            const i = who(op.who);
            return i < 0 ? 'no roster' : (await open(w, i, latestLink(w, i))).obs;
          }
          case 'answer': {
            const i = who(op.who);
            if (i < 0) return 'no roster';
            const wi = op.late ? weekIndex(weekOf(now())) - 1 : latestLink(w, i);
            const comment = op.comment ? `checkin ${step}${op.word ? ', the reorg' : ''}` : null;
            return (await answerVia(w, i, wi, { level: op.level, reason: op.reason, comment, team: op.team })).obs;
          }
          case 'twinAnswer': {
            if (!ct) return 'no twin';
            if (model.twinDone[op.which]) return 'answered';
            const i = op.which === 0 ? ct.tx : ct.ty;
            const holds = (w === A) === (op.which === 0);
            const wi = op.late ? weekIndex(weekOf(now())) - 1 : latestLink(w, i);
            const r = await answerVia(w, i, wi, { level: op.level, reason: op.reason, comment: holds ? twin : null, team: ct.team });
            if (r.pulse) {
              if (holds) w.checkinHolder = r.pulse;
              else w.checkinOther = r.pulse;
            }
            // The answer's receipt says when its own comment may appear: the respondent's to see, not compared.
            const answered = r.obs.answered as { status: number } | undefined;
            return { ...r.obs, answered: answered?.status, week: r.pulse ? wi : null };
          }
          case 'move': {
            const i = who(op.who);
            if (i < 0 || model.roster[i].removed) return 'not on the roster';
            await moveRespondent(db, w.orgId, w.respondents[i], op.team, operatorActor(), now());
            return 'moved';
          }
          case 'add': {
            w.respondents.push((await createRespondent(db, w.orgId, { email: emailOf(model.roster.length), team: op.team }, operatorActor(), now())).id);
            return 'added';
          }
          case 'remove': {
            const i = who(op.who);
            if (i < 0 || model.roster[i].removed) return 'not on the roster';
            await deleteRespondent(db, w.orgId, w.respondents[i], operatorActor(), now());
            return 'removed';
          }
          case 'flags':
            return (await updateCheckinSettings(db, w.orgId, { flagWords: op.words }, operatorActor(), now())).flagWords;
          default:
            throw new Error(`not a check-in operation: ${op.k}`);
        }
      };
      /** The model follows a check-in operation, once both worlds had it. */
      const follow = (op: Op, a: unknown) => {
        if (op.k === 'move' && a === 'moved') {
          const r = model.roster[who(op.who)];
          if (r.team !== op.team) r.since = clock;
          r.team = op.team;
        } else if (op.k === 'add') model.roster.push({ team: op.team, removed: false, since: clock });
        else if (op.k === 'remove' && a === 'removed') model.roster[who(op.who)].removed = true;
        else if (op.k === 'flags') model.flagWords = [...op.words];
        else if (op.k === 'twinAnswer' && typeof a === 'object' && a !== null && (a as { week: number | null }).week !== null) {
          model.twinDone[op.which] = true;
          model.twinWeek ??= (a as { week: number }).week;
        }
      };

      let difference: Difference | null = null;
      const apply = async (step: number, op: Op) => {
        if (op.k === 'ingest') {
          const to = Math.min(s.specs.length, next + op.n);
          if (to === next) return;
          for (const w of worlds) await ingest(w, next, to, op.via);
          next = to;
          return;
        }
        if (op.k === 'time') {
          clock += op.hours * HOUR;
          return;
        }
        let a: unknown;
        let b: unknown;
        let compared = true;
        if (op.k === 'round') [a, b] = await round();
        else if (['open', 'answer', 'twinAnswer', 'move', 'add', 'remove', 'flags'].includes(op.k)) {
          a = await checkin(A, op, step);
          b = await checkin(B, op, step);
          follow(op, a);
        } else {
          const isRead = op.k === 'comments' || op.k === 'pulses' || op.k === 'stats' || op.k === 'daily' || op.k === 'console' || op.k === 'participation';
          a = isRead ? await read(A, op) : await change(A, op);
          b = isRead ? await read(B, op) : await change(B, op);
          // A change that followed the twin comment answers by the world's own state.
          compared = isRead;
        }
        if (compared && !difference && JSON.stringify(a) !== JSON.stringify(b)) difference = { step, op, a, b };
      };
      for (const [step, op] of s.ops.entries()) await apply(step, op);
      // The epilogue: everything arrives (the check-in twins answer, and everyone else of their
      // round), every week is released and read, so most scenarios release their twin comment.
      const epilogue: Op[] = [{ k: 'ingest', n: s.specs.length, via: 'api' }];
      if (ct && !(model.twinDone[0] && model.twinDone[1])) {
        if (model.rounds.size === 0) epilogue.push({ k: 'round' });
        epilogue.push({ k: 'twinAnswer', which: 0, level: 2, reason: null, late: false }, { k: 'twinAnswer', which: 1, level: 4, reason: 'team', late: false });
        for (let i = 0; i < model.roster.length; i++)
          epilogue.push({ k: 'answer', who: i, level: 1 + (i % 5), reason: null, comment: i % 2 === 0, word: false, team: true, late: false });
      }
      const lastDay = Math.max(7 * WEEKS + 2, Math.ceil((clock - BASE) / DAY) + 2);
      const everything = { from: -1, days: lastDay + 1 };
      epilogue.push(
        { k: 'time', hours: 24 * 7 * (WEEKS + 1) },
        { k: 'comments', ...everything, team: undefined, limit: 100 },
        { k: 'comments', ...everything, team: s.specs[s.x].group ?? undefined, limit: 3 },
        { k: 'console', ...everything, team: undefined },
        { k: 'pulses', ...everything, team: undefined, level: undefined, limit: 200 },
        { k: 'participation' },
      );
      for (const [k, op] of epilogue.entries()) await apply(s.ops.length + k, op);
      // Meaningful when, in a world, the twin comment was released and both pulses of the pair were
      // covered by one release of their week and group (one cell of the partition, whatever the
      // statuses it froze): then the comment had to hide among that cell's pulses.
      // Not when a moderation kept the comment's pulse FLAGGED at its release in a world: that world
      // then froze another pulse FLAGGED than its twin did, a flag GET /pulses shows by design.
      const pair = sql(
        'test.twin.pair',
        `SELECT count(DISTINCT (m.week, m.grp, m.batch))::int AS cells, count(*)::int AS n,
                coalesce(bool_or(m.released AND m.comment = $3), false) AS released,
                coalesce(bool_or(m.pulse_id = $4 AND m.frozen_status = 'FLAGGED'), false) AS holder_flagged
           FROM comment_release_members m WHERE m.org_id = $1 AND m.pulse_id = ANY($2::text[])`,
      );
      let twinReleased = false;
      let holderFlagged = false;
      for (const w of worlds) {
        const holder = ct ? w.checkinHolder : pulseId(w.twinHolder);
        const other = ct ? w.checkinOther : pulseId(w.twinHolder === s.x ? s.y : s.x);
        if (!holder || !other) continue;
        const [r] = await db.query<{ cells: number; n: number; released: boolean; holder_flagged: boolean }>(pair, [w.orgId, [holder, other], twin, holder]);
        if (r.n === 2 && r.cells === 1 && r.released) twinReleased = true;
        // A check-in comment's pulse is FLAGGED on arrival by the round's words, alike in both
        // worlds; only a moderation that followed it (modTwin) rules a pair out.
        if (r.holder_flagged && (!ct || w.modded)) holderFlagged = true;
      }
      if (holderFlagged) twinReleased = false;
      return { difference, twinReleased };
    },
    async close() {
      await app.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * The property for one scenario: when its twin comment ends up released in a cell that holds both
 * pulses of the pair (in either world), the two worlds answered every read alike. A scenario whose
 * twin comment is never released, whose comment's pulse a moderation left FLAGGED at its release
 * (a flag of that pulse, which GET /pulses then shows by design), or whose pair ends in two cells
 * (one pulse arrived after the other's cell was frozen), is no pair of twins and passes.
 */
export async function checkScenario(h: TwinHarness, s: Scenario): Promise<{ twinReleased: boolean }> {
  const { difference, twinReleased } = await h.run(s);
  if (twinReleased && difference) {
    throw new Error(
      `the worlds differ at step ${difference.step} (${JSON.stringify(difference.op)}):\n  A: ${JSON.stringify(difference.a)}\n  B: ${JSON.stringify(difference.b)}`,
    );
  }
  return { twinReleased };
}

const spec = (over: Partial<Spec>): Spec => ({ week: 0, hour: 10, group: 'team_a', status: 'CLEAN', level: 3, reason: null, comment: false, ...over });
const wholeWeek0 = { from: 0, days: 7 };

/**
 * Issue 40's cases 1-3 as scenarios of the property (the reviewer's moves, in twin form): every run
 * tries them before its generated ones. On the code before the fix each one fails.
 */
export const ISSUE_40_CASES: Scenario[] = [
  // Case 1: the pair arrived FLAGGED; the comment's pulse is cleared before the release.
  {
    specs: [spec({ status: 'FLAGGED', comment: true }), spec({ status: 'FLAGGED', hour: 11 }), ...Array.from({ length: 6 }, (_, i) => spec({ hour: 20 + i }))],
    x: 0,
    y: 1,
    ops: [
      { k: 'ingest', n: 8, via: 'api' },
      { k: 'modTwin', status: 'CLEAN' },
      { k: 'time', hours: 24 * 9 },
      { k: 'pulses', ...wholeWeek0, team: undefined, level: undefined, limit: 50 },
    ],
  },
  // Case 2: a week whose only pulse (the comment's) is flagged when an answer first covers it.
  {
    specs: [spec({ comment: true }), spec({ hour: 30 }), ...Array.from({ length: 3 }, (_, i) => spec({ hour: 40 + i }))],
    x: 0,
    y: 1,
    ops: [
      { k: 'ingest', n: 1, via: 'api' },
      { k: 'modTwin', status: 'FLAGGED' },
      { k: 'time', hours: 24 * 9 },
      { k: 'comments', ...wholeWeek0, team: 'team_a', limit: 10 },
      { k: 'modTwin', status: 'CLEAN' },
      { k: 'ingest', n: 4, via: 'api' },
      { k: 'comments', ...wholeWeek0, team: 'team_a', limit: 10 },
    ],
  },
  // Case 3: a lone late pulse (the comment's) flagged and cleared before its pool fills.
  {
    specs: [
      ...Array.from({ length: 5 }, (_, i) => spec({ hour: 10 + i })),
      spec({ hour: 50, comment: true }),
      spec({ hour: 51 }),
      ...Array.from({ length: 3 }, (_, i) => spec({ hour: 60 + i })),
    ],
    x: 5,
    y: 6,
    ops: [
      { k: 'ingest', n: 5, via: 'api' },
      { k: 'time', hours: 24 * 9 },
      { k: 'comments', ...wholeWeek0, team: 'team_a', limit: 10 },
      { k: 'ingest', n: 1, via: 'import' },
      { k: 'modTwin', status: 'FLAGGED' },
      { k: 'comments', ...wholeWeek0, team: 'team_a', limit: 10 },
      { k: 'modTwin', status: 'CLEAN' },
      { k: 'ingest', n: 4, via: 'load' },
      { k: 'comments', ...wholeWeek0, team: 'team_a', limit: 10 },
    ],
  },
];

const sixOfA: Group[] = ['team_a', 'team_a', 'team_a', 'team_a', 'team_a', 'team_a'];
const everyoneElse = (level: number): Op[] =>
  [2, 3, 4, 5].map((who) => ({ k: 'answer', who, level, reason: null, comment: who % 2 === 0, word: false, team: true, late: false }) as Op);

/**
 * Issue 51's attacks on check-ins as scenarios of the property (the check-in twin pair answers;
 * everything else alike in both worlds): every run tries them before its generated ones.
 */
export const ISSUE_51_CASES: Scenario[] = [
  // The flag-word window: the admin adds a word of the comment between the two answers of the week.
  {
    specs: [spec({ comment: true }), spec({ hour: 11 })],
    x: 0,
    y: 1,
    roster: sixOfA,
    checkinTwin: { tx: 0, ty: 1, team: true, word: true },
    ops: [
      { k: 'round' },
      { k: 'twinAnswer', which: 0, level: 2, reason: null, late: false },
      { k: 'flags', words: ['reorg'] },
      { k: 'twinAnswer', which: 1, level: 4, reason: null, late: false },
      ...everyoneElse(3),
    ],
  },
  // A move during the week: one of the pair moved to another team between the two answers, and the
  // team padded with new respondents; the week's answers keep the team of the round's start.
  {
    specs: [spec({ comment: true }), spec({ hour: 11 })],
    x: 0,
    y: 1,
    roster: sixOfA,
    checkinTwin: { tx: 0, ty: 1, team: true, word: false },
    ops: [
      { k: 'round' },
      { k: 'twinAnswer', which: 0, level: 2, reason: null, late: false },
      { k: 'move', who: 1, team: 'team_b' },
      { k: 'add', team: 'team_b' },
      { k: 'add', team: 'team_b' },
      { k: 'add', team: 'team_b' },
      { k: 'add', team: 'team_b' },
      { k: 'twinAnswer', which: 1, level: 4, reason: null, late: false },
      ...everyoneElse(3),
      { k: 'round' },
      { k: 'participation' },
    ],
  },
  // A late answer: the second of the pair answers in the next week with the week before's link
  // (its pulse belongs to the link's week), both leaving their team out.
  {
    specs: [spec({ comment: true }), spec({ hour: 11 })],
    x: 0,
    y: 1,
    roster: sixOfA,
    checkinTwin: { tx: 0, ty: 1, team: false, word: false },
    ops: [
      { k: 'round' },
      { k: 'twinAnswer', which: 0, level: 2, reason: null, late: false },
      ...[2, 3, 4, 5].map((who) => ({ k: 'answer', who, level: 3, reason: null, comment: true, word: false, team: false, late: false }) as Op),
      { k: 'round' },
      { k: 'twinAnswer', which: 1, level: 4, reason: null, late: true },
    ],
  },
];
