import type { Queryable } from './executor.js';
import { sql } from './executor.js';
import type { NewPulse } from './repositories/pulses.js';

export type { NewPulse };

/** What to do with a pulse whose id already exists in the organization. */
export type OnExisting = 'fail' | 'skip';

const insertSkipping = sql(
  'pulse_writes.insert_skip',
  `WITH ins AS (
     INSERT INTO pulses (org_id, id, level, reason, comment, moderation_status, subteam_id, created_at)
     SELECT $1, * FROM unnest($2::text[], $3::smallint[], $4::text[], $5::text[], $6::text[], $7::text[], $8::timestamptz[])
     ON CONFLICT (org_id, id) DO NOTHING
     RETURNING 1)
   SELECT count(*)::int AS n FROM ins`,
);
const insertFailing = sql(
  'pulse_writes.insert',
  `WITH ins AS (
     INSERT INTO pulses (org_id, id, level, reason, comment, moderation_status, subteam_id, created_at)
     SELECT $1, * FROM unnest($2::text[], $3::smallint[], $4::text[], $5::text[], $6::text[], $7::text[], $8::timestamptz[])
     RETURNING 1)
   SELECT count(*)::int AS n FROM ins`,
);

/**
 * The one door for pulse writes (dataset load, file import, live ingestion): inserts validated
 * pulses of one organization inside the caller's transaction and keeps every rollup exact in
 * that same transaction. Returns how many rows were inserted.
 */
export async function writePulses(tx: Queryable, orgId: string, pulses: NewPulse[], opts: { onExisting: OnExisting }): Promise<number> {
  if (pulses.length === 0) return 0;
  const [r] = await tx.query<{ n: number }>(opts.onExisting === 'skip' ? insertSkipping : insertFailing, [
    orgId,
    pulses.map((p) => p.id),
    pulses.map((p) => p.level),
    pulses.map((p) => p.reason),
    pulses.map((p) => p.comment),
    pulses.map((p) => p.moderationStatus),
    pulses.map((p) => p.subteamId),
    pulses.map((p) => p.createdAt),
  ]);
  return r.n;
}
