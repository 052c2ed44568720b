import { createCipheriv, createDecipheriv, createHash, createHmac, randomBytes } from 'node:crypto';
import type { DatabaseExecutor, Queryable } from '../db/executor.js';
import {
  countInFrozenWeeks,
  hiddenComments,
  lockAgainstReleases,
  lockReleases,
  organizationsWithPulses,
  readAnswer,
  releaseDue,
  releaseLatePools,
  releaseNewWeeks,
  setReleasedCommentHidden,
  weeksToRelease,
  weeksWithLatePools,
  type OrderKey,
  type WeekDate,
} from '../db/repositories/comments.js';
import { ApiError, invalid } from '../contract/errors.js';
import type { CommentList, CommentListQuery } from '../contract/schemas/comments.js';
import { recordAudit, type Actor } from './audit.js';
import { requireLiveOrg } from './orgs.js';
import { MINIMUM_SAMPLE } from './stats.js';
import { DAY_MS, parseDate, startOfIsoWeek as mondayOf, startOfUtcDay, WEEK_MS, ymd } from './time.js';

/** What a comments cursor holds: the position, and the range and team it was issued for. */
interface CommentCursor {
  week: WeekDate;
  rank: Buffer;
  from: string;
  to: string;
  team: string | null;
}

/** A release handles at most about this many pulses in one statement (a statement timeout applies). */
const RELEASE_CHUNK_PULSES = 50_000;
const LAST_DAY = '9999-12-31';

/**
 * The comments of an organization are released per week, whole cells at a time (CONTRACT.md
 * section 5, docs/privacy.md). One instance per app: it holds the keys derived from the server
 * secret. Which weeks are frozen and which late pools are due is read on every answer, from two
 * small tables (pulses of other processes and imports change it), in the query that computes
 * `suppressed`.
 */
export class CommentReleases {
  private readonly cursorKey: Buffer;
  private readonly pads: { inner: Buffer; outer: Buffer };
  /** A public name of the order key (recorded with each batch of cells it ordered). */
  readonly orderKeyId: Buffer;

  constructor(
    secret: string,
    readonly releaseDelayMs: number,
  ) {
    this.cursorKey = createHash('sha256').update('comments-cursor:').update(secret).digest();
    // HMAC-SHA256 of (org_id, 0x00, pulse id) is computed in SQL from the key's pads (RFC 2104).
    const key = Buffer.alloc(64);
    createHash('sha256').update('comments-order:').update(secret).digest().copy(key);
    this.pads = { inner: Buffer.from(key.map((b) => b ^ 0x36)), outer: Buffer.from(key.map((b) => b ^ 0x5c)) };
    this.orderKeyId = createHmac('sha256', key.subarray(0, 32)).update('comments-order-key-id').digest().subarray(0, 8);
  }

  /**
   * The key of the order inside a week for one organization: HMAC-SHA256(key, salt || 0x00 || pulse id),
   * where the salt is the organization's own (made with its row), so that an organization erased and
   * created again with the same id does not repeat the old order (CONTRACT.md section 5).
   */
  orderKey(orderSalt: Buffer): OrderKey {
    return { innerPrefix: Buffer.concat([this.pads.inner, orderSalt, Buffer.from([0])]), outer: this.pads.outer, id: this.orderKeyId };
  }

  /** The last week (its Monday) that may be released at `now`: ended, plus the delay for late syncs. */
  lastReleasableWeek(now: Date): Date {
    return mondayOf(new Date(now.getTime() - WEEK_MS - this.releaseDelayMs));
  }

