import { createHash } from 'node:crypto';
import type { DatabaseExecutor } from '../../db/executor.js';
import { writePulses, type NewPulse } from '../../db/pulse-writes.js';
import { findLinkByToken, markLinkIssued, markLinkOpened, readCheckinSettings, spendTokens, type LinkRow } from '../../db/repositories/checkins.js';
import { listTeamNames } from '../../db/repositories/teams.js';
import { ApiError, invalid } from '../../contract/errors.js';
import { blindSign, SUITE, verifyToken } from '../../crypto/blind-rsa.js';
import { newId } from '../ids.js';
import { getOrganization } from '../orgs.js';
import { WEEK_MS } from '../time.js';
import type { CheckinKeys } from './keys.js';
import { holdsFlaggedWord } from './settings.js';
import { answerHour, checkinClosesAt, weekOf, weekStart } from './week.js';

/**
 * The three steps of a check-in (CONTRACT.md section 12). Opening the link and obtaining the blind
 * signature take the link's token and record only that the week's link was opened and its token
 * issued. The answer takes no link, cookie or identity: a token (message and signature) that
 * verifies under a published key, spent once, and the pulse written through the pulse door.
 */

export const MAX_COMMENT = 2_000;
export const LINK_TOKEN = /^[A-Za-z0-9_-]{22,64}$/;

export const tokenHash = (token: string) => createHash('sha256').update(token).digest();

const linkGone = () => new ApiError('not_found', 'This check-in link is not valid or has closed.');

async function liveLink(db: DatabaseExecutor, orgId: string, token: unknown, now: Date): Promise<LinkRow> {
  if (typeof token !== 'string' || !LINK_TOKEN.test(token)) throw linkGone();
  const link = await findLinkByToken(db, orgId, tokenHash(token));
  if (!link || now >= checkinClosesAt(link.week)) throw linkGone();
  return link;
}

export interface OpenedCheckin {
  orgName: string;
  week: string;
  teamId: string | null;
  teamName: string | null;
  keyId: string;
  suite: string;
  publicKey: string;
  reasons: string[];
  /** The week's token was obtained already (on this device or another): no second one. */
  issued: boolean;
}

/** The link opened: what the page needs to show the question and to check the key against the published one. */
export async function openCheckin(db: DatabaseExecutor, keys: CheckinKeys, orgId: string, token: unknown, now: Date): Promise<OpenedCheckin> {
  const link = await liveLink(db, orgId, token, now);
  await markLinkOpened(db, orgId, link.respondentId, link.week);
  const key = await keys.keyFor(db, orgId, link.week, link.teamSlot);
  const org = await getOrganization(db, orgId);
  const settings = await readCheckinSettings(db, orgId);
  const [team] = link.teamSlot ? await listTeamNames(db, orgId, [link.teamSlot]) : [];
  return {
    orgName: org.name,
    week: link.week,
    teamId: link.teamSlot || null,
    teamName: team?.name ?? null,
    keyId: key.id,
    suite: SUITE,
    publicKey: key.publicSpki.toString('base64url'),
    reasons: settings.reasons,
    issued: link.issued,
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
    if (!(await markLinkIssued(tx, orgId, link.respondentId, link.week))) {
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
  const settings = await readCheckinSettings(db, orgId);
  let reason: string | null = null;
  if (a.reason !== undefined && a.reason !== null) {
    if (typeof a.reason !== 'string' || !settings.reasons.includes(a.reason)) throw invalid("'reason' must be one of the organization's reasons, or null.");
    reason = a.reason;
  }
  const key = await keys.byId(db, orgId, a.keyId);
  if (!key) throw badToken();
  if (now >= checkinClosesAt(key.week)) throw invalid('This check-in has closed.');
  if (!verifyToken(keys.objects(orgId, key).pub, message, signature)) throw badToken();
  const createdAt = answerHour(now);
  const pulse: NewPulse = {
    id: newId('pls'),
    level: a.level as number,
    reason,
    comment,
    moderationStatus: comment !== null && holdsFlaggedWord(comment, settings.flagWords) ? 'FLAGGED' : 'CLEAN',
    subteamId: key.teamSlot || null,
    createdAt: createdAt.toISOString(),
  };
  const spent = { orgId, keyId: key.id, hashHex: createHash('sha256').update(message).digest('hex'), pulse };
  const [spentNow] = opts.writes ? [await opts.writes.write(spent)] : await writeAnswers(db, [spent]);
  if (!spentNow) {
    throw new ApiError('invalid_transition', 'This check-in token was already used: one answer per token.');
  }
  const releasedAt = weekStart(weekOf(createdAt)).getTime() + WEEK_MS + opts.releaseDelayHours * 3_600_000;
  return { commentsFrom: comment === null ? null : new Date(releasedAt).toISOString() };
}

/** An answer to write: its token spent, its pulse written. */
export interface SpentAnswer {
  orgId: string;
  keyId: string;
  /** SHA-256 of the token's message, hex: what is kept of a spent token. */
  hashHex: string;
  pulse: NewPulse;
}

/**
 * Spends the answers' tokens and writes the pulses of those spent now, in one transaction (each
 * organization's pulses in one call of the pulse door); returns, per answer, whether its token was
 * spent now (false: spent before, or by an earlier answer of the same list). The pulses are
 * written in the order of their ids (random), not of arrival.
 */
export async function writeAnswers(db: DatabaseExecutor, answers: readonly SpentAnswer[]): Promise<boolean[]> {
  // Per organization, the first answer of each token (by index): a token given twice in the list is spent by the first.
  const byOrg = new Map<string, Map<string, number>>();
  for (const [i, a] of answers.entries()) {
    const org = byOrg.get(a.orgId) ?? new Map<string, number>();
    byOrg.set(a.orgId, org);
    if (!org.has(a.hashHex)) org.set(a.hashHex, i);
  }
  const accepted = await db.transaction(async (tx) => {
    const accepted = new Set<number>();
    for (const [orgId, first] of [...byOrg].sort(([x], [y]) => (x < y ? -1 : x > y ? 1 : 0))) {
      const spent = await spendTokens(
        tx,
        orgId,
        [...first.values()].map((i) => answers[i]!),
      );
      const now = [...first.values()].filter((i) => spent.has(answers[i]!.hashHex));
      const pulses = now.map((i) => answers[i]!.pulse).sort((x, y) => (x.id < y.id ? -1 : 1));
      await writePulses(tx, orgId, pulses, { onExisting: 'fail' });
      for (const i of now) accepted.add(i);
    }
    return accepted;
  });
  return answers.map((_, i) => accepted.has(i));
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
  private queue: { answer: SpentAnswer; resolve: (spent: boolean) => void; reject: (err: unknown) => void }[] = [];
  private running = false;

  constructor(
    private readonly db: DatabaseExecutor,
    private readonly maxBatch = 500,
  ) {}

  /** Resolves once the answer's transaction committed: true when its token was spent now, false when spent before. */
  write(answer: SpentAnswer): Promise<boolean> {
    const done = new Promise<boolean>((resolve, reject) => this.queue.push({ answer, resolve, reject }));
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
