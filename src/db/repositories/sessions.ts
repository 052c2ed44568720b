import { sql, type Queryable } from '../executor.js';
import type { SessionStage } from './members.js';
import { iso } from './time.js';

/** One console session of a member, as the member's own sessions page lists it (never its cookie). */
export interface MemberSessionRow {
  idHash: Buffer;
  stage: SessionStage;
  address: string | null;
  createdAt: string;
  lastSeenAt: string;
}

const listQuery = sql(
  'console_sessions.list_member',
  `SELECT id_hash, stage, address, created_at, last_seen_at FROM console_sessions
    WHERE org_id = $1 AND member_id = $2
    ORDER BY last_seen_at DESC, created_at DESC`,
);
export async function listMemberSessionRows(db: Queryable, orgId: string, memberId: string): Promise<MemberSessionRow[]> {
  const rows = await db.query<{ id_hash: Buffer | Uint8Array; stage: SessionStage; address: string | null; created_at: Date; last_seen_at: Date }>(listQuery, [
    orgId,
    memberId,
  ]);
  return rows.map((r) => ({
    idHash: Buffer.from(r.id_hash),
    stage: r.stage,
    address: r.address,
    createdAt: iso(r.created_at),
    lastSeenAt: iso(r.last_seen_at),
  }));
}

const endAllQuery = sql('console_sessions.end_member_counted', `DELETE FROM console_sessions WHERE org_id = $1 AND member_id = $2 RETURNING 1 AS n`);
const endOthersQuery = sql(
  'console_sessions.end_member_others',
  `DELETE FROM console_sessions WHERE org_id = $1 AND member_id = $2 AND id_hash <> $3 RETURNING 1 AS n`,
);
/** Deletes the member's sessions, all of them or all but `keep`; how many. */
export async function deleteMemberSessionRows(db: Queryable, orgId: string, memberId: string, keep: Buffer | null): Promise<number> {
  const rows = keep ? await db.query(endOthersQuery, [orgId, memberId, keep]) : await db.query(endAllQuery, [orgId, memberId]);
  return rows.length;
}

const endWithoutSso = sql(
  'console_sessions.end_without_sso',
  `DELETE FROM console_sessions
    WHERE org_id = $1 AND sso_protocol IS NULL AND NOT (passkey AND member_id IS NOT DISTINCT FROM $2::text)
    RETURNING member_id`,
);
/**
 * Deletes the organization's sessions that did not come through its IdP, but the passkey sessions
 * of `keepPasskeyOf` (the break-glass owner; null: none kept); the member of each session ended.
 */
export async function deleteSessionsWithoutSso(db: Queryable, orgId: string, keepPasskeyOf: string | null): Promise<string[]> {
  const rows = await db.query<{ member_id: string }>(endWithoutSso, [orgId, keepPasskeyOf]);
  return rows.map((r) => r.member_id);
}
