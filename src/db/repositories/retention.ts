import { sql, type Queryable } from '../executor.js';

/** How long an organization keeps its audit entries and its webhook delivery log (migration 0026). */
export interface RetentionRow {
  auditDays: number;
  deliveryDays: number;
}

const getQuery = sql('retention.get', `SELECT audit_retention_days, delivery_retention_days FROM organizations WHERE id = $1`);
/** Deleted organizations too (they keep their logs, under the same retention); null for none. */
export async function selectRetention(db: Queryable, orgId: string): Promise<RetentionRow | null> {
  const [r] = await db.query<{ audit_retention_days: number; delivery_retention_days: number }>(getQuery, [orgId]);
  return r ? { auditDays: r.audit_retention_days, deliveryDays: r.delivery_retention_days } : null;
}

const updateQuery = sql(
  'retention.update',
  `UPDATE organizations SET audit_retention_days = $2, delivery_retention_days = $3
    WHERE id = $1 AND deleted_at IS NULL
   RETURNING audit_retention_days, delivery_retention_days`,
);
/** Sets both values of a live organization; false when there is none. */
export async function updateRetentionRow(db: Queryable, orgId: string, r: RetentionRow): Promise<boolean> {
  return (await db.query(updateQuery, [orgId, r.auditDays, r.deliveryDays])).length === 1;
}

const pageQuery = sql(
  'retention.organizations',
  `SELECT id, audit_retention_days, delivery_retention_days FROM organizations WHERE id > $1 ORDER BY id LIMIT $2`,
);
/** Every organization (deleted ones keep their logs, so their retention applies too), by id, a page at a time. */
export async function listRetentionPage(db: Queryable, afterId: string, limit: number): Promise<(RetentionRow & { orgId: string })[]> {
  const rows = await db.query<{ id: string; audit_retention_days: number; delivery_retention_days: number }>(pageQuery, [afterId, limit]);
  return rows.map((r) => ({ orgId: r.id, auditDays: r.audit_retention_days, deliveryDays: r.delivery_retention_days }));
}

// Each delete takes at most $3 rows, oldest first, and names its organization in every table it
// reads, so that on Citus it runs on that organization's shard group alone.

const deleteDeliveriesQuery = sql(
  'retention.delete_deliveries',
  `DELETE FROM webhook_deliveries
    WHERE org_id = $1 AND id IN (
      SELECT id FROM webhook_deliveries
       WHERE org_id = $1 AND created_at < $2::timestamptz AND status <> 'pending'
       ORDER BY created_at LIMIT $3)
   RETURNING 1 AS n`,
);
/** Finished deliveries (succeeded or failed) made before `before`; a pending one is never deleted. */
export async function deleteExpiredDeliveries(db: Queryable, orgId: string, before: Date, limit: number): Promise<number> {
  return (await db.query(deleteDeliveriesQuery, [orgId, before.toISOString(), limit])).length;
}

const deleteEventsQuery = sql(
  'retention.delete_events',
  `DELETE FROM webhook_events
    WHERE org_id = $1 AND id IN (
      SELECT e.id FROM webhook_events e
       WHERE e.org_id = $1 AND e.created_at < $2::timestamptz
         AND NOT EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.org_id = e.org_id AND d.event_id = e.id)
       ORDER BY e.created_at LIMIT $3)
   RETURNING 1 AS n`,
);
/** Events (their payloads) made before `before` that no delivery refers to any more. */
export async function deleteExpiredWebhookEvents(db: Queryable, orgId: string, before: Date, limit: number): Promise<number> {
  return (await db.query(deleteEventsQuery, [orgId, before.toISOString(), limit])).length;
}
