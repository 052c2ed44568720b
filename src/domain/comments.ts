import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';
import type { Queryable } from '../db/executor.js';
import { listComments } from '../db/repositories/comments.js';
import type { Keyset } from '../db/repositories/pulses.js';
import { wholeDaysCount } from '../db/repositories/stats.js';
import { ApiError, invalid } from '../contract/errors.js';
import type { CommentList, CommentListQuery } from '../contract/schemas/comments.js';
import { MINIMUM_SAMPLE } from './stats.js';
import { pgYmd } from '../db/repositories/time.js';
import { DAY_MS, parseDate, startOfUtcDay, ymd } from './time.js';

/** What a comments cursor holds: the position and the range it was issued for. */
interface CommentCursor {
  k: Keyset;
  from: string;
  to: string;
  team: string | null;
}

/**
 * Comment cursors are sealed with AES-256-GCM under a server secret: a client can neither
 * read the pulse id and time inside (and so link a comment to a pulse of GET /pulses) nor
 * forge one. The organization is authenticated data of the seal: a cursor issued to one
 * organization is invalid_cursor for another.
 */
export class CommentCursorCodec {
  private readonly key: Buffer;

  constructor(secret: string) {
    this.key = createHash('sha256').update('comments-cursor:').update(secret).digest();
  }

  seal(orgId: string, c: CommentCursor): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv);
    cipher.setAAD(Buffer.from(orgId, 'utf8'));
    // Compact positional form keeps the token under 512 characters even for 128-character ids.
    const plain = JSON.stringify([Date.parse(c.k.createdAt), c.k.id, c.from, c.to, c.team]);
    const body = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
    return Buffer.concat([iv, cipher.getAuthTag(), body]).toString('base64url');
  }

  open(orgId: string, token: string): CommentCursor {
    const bad = () => new ApiError('invalid_cursor', "'cursor' is not a cursor of GET /comments; pass the nextCursor of the previous page.");
    const raw = /^[A-Za-z0-9_-]+$/.test(token) ? Buffer.from(token, 'base64url') : Buffer.alloc(0);
    if (raw.length < 29) throw bad();
    try {
      const decipher = createDecipheriv('aes-256-gcm', this.key, raw.subarray(0, 12));
      decipher.setAuthTag(raw.subarray(12, 28));
      decipher.setAAD(Buffer.from(orgId, 'utf8'));
      const text = Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]).toString('utf8');
      const [t, id, from, to, team] = JSON.parse(text) as [number, string, string, string, string | null];
      return { k: { createdAt: new Date(t).toISOString(), id }, from, to, team };
    } catch {
      throw bad();
    }
  }
}

export async function listCommentPage(
  db: Queryable,
  orgId: string,
  q: CommentListQuery,
  codec: CommentCursorCodec,
  now = new Date(),
): Promise<CommentList> {
  const limit = q.limit ?? 20;
  const cursor = q.cursor !== undefined ? codec.open(orgId, q.cursor) : undefined;
  // A later page keeps the range of the first, even across midnight; filters given again must agree.
  if (cursor) {
    const given = { from: q.from ?? cursor.from, to: q.to ?? cursor.to, team: q.subteamId ?? cursor.team };
    if (given.from !== cursor.from || given.to !== cursor.to || given.team !== cursor.team) {
      throw new ApiError('invalid_cursor', "'cursor' was issued for other filters; repeat the first page's from, to and subteamId.");
    }
  }
  const toDay = cursor ? cursor.to : q.to ?? ymd(now);
  const toStart = parseDate(toDay, 'to');
  const fromDay = cursor ? cursor.from : q.from ?? ymd(new Date(startOfUtcDay(now).getTime() - 29 * DAY_MS));
  const fromStart = parseDate(fromDay, 'from');
  if (fromStart > toStart) throw invalid(`'from' must not be after 'to'.`);
  const end = new Date(toStart.getTime() + DAY_MS);
  const team = cursor ? cursor.team ?? undefined : q.subteamId;

  const sample = await wholeDaysCount(db, orgId, fromDay, pgYmd(end), team);
  if (sample < MINIMUM_SAMPLE) {
    return { items: [], minimumSample: MINIMUM_SAMPLE, nextCursor: null, suppressed: true };
  }
  const rows = await listComments(db, orgId, { from: fromStart, to: end, subteamId: team, after: cursor?.k, limit: limit + 1 });
  const page = rows.slice(0, limit);
  const last = page[page.length - 1];
  return {
    items: page.map((r) => ({ comment: r.comment })),
    minimumSample: MINIMUM_SAMPLE,
    nextCursor:
      rows.length > limit ? codec.seal(orgId, { k: last.key, from: fromDay, to: toDay, team: team ?? null }) : null,
    suppressed: false,
  };
}
