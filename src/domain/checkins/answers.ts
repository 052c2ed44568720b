import { createHash } from 'node:crypto';
import type { DatabaseExecutor } from '../../db/executor.js';
import { writePulses, type NewPulse } from '../../db/pulse-writes.js';
import {
  findLinkByToken,
  findRound,
  markLinkIssued,
  markLinkOpened,
  readCheckinSettings,
  roundSlots,
  spendTokens,
  takeAnswers,
  type LinkRow,
} from '../../db/repositories/checkins.js';
import { listTeamNames } from '../../db/repositories/teams.js';
import { ApiError, invalid } from '../../contract/errors.js';
import { blindSign, SUITE, verifyToken } from '../../crypto/blind-rsa.js';
import { newId } from '../ids.js';
import { getOrganization } from '../orgs.js';
import { WEEK_MS } from '../time.js';
import type { Queryable } from '../database.js';
import type { CheckinKeys } from './keys.js';
import { holdsFlaggedWord } from './settings.js';
import { answerHour, checkinClosesAt, weekStart } from './week.js';

/**
 * The three steps of a check-in (CONTRACT.md section 12, amended in turn 6). Opening the link and
 * obtaining the blind signature take the link's token and touch only its unnamed row (opened,
 * issued): no row read or written here names a respondent. The answer takes no link, cookie or
 * identity: a token (message and signature) that verifies under a published key, spent once, and
 * the pulse written through the pulse door, judged by the round's words and dated in its week.
 */

export const MAX_COMMENT = 2_000;
export const LINK_TOKEN = /^[A-Za-z0-9_-]{22,64}$/;

export const tokenHash = (token: string) => createHash('sha256').update(token).digest();

const linkGone = () => new ApiError('not_found', 'This check-in link is not valid or has closed.');

async function liveLink(db: Queryable, orgId: string, token: unknown, now: Date): Promise<LinkRow & { hash: Buffer }> {
  if (typeof token !== 'string' || !LINK_TOKEN.test(token)) throw linkGone();
  const hash = tokenHash(token);
  const link = await findLinkByToken(db, orgId, hash);
  if (!link || now >= checkinClosesAt(link.week)) throw linkGone();
  return { ...link, hash };
}

export interface OpenedCheckin {
  orgName: string;
  week: string;
  /** When the link stops working (the end of its week's grace hours). */
  closesAt: string;
  teamId: string | null;
  teamName: string | null;
  keyId: string;
  suite: string;
  publicKey: string;
  reasons: string[];
  /** The link's state before this opening: `issued` when its token was obtained already (here or in another browser). */
  state: 'new' | 'opened' | 'issued';
  /** The week's token was obtained already (on this device or another): no second one. */
  issued: boolean;
  /** The team's people on this week's roster and how many of them joined it in the four weeks before the round; null without a team. */
  team: { people: number; recentJoiners: number } | null;
  /** The people who answer under the organization's key by default (no team, or a team under 5). */
  organization: { people: number };
}

const STATES = ['new', 'opened', 'issued'] as const;

/** The link opened: what the page needs to show the question and to check the key against the published one. */
export async function openCheckin(db: DatabaseExecutor, keys: CheckinKeys, orgId: string, token: unknown, now: Date): Promise<OpenedCheckin> {
  const link = await liveLink(db, orgId, token, now);
  if (link.state === 0) await markLinkOpened(db, orgId, link.hash);
  const key = await keys.keyFor(db, orgId, link.week, link.teamSlot);
  const org = await getOrganization(db, orgId);
  const round = await findRound(db, orgId, link.week);
  const slots = await roundSlots(db, orgId, link.week);
  const mine = slots.find((s) => s.teamSlot === link.teamSlot);
  const orgSlot = slots.find((s) => s.teamSlot === '');
  const [team] = link.teamSlot ? await listTeamNames(db, orgId, [link.teamSlot]) : [];
  return {
    orgName: org.name,
    week: link.week,
    closesAt: checkinClosesAt(link.week).toISOString(),
    teamId: link.teamSlot || null,
    teamName: team?.name ?? null,
    keyId: key.id,
    suite: SUITE,
    publicKey: key.publicSpki.toString('base64url'),
    reasons: round?.reasons ?? [],
    state: STATES[link.state] ?? 'issued',
    issued: link.state === 2,
    team: link.teamSlot ? { people: mine?.respondents ?? 0, recentJoiners: mine?.recentJoiners ?? 0 } : null,
    organization: { people: orgSlot?.respondents ?? 0 },
  };
}

