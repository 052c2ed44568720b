import type { Queryable } from '../db/executor.js';
import { listPulses, type Keyset } from '../db/repositories/pulses.js';
import { ApiError } from '../contract/errors.js';
import type { PulseList, PulseListQuery } from '../contract/schemas/pulses.js';
import { DAY_MS, resolveRange } from './time.js';

const CURSOR = /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z)\|(.{1,128})$/s;

/** The seed fixes the cursor's form: `createdAt|id` of the last item returned. */
export function encodePulseCursor(k: Keyset): string {
  return `${k.createdAt}|${k.id}`;
}

export function decodePulseCursor(cursor: string): Keyset {
  const m = CURSOR.exec(cursor);
  // Year 0000 round-trips in JavaScript but is no PostgreSQL year (there is no year zero).
  if (!m || m[1].startsWith('0000') || Number.isNaN(Date.parse(m[1])) || new Date(m[1]).toISOString() !== m[1]) {
    throw new ApiError('invalid_cursor', "'cursor' is not a cursor of GET /pulses; pass the nextCursor of the previous page.");
  }
  return { createdAt: m[1], id: m[2] };
}

export async function listPulsePage(db: Queryable, orgId: string, q: PulseListQuery, now = new Date()): Promise<PulseList> {
  const { from, to } = resolveRange(q, 30 * DAY_MS, now);
  const limit = q.limit ?? 50;
  const after = q.cursor !== undefined ? decodePulseCursor(q.cursor) : undefined;
  // One extra row tells whether another page exists, so nextCursor is never a dead end.
  const rows = await listPulses(db, orgId, { from, to, level: q.level, subteamId: q.subteamId, after, limit: limit + 1 });
  const items = rows.slice(0, limit);
  const last = items[items.length - 1];
  return { items, nextCursor: rows.length > limit ? encodePulseCursor({ createdAt: last.createdAt, id: last.id }) : null };
}
