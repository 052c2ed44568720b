import { sql, type Queryable } from '../executor.js';
import type { NewPulse } from './pulses.js';

/**
 * One primary-key probe per id, whatever the statistics say. The form `id = ANY ($2)` was planned
 * once, while the organization's pulses were few, as a scan of all its pulses filtered by the
 * array, and the prepared statement kept that plan: live ingestion into a new organization grew
 * quadratically (a batch of 1,000 took 2.4 s after 40,000 pulses). LIMIT 1 keeps the lookup a
 * nested loop over the ids.
 */
export const byIdsQuery = sql(
  'pulses.by_ids',
  `SELECT p.id, p.level, p.reason, p.moderation_status, p.subteam_id, p.created_at
     FROM unnest($2::text[]) AS w(id)
     CROSS JOIN LATERAL (SELECT * FROM pulses WHERE org_id = $1 AND id = w.id LIMIT 1) p`,
);

/** A stored pulse as ingestion compares it: every field a batch sends except the comment. */
export type StoredPulse = Omit<NewPulse, 'comment'>;

/**
 * The stored fields of the pulses with these ids (those that exist), as a batch would send them,
 * without the comment: ingestion never compares it (CONTRACT.md section 10), so no answer can say
 * whether a guessed text is a pulse's comment. Not reading it makes that hold by construction.
 */
export async function pulsesByIds(db: Queryable, orgId: string, ids: string[]): Promise<Map<string, StoredPulse>> {
  if (ids.length === 0) return new Map();
  const rows = await db.query<{
    id: string;
    level: number;
    reason: string | null;
    moderation_status: 'CLEAN' | 'FLAGGED';
    subteam_id: string | null;
    created_at: Date | string;
  }>(byIdsQuery, [orgId, ids]);
  return new Map(
    rows.map((r) => [
      r.id,
      {
        id: r.id,
        level: r.level,
        reason: r.reason,
        moderationStatus: r.moderation_status,
        subteamId: r.subteam_id,
        createdAt: new Date(r.created_at).toISOString(),
      },
    ]),
  );
}