const b64 = (v: unknown, field: string, bytes?: number): Buffer => {
  if (typeof v !== 'string' || !/^[A-Za-z0-9_-]{1,1400}$/.test(v)) throw invalid(`'${field}' must be base64url.`);
  const b = Buffer.from(v, 'base64url');
  if (bytes !== undefined && b.length !== bytes) throw invalid(`'${field}' must be ${bytes} bytes.`);
  return b;
};

/**
 * The blind signature of the week, once per respondent: marked issued and signed in one
 * transaction, so a refused signature issues nothing. What is kept: `issued`, nothing of the message.
 */
export async function issueCheckinToken(
  db: DatabaseExecutor,
  keys: CheckinKeys,
  orgId: string,
  token: unknown,
  blindedMessage: unknown,
  now: Date,
): Promise<Buffer> {
  const link = await liveLink(db, orgId, token, now);
  const blinded = b64(blindedMessage, 'blindedMessage');
  const key = await keys.keyFor(db, orgId, link.week, link.teamSlot);
  const { priv, pub } = keys.objects(orgId, key);
  return db.transaction(async (tx) => {
    if (!(await markLinkIssued(tx, orgId, link.hash))) {
      throw new ApiError('invalid_transition', "This week's check-in token was already issued for this link; each link gives one.");
    }
    const sig = blindSign(priv, pub, blinded);
    if (!sig) throw invalid("'blindedMessage' is not a blinded message for this key.");
    return sig;
  });
}

export interface CheckinAnswer {
  keyId: unknown;
  message: unknown;
  signature: unknown;
  level: unknown;
  reason?: unknown;
  comment?: unknown;
  /** false: "Don't attach my team", the answer goes under the organization's key without a team. Default true. */
  team?: unknown;
}

export interface AnswerReceipt {
  /** When the comment can appear at the earliest: its week released (CONTRACT.md section 5), and only in a cell of 5 or more. */
  commentsFrom: string | null;
}

const badToken = () => invalid('The check-in token does not verify under a published key of this organization.');

/**
 * An answer: the token verifies under the (team, week) key it names, is spent once (a second
 * answer with it: 409), and the pulse is written through the pulse door in that key's team, at
 * the hour of the answer, FLAGGED when the comment holds a word of the organization's list.
 */
