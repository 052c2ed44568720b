import { sql, type NamedQuery, type Queryable } from '../executor.js';
import { iso } from './time.js';

export type AuditActorKind = 'member' | 'operator' | 'key';

/** One row of audit_events (migration 0014), as the domain writes it and reads it back. */
export interface AuditRow {
  id: string;
  createdAt: string;
  actorKind: AuditActorKind;
  actorId: string | null;
  actorLabel: string;
  action: string;
  targetKind: string;
  targetId: string | null;
  address: string | null;
  details: Record<string, unknown>;
}

/** The keyset of a page: `(created_at, id)` of the last row returned. */
export interface AuditKeyset {
  createdAt: string;
  id: string;
}

const insertQuery = sql(
  'audit_events.insert',
  `INSERT INTO audit_events (org_id, id, created_at, actor_kind, actor_id, actor_label, action, target_kind, target_id, address, details)
   VALUES ($1, $2, $3::timestamptz, $4, $5, $6, $7, $8, $9, $10, $11::jsonb)`,
);

/** The parameters of one row, in the order of the insert's columns after org_id. */
export const auditParams = (e: AuditRow): unknown[] => [
  e.id,
  e.createdAt,
  e.actorKind,
  e.actorId,
  e.actorLabel,
  e.action,
  e.targetKind,
  e.targetId,
  e.address,
  JSON.stringify(e.details),
];

/** Writes one row, in the caller's transaction (the one of the change it records). */
export async function insertAuditEvent(db: Queryable, orgId: string, e: AuditRow): Promise<void> {
  await db.query(insertQuery, [orgId, ...auditParams(e)]);
}

export interface AuditFilter {
  actorKind?: AuditActorKind;
  action?: string;
  after?: AuditKeyset;
  limit: number;
}

/** One prepared statement per combination of filters, all reading audit_events_recent newest first. */
const listVariants = new Map<string, NamedQuery>();

function listQuery(f: AuditFilter): { q: NamedQuery; params: unknown[] } {
  const params: unknown[] = [f.limit];
  const where = ['org_id = $1'];
  let key = '';
  const add = (cond: (n: number) => string, value: unknown) => {
    params.push(value);
    where.push(cond(params.length + 1));
  };
  if (f.actorKind !== undefined) {
    key += 'k';
    add((n) => `actor_kind = $${n}`, f.actorKind);
  }
  if (f.action !== undefined) {
    key += 'a';
    add((n) => `action = $${n}`, f.action);
  }
  if (f.after) {
    key += 'c';
    add((n) => `(created_at, id) < ($${n}::timestamptz, $${n + 1}::text)`, f.after.createdAt);
    params.push(f.after.id);
  }
  let q = listVariants.get(key);
  if (!q) {
    q = sql(
      `audit_events.list.${key || 'plain'}`,
      `SELECT id, created_at, actor_kind, actor_id, actor_label, action, target_kind, target_id, address, details
         FROM audit_events
        WHERE ${where.join(' AND ')}
        ORDER BY created_at DESC, id DESC
        LIMIT $2`,
    );
    listVariants.set(key, q);
  }
  return { q, params };
}

interface AuditDbRow {
  id: string;
  created_at: Date;
  actor_kind: AuditActorKind;
  actor_id: string | null;
  actor_label: string;
  action: string;
  target_kind: string;
  target_id: string | null;
  address: string | null;
  details: Record<string, unknown> | string;
}

/** An organization's rows, newest first by (created_at, id), after the keyset when one is given. */
export async function listAuditEvents(db: Queryable, orgId: string, f: AuditFilter): Promise<AuditRow[]> {
  const { q, params } = listQuery(f);
  return (await db.query<AuditDbRow>(q, [orgId, ...params])).map(rowOf);
}

/**
 * The rows of a range, oldest first by (created_at, id): `from` inclusive, `to` exclusive, after
 * the keyset of the previous batch. The export reads the log this way, a batch at a time, on
 * audit_events_recent read forward from the range's start.
 */
const rangeQuery = sql(
  'audit_events.range',
  `SELECT id, created_at, actor_kind, actor_id, actor_label, action, target_kind, target_id, address, details
     FROM audit_events
    WHERE org_id = $1 AND created_at >= $2::timestamptz AND created_at < $3::timestamptz
      AND (created_at, id) > ($4::timestamptz, $5::text)
    ORDER BY created_at, id
    LIMIT $6`,
);
export async function listAuditEventsInRange(
  db: Queryable,
  orgId: string,
  r: { from: string; to: string; after: AuditKeyset | null; limit: number },
): Promise<AuditRow[]> {
  // The first batch starts "after" an instant before the range, with an id below every id.
  const after = r.after ?? { createdAt: r.from, id: '' };
  return (await db.query<AuditDbRow>(rangeQuery, [orgId, r.from, r.to, after.createdAt, after.id, r.limit])).map(rowOf);
}

const deleteExpiredQuery = sql(
  'audit_events.delete_expired',
  `DELETE FROM audit_events
    WHERE org_id = $1 AND id IN (
      SELECT id FROM audit_events WHERE org_id = $1 AND created_at < $2::timestamptz ORDER BY created_at LIMIT $3)
   RETURNING 1 AS n`,
);
/** Deletes at most `limit` of the organization's rows older than `before`, oldest first; how many. */
export async function deleteExpiredAuditEvents(db: Queryable, orgId: string, before: Date, limit: number): Promise<number> {
  return (await db.query(deleteExpiredQuery, [orgId, before.toISOString(), limit])).length;
}

function rowOf(r: AuditDbRow): AuditRow {
  return {
    id: r.id,
    createdAt: iso(r.created_at),
    actorKind: r.actor_kind,
    actorId: r.actor_id,
    actorLabel: r.actor_label,
    action: r.action,
    targetKind: r.target_kind,
    targetId: r.target_id,
    address: r.address,
    details: typeof r.details === 'string' ? (JSON.parse(r.details) as Record<string, unknown>) : r.details,
  };
}