  /**
   * Releases what is due in the weeks [first, last] (all ended): weeks holding CLEAN pulses that
   * were never frozen are frozen whole, then late pools of frozen weeks that reached 5 (or a late
   * remainder of 5) become new cells. One transaction under the organization's lock, so two
   * processes releasing at once produce one release; the database's keys refuse a second one.
   */
  async release(db: DatabaseExecutor, orgId: string, first: WeekDate, last: WeekDate): Promise<void> {
    await db.transaction(async (tx) => {
      const key = this.orderKey(await lockReleases(tx, orgId));
      for (const weeks of chunks(await weeksToRelease(tx, orgId, first, last))) await releaseNewWeeks(tx, orgId, weeks, key);
      for (const weeks of chunks(await weeksWithLatePools(tx, orgId, first, last))) await releaseLatePools(tx, orgId, weeks, key);
    });
  }

  /** Kept for callers that freeze weeks ahead of an answer (tests, the bench). */
  async ensureReleased(db: DatabaseExecutor, orgId: string, first: WeekDate, last: WeekDate): Promise<void> {
    if (await releaseDue(db, orgId, first, last)) await this.release(db, orgId, first, last);
  }

  seal(orgId: string, c: CommentCursor): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.cursorKey, iv);
    cipher.setAAD(Buffer.from(orgId, 'utf8'));
    // Compact positional form keeps the token under 512 characters even for 128-character team ids.
    const plain = JSON.stringify([c.week, c.rank.toString('base64url'), c.from, c.to, c.team]);
    const body = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
    return Buffer.concat([iv, cipher.getAuthTag(), body]).toString('base64url');
  }

  open(orgId: string, token: string): CommentCursor {
    const bad = () => new ApiError('invalid_cursor', "'cursor' is not a cursor of GET /comments; pass the nextCursor of the previous page.");
    const raw = /^[A-Za-z0-9_-]+$/.test(token) ? Buffer.from(token, 'base64url') : Buffer.alloc(0);
    if (raw.length < 29) throw bad();
    try {
      const decipher = createDecipheriv('aes-256-gcm', this.cursorKey, raw.subarray(0, 12));
      decipher.setAuthTag(raw.subarray(12, 28));
      decipher.setAAD(Buffer.from(orgId, 'utf8'));
      const text = Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]).toString('utf8');
      const [week, rank, from, to, team] = JSON.parse(text) as [string, string, string, string, string | null];
      return { week, rank: Buffer.from(rank, 'base64url'), from, to, team };
    } catch {
      throw bad();
    }
  }
}

/**
 * Counts pulses per ISO week while an import streams them (cheap per row: a count per UTC
 * date, the first ten characters of a UTC createdAt), then says how many fell into weeks whose comments are already released.
 */
export class FrozenWeekTally {
  /** Pulses per UTC date; weeks are made at the end. */
  private readonly perDay = new Map<string, number>();

  add(createdAt: string): void {
    // A UTC date-time ('Z') starts with its UTC date; one with an offset (a dataset file's) is parsed.
    const date = createdAt.endsWith('Z') && createdAt[10] === 'T' ? createdAt.slice(0, 10) : ymd(new Date(Date.parse(createdAt)));
    this.perDay.set(date, (this.perDay.get(date) ?? 0) + 1);
  }

  count(db: Queryable, orgId: string): Promise<number> {
    const perWeek = new Map<string, number>();
    for (const [date, n] of this.perDay) {
      const day = Math.floor(Date.parse(`${date}T00:00:00.000Z`) / DAY_MS);
      const monday = ymd(new Date((day - ((((day + 3) % 7) + 7) % 7)) * DAY_MS)); // 1970-01-01 was a Thursday
      perWeek.set(monday, (perWeek.get(monday) ?? 0) + n);
    }
    return countInFrozenWeeks(db, orgId, perWeek);
  }
}

/**
 * Releases every week already due, in every organization, before a backup copies the database
 * (CONTRACT.md section 5): a copy served beside its original then starts from the same freezes, so
 * that the two cannot be compared week by week to isolate a late comment (docs/privacy.md). Each
 * organization in its own transaction, under its release lock, as an answer would release it.
 */
export async function releaseEverythingDue(db: DatabaseExecutor, releases: CommentReleases, now: Date): Promise<void> {
  const last = ymd(releases.lastReleasableWeek(now));
  for (const orgId of await organizationsWithPulses(db)) await releases.ensureReleased(db, orgId, FIRST_WEEK, last);
}

