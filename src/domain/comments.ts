import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';
import type { DatabaseExecutor, Queryable } from '../db/executor.js';
import {
  countInFrozenWeeks,
  frozenSpans,
  hasWithheldPulses,
  lockReleases,
  recordSpan,
  releasedComments,
  releaseWeekRange,
  weeksWithCleanPulses,
  type Span,
  type WeekDate,
} from '../db/repositories/comments.js';
import { pgIso } from '../db/repositories/time.js';
import { ApiError, invalid } from '../contract/errors.js';
import type { CommentList, CommentListQuery } from '../contract/schemas/comments.js';
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
 * secret and a cache of the weeks known to be frozen (they never thaw, so the cache is never stale).
 */
export class CommentReleases {
  private readonly cursorKey: Buffer;
  private readonly pads: { inner: Buffer; outer: Buffer };
  private readonly frozen = new Map<string, Span[]>();

  constructor(
    secret: string,
    readonly releaseDelayMs: number,
  ) {
    this.cursorKey = createHash('sha256').update('comments-cursor:').update(secret).digest();
    // HMAC-SHA256 over the pulse id is computed in SQL from the key's pads (RFC 2104).
    const key = Buffer.alloc(64);
    createHash('sha256').update('comments-order:').update(secret).digest().copy(key);
    this.pads = { inner: Buffer.from(key.map((b) => b ^ 0x36)), outer: Buffer.from(key.map((b) => b ^ 0x5c)) };
  }

  /** The last week (its Monday) that may be released at `now`: ended, plus the delay for late syncs. */
  lastReleasableWeek(now: Date): Date {
    return mondayOf(new Date(now.getTime() - WEEK_MS - this.releaseDelayMs));
  }

  /**
   * Makes sure every week of [first, last] is frozen. Weeks not yet frozen are released in one
   * transaction under the organization's lock, so two processes releasing the same week at once
   * produce one release; the database's keys refuse a second one in any case.
   */
  async ensureReleased(db: DatabaseExecutor, orgId: string, first: WeekDate, last: WeekDate, now: Date): Promise<void> {
    if (covers(this.frozen.get(orgId) ?? [], first, last)) return;
    let spans = await frozenSpans(db, orgId, first, last);
    if (gaps(spans, first, last).length > 0) {
      await db.transaction(async (tx) => {
        await lockReleases(tx, orgId);
        spans = await frozenSpans(tx, orgId, first, last);
        for (const gap of gaps(spans, first, last)) {
          for (const chunk of await this.chunks(tx, orgId, gap)) {
            await releaseWeekRange(tx, orgId, chunk, this.pads);
          }
          await recordSpan(tx, orgId, gap, now);
        }
      });
      spans = [{ first, last }];
    }
    if (this.frozen.size > 10_000) this.frozen.clear();
    this.frozen.set(orgId, merge([...(this.frozen.get(orgId) ?? []), ...spans]));
  }