export async function answerCheckin(
  db: DatabaseExecutor,
  keys: CheckinKeys,
  orgId: string,
  a: CheckinAnswer,
  opts: { releaseDelayHours: number; writes?: AnswerWrites },
  now: Date,
): Promise<AnswerReceipt> {
  if (typeof a.keyId !== 'string' || !/^ck_[A-Za-z0-9]{1,64}$/.test(a.keyId)) throw badToken();
  const message = b64(a.message, 'message');
  const signature = b64(a.signature, 'signature');
  if (typeof a.level !== 'number' || !Number.isInteger(a.level) || a.level < 1 || a.level > 5) throw invalid("'level' must be an integer from 1 to 5.");
  if (a.comment !== undefined && a.comment !== null && typeof a.comment !== 'string') throw invalid("'comment' must be text or null.");
  const comment = typeof a.comment === 'string' && a.comment.trim() !== '' ? a.comment.trim() : null;
  if (comment !== null && ([...comment].length > MAX_COMMENT || comment.includes('\0'))) throw invalid(`'comment' must be at most ${MAX_COMMENT} characters.`);
  if (a.team !== undefined && typeof a.team !== 'boolean') throw invalid("'team' must be true or false.");
  const key = await keys.byId(db, orgId, a.keyId);
  if (!key) throw badToken();
  if (now >= checkinClosesAt(key.week)) throw invalid('This check-in has closed.');
  // The words the answer is judged by are the round's, fixed at its start.
  const round = await findRound(db, orgId, key.week);
  const words = round ?? (await readCheckinSettings(db, orgId));
  let reason: string | null = null;
  if (a.reason !== undefined && a.reason !== null) {
    if (typeof a.reason !== 'string' || !words.reasons.includes(a.reason)) throw invalid("'reason' must be one of the organization's reasons, or null.");
    reason = a.reason;
  }
  if (!verifyToken(keys.objects(orgId, key).pub, message, signature)) throw badToken();
  // "Don't attach my team": counted and spent under the organization's key of the week, so that no
  // row written with the pulse names the team it left out.
  const slot = a.team === false ? '' : key.teamSlot;
  const spentKey = slot === key.teamSlot ? key : await keys.keyFor(db, orgId, key.week, '');
  const createdAt = answerHour(now, key.week);
  const pulse: NewPulse = {
    id: newId('pls'),
    level: a.level as number,
    reason,
    comment,
    moderationStatus: comment !== null && holdsFlaggedWord(comment, words.flagWords) ? 'FLAGGED' : 'CLEAN',
    subteamId: slot || null,
    createdAt: createdAt.toISOString(),
  };
  const spent: SpentAnswer = { orgId, keyId: spentKey.id, week: key.week, slot, hashHex: createHash('sha256').update(message).digest('hex'), pulse };
  const [outcome] = opts.writes ? [await opts.writes.write(spent)] : await writeAnswers(db, [spent]);
  if (outcome === 'spent') {
    throw new ApiError('invalid_transition', 'This check-in token was already used: one answer per token.');
  }
  if (outcome === 'full') throw KEY_FULL;
  const releasedAt = weekStart(key.week).getTime() + WEEK_MS + opts.releaseDelayHours * 3_600_000;
  return { commentsFrom: comment === null ? null : new Date(releasedAt).toISOString() };
}

/** An answer to write: its token spent, its key slot's count taken, its pulse written. */
export interface SpentAnswer {
  orgId: string;
  /** The key it is spent under: the organization's when the answer leaves its team out. */
  keyId: string;
  week: string;
  /** The slot whose count it takes ('' the organization's). */
  slot: string;
  /** SHA-256 of the token's message, hex: what is kept of a spent token. */
  hashHex: string;
  pulse: NewPulse;
}

/** What became of an answer: written, its token spent before, or its key full. */
export type AnswerOutcome = 'written' | 'spent' | 'full';

/** Thrown inside the write's transaction (to roll it back) when a key has no room for its answers. */
const KEY_FULL = new ApiError('invalid_transition', "This week's key has taken as many answers as the people it was made for.");

/**
 * Spends the answers' tokens, takes their slots' counts and writes the pulses of those spent now,
 * in one transaction (each organization's pulses in one call of the pulse door). A slot without
 * room for all of its answers fails the whole transaction with KEY_FULL, so that the caller can try
 * them one at a time. The pulses are written in the order of their ids (random), not of arrival.
 */