/** The Monday of the first week a date-time can fall in (0001-01-01 was a Monday). */
const FIRST_WEEK = '0001-01-01';

/** Groups weeks into runs of at most about RELEASE_CHUNK_PULSES pulses. */
function chunks(weeks: { week: WeekDate; n: number }[]): WeekDate[][] {
  const out: WeekDate[][] = [];
  let cur: WeekDate[] = [];
  let size = 0;
  for (const w of weeks) {
    if (cur.length > 0 && size + w.n > RELEASE_CHUNK_PULSES) {
      out.push(cur);
      cur = [];
      size = 0;
    }
    cur.push(w.week);
    size += w.n;
  }
  if (cur.length > 0) out.push(cur);
  return out;
}

/** The Sunday of a week, as a date; the last week of year 9999 ends on the last day the API can write. */
const sundayOf = (week: Date): string => {
  const sunday = new Date(week.getTime() + 6 * DAY_MS);
  return sunday.getUTCFullYear() > 9999 ? LAST_DAY : ymd(sunday);
};

/** GET /comments (CONTRACT.md section 5): one page of released comments. */
export async function listCommentPage(db: DatabaseExecutor, orgId: string, q: CommentListQuery, releases: CommentReleases, now: Date): Promise<CommentList> {
  return (await answerComments(db, orgId, q, releases, now)).list;
}

/**
 * The console's comments page: exactly GET /comments' answer (the same call, so the same cells,
 * freezing, order and `suppressed`), with each comment's handle beside it, and the comments
 * hidden in the covered weeks (of the same group), which an admin can show again.
 */
export async function listCommentPageWithHandles(
  db: DatabaseExecutor,
  orgId: string,
  q: CommentListQuery,
  releases: CommentReleases,
  now: Date,
): Promise<{ list: CommentList; handles: string[]; hidden: { comment: string; handle: string }[] }> {
  const { list, handles, covered } = await answerComments(db, orgId, q, releases, now);
  const hidden = covered ? await hiddenComments(db, orgId, { ...covered, limit: HIDDEN_LIST_LIMIT }) : [];
  return { list, handles, hidden: hidden.map((h) => ({ comment: h.comment, handle: commentHandle(h) })) };
}

/** The console lists at most this many hidden comments of a range (newest weeks first). */
const HIDDEN_LIST_LIMIT = 200;