  /** Splits a gap into ranges of weeks of bounded size, skipping weeks without CLEAN pulses. */
  private async chunks(tx: Queryable, orgId: string, gap: Span): Promise<{ fromInstant: string; toInstant: string }[]> {
    const out: { fromInstant: string; toInstant: string }[] = [];
    let start: string | undefined;
    let end = '';
    let size = 0;
    const flush = () => {
      if (start !== undefined) out.push({ fromInstant: `${start}T00:00:00.000Z`, toInstant: pgIso(new Date(Date.parse(end) + WEEK_MS)) });
      start = undefined;
      size = 0;
    };
    for (const w of await weeksWithCleanPulses(tx, orgId, gap.first, gap.last)) {
      if (start !== undefined && size + w.n > RELEASE_CHUNK_PULSES) flush();
      start ??= w.week;
      end = w.week;
      size += w.n;
    }
    flush();
    return out;
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
 * Counts pulses per ISO week while an import streams them (cheap per row: integer day
 * arithmetic), then says how many fell into weeks whose comments are already released.
 */
export class FrozenWeekTally {
  private readonly perMonday = new Map<number, number>();

  add(createdAt: string): void {
    const day = Math.floor(Date.parse(createdAt) / DAY_MS);
    const monday = day - ((((day + 3) % 7) + 7) % 7); // 1970-01-01 was a Thursday
    this.perMonday.set(monday, (this.perMonday.get(monday) ?? 0) + 1);
  }

  count(db: Queryable, orgId: string): Promise<number> {
    const perWeek = new Map([...this.perMonday].map(([d, n]) => [ymd(new Date(d * DAY_MS)), n]));
    return countInFrozenWeeks(db, orgId, perWeek);
  }
}

/** Does the union of `spans` (sorted, merged or not) cover every week of [first, last]? */
function covers(spans: Span[], first: WeekDate, last: WeekDate): boolean {
  return gaps(spans, first, last).length === 0;
}

/** The parts of [first, last] that no span covers, as spans of Mondays. */
function gaps(spans: Span[], first: WeekDate, last: WeekDate): Span[] {
  const out: Span[] = [];
  let next = first;
  for (const s of [...spans].sort((a, b) => a.first.localeCompare(b.first))) {
    if (s.last < next) continue;
    if (s.first > last) break;
    if (s.first > next) out.push({ first: next, last: addWeeks(s.first, -1) });
    next = addWeeks(s.last, 1);
    if (next > last) return out;
  }
  if (next <= last) out.push({ first: next, last });
  return out;
}

function merge(spans: Span[]): Span[] {
  const sorted = [...spans].sort((a, b) => a.first.localeCompare(b.first));
  const out: Span[] = [];
  for (const s of sorted) {
    const prev = out[out.length - 1];
    if (prev && s.first <= addWeeks(prev.last, 1)) {
      if (s.last > prev.last) prev.last = s.last;
    } else out.push({ ...s });
  }
  return out;
}

const addWeeks = (week: WeekDate, n: number): WeekDate => ymd(new Date(Date.parse(`${week}T00:00:00.000Z`) + n * WEEK_MS));

/** The Sunday of a week, as a date; the last week of year 9999 ends on the last day the API can write. */
const sundayOf = (week: Date): string => {
  const sunday = new Date(week.getTime() + 6 * DAY_MS);
  return sunday.getUTCFullYear() > 9999 ? LAST_DAY : ymd(sunday);
};

export async function listCommentPage(
  db: DatabaseExecutor,
  orgId: string,
  q: CommentListQuery,
  releases: CommentReleases,
  now = new Date(),
): Promise<CommentList> {
  const limit = q.limit ?? 20;
  const cursor = q.cursor !== undefined ? releases.open(orgId, q.cursor) : undefined;
  // A later page keeps the range of the first, even across midnight; filters given again must agree.
  if (cursor) {
    const given = { from: q.from ?? cursor.from, to: q.to ?? cursor.to, team: q.subteamId ?? cursor.team };
    if (given.from !== cursor.from || given.to !== cursor.to || given.team !== cursor.team) {
      throw new ApiError('invalid_cursor', "'cursor' was issued for other filters; repeat the first page's from, to and subteamId.");
    }
  }
  const toDay = cursor ? cursor.to : q.to ?? ymd(now);
  const toStart = parseDate(toDay, 'to');
  const fromDay = cursor ? cursor.from : q.from ?? ymd(new Date(Math.max(startOfUtcDay(now).getTime() - 29 * DAY_MS, Date.parse('0001-01-01'))));
  const fromStart = parseDate(fromDay, 'from');
  if (fromStart > toStart) throw invalid(`'from' must not be after 'to'.`);
  const team = cursor ? cursor.team ?? undefined : q.subteamId;

  // Every week that overlaps [from, to] is covered whole; of those, the ended ones are released.
  const firstWeek = mondayOf(fromStart);
  const lastWeek = mondayOf(toStart);
  const lastReleased = new Date(Math.min(lastWeek.getTime(), releases.lastReleasableWeek(now).getTime()));
  const envelope = { minimumSample: MINIMUM_SAMPLE, from: ymd(firstWeek), to: sundayOf(lastWeek) };
  if (lastReleased < firstWeek) {
    return { items: [], ...envelope, nextCursor: null, suppressed: false, releasedThrough: null };
  }
  const weeks = { from: ymd(firstWeek), to: ymd(lastReleased) };
  await releases.ensureReleased(db, orgId, weeks.from, weeks.to, now);

  const cell = team !== undefined ? `team:${team}` : undefined;
  const [rows, suppressed] = await Promise.all([
    releasedComments(db, orgId, { ...weeks, cell, after: cursor, limit: limit + 1 }),
    hasWithheldPulses(db, orgId, { ...weeks, cell }),
  ]);
  const page = rows.slice(0, limit);
  const last = page[page.length - 1];
  return {
    items: page.map((r) => ({ comment: r.comment })),
    ...envelope,
    nextCursor:
      rows.length > limit ? releases.seal(orgId, { week: last.week, rank: last.rank, from: fromDay, to: toDay, team: team ?? null }) : null,
    suppressed,
    releasedThrough: sundayOf(lastReleased),
  };
}