async function writeAnswersOnce(db: DatabaseExecutor, answers: readonly SpentAnswer[]): Promise<AnswerOutcome[]> {
  // Per organization, the first answer of each token (by index): a token given twice in the list is spent by the first.
  const byOrg = new Map<string, Map<string, number>>();
  for (const [i, a] of answers.entries()) {
    const org = byOrg.get(a.orgId) ?? new Map<string, number>();
    byOrg.set(a.orgId, org);
    if (!org.has(a.hashHex)) org.set(a.hashHex, i);
  }
  const written = await db.transaction(async (tx) => {
    const written = new Set<number>();
    for (const [orgId, first] of [...byOrg].sort(([x], [y]) => (x < y ? -1 : x > y ? 1 : 0))) {
      const spent = await spendTokens(
        tx,
        orgId,
        [...first.values()].map((i) => answers[i]!),
      );
      const now = [...first.values()].filter((i) => spent.has(answers[i]!.hashHex));
      const perSlot = new Map<string, { week: string; slot: string; n: number }>();
      for (const i of now) {
        const a = answers[i]!;
        const k = `${a.week}\0${a.slot}`;
        const c = perSlot.get(k) ?? { week: a.week, slot: a.slot, n: 0 };
        c.n++;
        perSlot.set(k, c);
      }
      for (const c of [...perSlot.values()].sort((x, y) => (`${x.week}${x.slot}` < `${y.week}${y.slot}` ? -1 : 1))) {
        if (!(await takeAnswers(tx, orgId, c.week, c.slot, c.n))) throw KEY_FULL;
      }
      const pulses = now.map((i) => answers[i]!.pulse).sort((x, y) => (x.id < y.id ? -1 : 1));
      await writePulses(tx, orgId, pulses, { onExisting: 'fail' });
      for (const i of now) written.add(i);
    }
    return written;
  });
  return answers.map((_, i) => (written.has(i) ? 'written' : 'spent'));
}

/**
 * Writes the answers; returns each one's outcome. When a key has no room for all of them, they are
 * written one at a time, so that only those past its capacity are refused.
 */
export async function writeAnswers(db: DatabaseExecutor, answers: readonly SpentAnswer[]): Promise<AnswerOutcome[]> {
  try {
    return await writeAnswersOnce(db, answers);
  } catch (err) {
    if (err !== KEY_FULL) throw err;
    if (answers.length === 1) return ['full'];
    const out: AnswerOutcome[] = [];
    for (const a of answers) out.push((await writeAnswers(db, [a]))[0]!);
    return out;
  }
}

/**
 * Answers written together (a group commit): every answer of a round updates the same rollup rows
 * (the organization's day, hour and minute, its team's day and week), so transactions of one answer
 * each queue on those rows' locks, one after another (the check-in bench at c=50: p99 163 ms, 598
 * answers a second). Here an answer that arrives while this process's previous write runs waits
 * for it and goes with every other waiting answer in the next one: one transaction, one statement
 * per table, whatever the number. An answer that arrives when nothing runs is written at once, so
 * a quiet service adds no delay. When a shared transaction fails, each of its answers is tried
 * alone, so one answer's failure (its team deleted meanwhile) is its own. Answers written together
 * also share one transaction: the database's order of writes tells less of the order they came in.
 */
export class AnswerWrites {
  private queue: { answer: SpentAnswer; resolve: (outcome: AnswerOutcome) => void; reject: (err: unknown) => void }[] = [];
  private running = false;

  constructor(
    private readonly db: DatabaseExecutor,
    private readonly maxBatch = 500,
  ) {}

  /** Resolves once the answer's transaction committed, with its outcome. */
  write(answer: SpentAnswer): Promise<AnswerOutcome> {
    const done = new Promise<AnswerOutcome>((resolve, reject) => this.queue.push({ answer, resolve, reject }));
    if (!this.running) void this.drain();
    return done;
  }

  private async drain() {
    this.running = true;
    try {
      while (this.queue.length > 0) {
        const batch = this.queue.splice(0, this.maxBatch);
        try {
          const spent = await writeAnswers(
            this.db,
            batch.map((b) => b.answer),
          );
          for (const [i, b] of batch.entries()) b.resolve(spent[i]!);
        } catch (err) {
          if (batch.length === 1) batch[0]!.reject(err);
          else
            for (const b of batch) {
              await writeAnswers(this.db, [b.answer]).then(
                ([spent]) => b.resolve(spent!),
                (e: unknown) => b.reject(e),
              );
            }
        }
      }
    } finally {
      this.running = false;
    }
  }
}
