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

/** An organization's rows, newest first by (created_at, id), after the keyset when one is given. */
export async function listAuditEvents(db: Queryable, orgId: string, f: AuditFilter): Promise<AuditRow[]> {
  const { q, params } = listQuery(f);
  const rows = await db.query<{
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
  }>(q, [orgId, ...params]);
  return rows.map((r) => ({
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
  }));
}
