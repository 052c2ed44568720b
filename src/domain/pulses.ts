import type { Queryable } from '../db/executor.js';
import { listPulses, type Keyset } from '../db/repositories/pulses.js';
import { listTeamNames } from '../db/repositories/teams.js';
import { ApiError } from '../contract/errors.js';
import type { PulseList, PulseListQuery } from '../contract/schemas/pulses.js';
import { DAY_MS, resolveRange } from './time.js';

const CURSOR = /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z)\|(.{1,128})$/s;

/** The seed fixes the cursor's form: `createdAt|id` of the last item returned (the audit log's is alike). */
export function encodeKeysetCursor(k: Keyset): string {
  return `${k.createdAt}|${k.id}`;
}

export const encodePulseCursor = encodeKeysetCursor;

/** A `createdAt|id` cursor of a list newest first (`list` names it in the error), decoded or refused. */
export function decodeKeysetCursor(cursor: string, list: string): Keyset {
  const m = CURSOR.exec(cursor);
  // Year 0000 round-trips in JavaScript but is no PostgreSQL year (there is no year zero).
  if (!m || m[1].startsWith('0000') || Number.isNaN(Date.parse(m[1])) || new Date(m[1]).toISOString() !== m[1]) {
    throw new ApiError('invalid_cursor', `'cursor' is not a cursor of ${list}; pass the nextCursor of the previous page.`);
  }
  return { createdAt: m[1], id: m[2] };
}

export const decodePulseCursor = (cursor: string): Keyset => decodeKeysetCursor(cursor, 'GET /pulses');

/**
 * The names of an organization's teams, kept per process for at most `ttlMs` (the key cache's
 * bound, <= 5 s) so that a page of pulses needs no join (src/db/repositories/pulses.ts). A team is
 * never renamed; it goes only when its organization is erased, and an erased organization's id can
 * be created again with other teams: after `ttlMs` no name of the earlier one is served, as no key
 * of it is accepted. A team not yet known (created since) is read on the page that shows it.
 */
export class TeamNames {
  private readonly byOrg = new Map<string, { at: number; names: Map<string, string> }>();

  constructor(
    private readonly ttlMs: number,
    private readonly maxOrgs = 10_000,
  ) {}

  /** The name of each team id of `ids` (a team id that names no team of the organization gets none). */
  async of(db: Queryable, orgId: string, ids: Iterable<string>, now = Date.now()): Promise<Map<string, string>> {
    let entry = this.byOrg.get(orgId);
    if (!entry || now - entry.at >= this.ttlMs) {
      if (!entry && this.byOrg.size >= this.maxOrgs) this.byOrg.clear();
      entry = { at: now, names: new Map() };
      if (this.ttlMs > 0) this.byOrg.set(orgId, entry);
    }
    const missing = new Set<string>();
    for (const id of ids) if (!entry.names.has(id)) missing.add(id);
    if (missing.size > 0) for (const t of await listTeamNames(db, orgId, [...missing])) entry.names.set(t.id, t.name);
    return entry.names;
  }
}

export async function listPulsePage(db: Queryable, orgId: string, q: PulseListQuery, now: Date, teams: TeamNames): Promise<PulseList> {
  const { from, to } = resolveRange(q, 30 * DAY_MS, now);
  const limit = q.limit ?? 50;
  const after = q.cursor !== undefined ? decodePulseCursor(q.cursor) : undefined;
  // One extra row tells whether another page exists, so nextCursor is never a dead end.
  const rows = await listPulses(db, orgId, { from, to, level: q.level, subteamId: q.subteamId, after, limit: limit + 1 });
  const items = rows.slice(0, limit);
  const teamIds = new Set<string>();
  for (const r of items) if (r.subteamId !== null) teamIds.add(r.subteamId);
  if (teamIds.size > 0) {
    const names = await teams.of(db, orgId, teamIds);
    for (const r of items) if (r.subteamId !== null) r.subteamName = names.get(r.subteamId) ?? null;
  }
  const last = items[items.length - 1];
  return { items, nextCursor: rows.length > limit ? encodePulseCursor({ createdAt: last.createdAt, id: last.id }) : null };
}
