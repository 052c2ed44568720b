import { sql, type Queryable } from '../executor.js';
import { iso, pgIso } from './time.js';
import type { Keyset } from './pulses.js';

export interface CommentRow {
  comment: string;
  /** Kept server-side only, to build the encrypted cursor. */
  key: Keyset;
}

const variants = {
  plain: sql(
    'comments.list.plain',
    `SELECT id, comment, created_at FROM pulses
      WHERE org_id = $1 AND moderation_status = 'CLEAN' AND comment <> '' AND created_at >= $2 AND created_at < $3
      ORDER BY created_at DESC, id DESC LIMIT $4`,
  ),
  team: sql(
    'comments.list.team',
    `SELECT id, comment, created_at FROM pulses
      WHERE org_id = $1 AND moderation_status = 'CLEAN' AND comment <> '' AND created_at >= $2 AND created_at < $3
        AND subteam_id = $5
      ORDER BY created_at DESC, id DESC LIMIT $4`,
  ),
  plainAfter: sql(
    'comments.list.plain_after',
    `SELECT id, comment, created_at FROM pulses
      WHERE org_id = $1 AND moderation_status = 'CLEAN' AND comment <> '' AND created_at >= $2 AND created_at < $3
        AND (created_at, id) < ($5::timestamptz, $6::text)
      ORDER BY created_at DESC, id DESC LIMIT $4`,
  ),
  teamAfter: sql(
    'comments.list.team_after',
    `SELECT id, comment, created_at FROM pulses
      WHERE org_id = $1 AND moderation_status = 'CLEAN' AND comment <> '' AND created_at >= $2 AND created_at < $3
        AND subteam_id = $5 AND (created_at, id) < ($6::timestamptz, $7::text)
      ORDER BY created_at DESC, id DESC LIMIT $4`,
  ),
};

export async function listComments(
  db: Queryable,
  orgId: string,
  f: { from: Date; to: Date; subteamId?: string; after?: Keyset; limit: number },
): Promise<CommentRow[]> {
  const base = [orgId, pgIso(f.from), pgIso(f.to), f.limit];
  const team = f.subteamId !== undefined ? [f.subteamId] : [];
  const after = f.after ? [f.after.createdAt, f.after.id] : [];
  const q = f.subteamId !== undefined ? (f.after ? variants.teamAfter : variants.team) : f.after ? variants.plainAfter : variants.plain;
  const rows = await db.query<{ id: string; comment: string; created_at: Date }>(q, [...base, ...team, ...after]);
  return rows.map((r) => ({ comment: r.comment, key: { createdAt: iso(r.created_at), id: r.id } }));
}