async function answerComments(
  db: DatabaseExecutor,
  orgId: string,
  q: CommentListQuery,
  releases: CommentReleases,
  now: Date,
): Promise<{ list: CommentList; handles: string[]; covered: { from: WeekDate; to: WeekDate; cell?: string } | null }> {
  const limit = q.limit ?? 20;
  const cursor = q.cursor !== undefined ? releases.open(orgId, q.cursor) : undefined;
  // A later page keeps the range of the first, even across midnight; filters given again must agree.
  if (cursor) {
    const given = { from: q.from ?? cursor.from, to: q.to ?? cursor.to, team: q.subteamId ?? cursor.team };
    if (given.from !== cursor.from || given.to !== cursor.to || given.team !== cursor.team) {
      throw new ApiError('invalid_cursor', "'cursor' was issued for other filters; repeat the first page's from, to and subteamId.");
    }
  }
  const toDay = cursor ? cursor.to : (q.to ?? ymd(now));
  const toStart = parseDate(toDay, 'to');
  const fromDay = cursor ? cursor.from : (q.from ?? ymd(new Date(Math.max(startOfUtcDay(now).getTime() - 29 * DAY_MS, Date.parse('0001-01-01')))));
  const fromStart = parseDate(fromDay, 'from');
  if (fromStart > toStart) throw invalid(`'from' must not be after 'to'.`);
  const team = cursor ? (cursor.team ?? undefined) : q.subteamId;

  // Every week that overlaps [from, to] is covered whole; of those, the ended ones are released.
  const firstWeek = mondayOf(fromStart);
  const lastWeek = mondayOf(toStart);
  const lastReleased = new Date(Math.min(lastWeek.getTime(), releases.lastReleasableWeek(now).getTime()));
  const envelope = { minimumSample: MINIMUM_SAMPLE, from: ymd(firstWeek), to: sundayOf(lastWeek) };
  if (lastReleased < firstWeek) {
    return { list: { items: [], ...envelope, nextCursor: null, suppressed: false, releasedThrough: null }, handles: [], covered: null };
  }
  const weeks = { from: ymd(firstWeek), to: ymd(lastReleased) };
  const cell = team !== undefined ? `team:${team}` : undefined;
  const read = () => readAnswer(db, orgId, { ...weeks, cell, after: cursor, limit: limit + 1 });
  let answer = await read();
  if (answer.due) {
    await releases.release(db, orgId, weeks.from, weeks.to);
    answer = await read();
  }
  const { rows, withheld: suppressed } = answer;
  const page = rows.slice(0, limit);
  const last = page[page.length - 1];
  const list = {
    items: page.map((r) => ({ comment: r.comment })),
    ...envelope,
    nextCursor: rows.length > limit ? releases.seal(orgId, { week: last.week, rank: last.rank, from: fromDay, to: toDay, team: team ?? null }) : null,
    suppressed,
    releasedThrough: sundayOf(lastReleased),
  };
  return { list, handles: page.map(commentHandle), covered: { ...weeks, cell } };
}

/**
 * A released comment's handle: its week (the Monday, as YYYYMMDD) and its place in that week, the
 * keyed hash that orders the week (HMAC of the organization's order salt and the pulse id under a
 * server secret). It names the comment to the console without naming its pulse: it is no pulse id,
 * it differs between organizations (and for an organization erased and made again), and nothing in
 * the public API accepts it.
 */
export function commentHandle(c: { week: WeekDate; rank: Buffer }): string {
  return `${c.week.replaceAll('-', '')}${c.rank.toString('base64url')}`;
}

const HANDLE = /^(\d{4})(\d\d)(\d\d)([A-Za-z0-9_-]{16,88})$/;

function openHandle(handle: string): { week: WeekDate; rank: Buffer } | null {
  const m = HANDLE.exec(handle);
  if (!m) return null;
  const week = `${m[1]}-${m[2]}-${m[3]}`;
  const t = Date.parse(`${week}T00:00:00.000Z`);
  if (Number.isNaN(t) || ymd(new Date(t)) !== week || new Date(t).getUTCDay() !== 1) return null;
  return { week, rank: Buffer.from(m[4], 'base64url') };
}

/**
 * Hides a released comment, or shows it again, by its handle (the console's only moderation,
 * CONTRACT.md section 11). The comment leaves (or rejoins) every answer; no pulse's status, no
 * count, no cell and no `suppressed` changes, so two answers differ only by that comment. The audit
 * row names the handle, never a pulse.
 */
export async function updateCommentHidden(
  db: DatabaseExecutor,
  orgId: string,
  handle: string,
  hidden: boolean,
  actor: Actor,
  now: Date,
): Promise<{ handle: string; hidden: boolean; changed: boolean }> {
  await requireLiveOrg(db, orgId);
  const at = openHandle(handle);
  const missing = () => new ApiError('not_found', 'No released comment of this organization has this handle.');
  if (!at) throw missing();
  return db.transaction(async (tx) => {
    await lockAgainstReleases(tx, orgId);
    const outcome = await setReleasedCommentHidden(tx, orgId, at, hidden);
    if (outcome === 'missing') throw missing();
    const changed = outcome === 'changed';
    await recordAudit(
      tx,
      orgId,
      actor,
      { action: hidden ? 'comment.hidden' : 'comment.shown', target: { kind: 'comment', id: handle }, details: { changed } },
      now,
    );
    return { handle, hidden, changed };
  });
}
