import { sql, type Queryable } from '../executor.js';
import type { NewPulse } from './pulses.js';

const byIdsQuery = sql(
  'pulses.by_ids',
  `SELECT id, level, reason, comment, moderation_status, subteam_id, created_at
     FROM pulses WHERE org_id = $1 AND id = ANY ($2::text[])`,
);

/** The stored fields of the pulses with these ids (those that exist), as a batch would send them. */
export async function pulsesByIds(db: Queryable, orgId: string, ids: string[]): Promise<Map<string, NewPulse>> {
  if (ids.length === 0) return new Map();
  const rows = await db.query<{
    id: string; level: number; reason: string | null; comment: string | null; moderation_status: 'CLEAN' | 'FLAGGED';
    subteam_id: string | null; created_at: Date | string;
  }>(byIdsQuery, [orgId, ids]);
  return new Map(
    rows.map((r) => [
      r.id,
      {
        id: r.id,
        level: r.level,
        reason: r.reason,
        comment: r.comment,
        moderationStatus: r.moderation_status,
        subteamId: r.subteam_id,
        createdAt: new Date(r.created_at).toISOString(),
      },
    ]),
  );
}
