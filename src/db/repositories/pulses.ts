import { sql, type NamedQuery, type Queryable } from '../executor.js';

export interface PulseRow {
  id: string;
  level: number;
  moderationStatus: 'CLEAN' | 'FLAGGED';
  reason: string | null;
  subteamId: string | null;
  /** Not read here: null until the domain names the team (see listQuery). */
  subteamName: string | null;
  createdAt: string;
}

export interface Keyset {
  createdAt: string;
  id: string;
}

export interface PulseFilter {
  from: Date;
  to: Date;
  level?: number;
  subteamId?: string;
  after?: Keyset;
  limit: number;
}

/**
 * The hot path renders times in SQL: parsing a timestamp into a Date and printing it again
 * took a tenth of the CPU of a page.
 */
export const ISO_CREATED_AT = `to_char(p.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS created_at`;

/**
 * One prepared statement per combination of filters (all read pulses_page, migration 0012, backward
 * since migration 0020 keeps it in time order). A pulse shows the status it arrived with until a
 * release covers it, then the status it had at that release (CONTRACT.md section 5): `shown_status`
 * is set only while it differs from the current status (migration 0013), on the row read anyway.
 *
 * The team's name is not read here (src/domain/pulses.ts keeps the names): with a join to teams,
 * the generic plan lost to the custom plans on a large organization and every page was planned
 * again (0.64 ms of planning for 0.1 ms of work); a subquery per row cost the database half as much
 * again as the page itself (docs/decisions.md, issue 19).
 */
const listVariants = new Map<string, NamedQuery>();

export function listQuery(f: PulseFilter): { q: NamedQuery; params: unknown[] } {
  const params: unknown[] = [f.from.toISOString(), f.to.toISOString(), f.limit];
  const where = ['p.org_id = $1', 'p.created_at >= $2', 'p.created_at < $3'];
  let key = '';
  const add = (cond: (n: number) => string, value: unknown) => {
    params.push(value);
    where.push(cond(params.length + 1));
  };
  if (f.level !== undefined) {
    key += 'l';
    add((n) => `p.level = $${n}`, f.level);
  }
  if (f.subteamId !== undefined) {
    key += 't';
    add((n) => `p.subteam_id = $${n}`, f.subteamId);
  }
  if (f.after) {
    key += 'c';
    add((n) => `(p.created_at, p.id) < ($${n}::timestamptz, $${n + 1}::text)`, f.after.createdAt);
    params.push(f.after.id);
  }
  let q = listVariants.get(key);
  if (!q) {
    q = sql(
      `pulses.list.${key || 'plain'}`,
      `SELECT p.id, p.level, coalesce(p.shown_status, p.moderation_status) AS moderation_status, p.reason, p.subteam_id, ${ISO_CREATED_AT}
         FROM pulses p
        WHERE ${where.join(' AND ')}
        ORDER BY p.created_at DESC, p.id DESC
        LIMIT $4`,
    );
    listVariants.set(key, q);
  }
  return { q, params };
}

export async function listPulses(db: Queryable, orgId: string, f: PulseFilter): Promise<PulseRow[]> {
  const { q, params } = listQuery(f);
  const rows = await db.query<{
    id: string;
    level: number;
    moderation_status: 'CLEAN' | 'FLAGGED';
    reason: string | null;
    subteam_id: string | null;
    created_at: string;
  }>(q, [orgId, ...params]);
  return rows.map((r) => ({
    id: r.id,
    level: r.level,
    moderationStatus: r.moderation_status,
    reason: r.reason,
    subteamId: r.subteam_id,
    subteamName: null,
    createdAt: r.created_at,
  }));
}

export interface NewPulse {
  id: string;
  level: number;
  reason: string | null;
  comment: string | null;
  moderationStatus: 'CLEAN' | 'FLAGGED';
  subteamId: string | null;
  createdAt: string;
}
