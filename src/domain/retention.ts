import type { Queryable } from '../db/executor.js';
import { deleteExpiredAuditEvents } from '../db/repositories/audit.js';
import { deleteExpiredDeliveries, deleteExpiredWebhookEvents, listRetentionPage, selectRetention, updateRetentionRow } from '../db/repositories/retention.js';
import { RETENTION_BOUNDS, type Retention } from '../contract/schemas/admin-audit.js';
import { ApiError, invalid } from '../contract/errors.js';
import { recordAudit, type Actor } from './audit.js';
import type { DatabaseExecutor } from './database.js';

/**
 * How long an organization keeps its audit entries and its webhook delivery log (issue 52, item 4;
 * docs/decisions.md, "Retention of the audit log and the delivery log"), and the purge that
 * enforces it (src/jobs/retention.ts).
 */

const DAY_MS = 86_400_000;

/** `GET .../retention`, the console's audit page: deleted organizations too; 404 for none. */
export async function getRetention(db: Queryable, orgId: string): Promise<Retention> {
  const r = await selectRetention(db, orgId);
  if (!r) throw new ApiError('not_found', `no organization ${JSON.stringify(orgId)}`);
  return r;
}

const checkDays = (value: unknown, name: keyof typeof RETENTION_BOUNDS, what: string): number => {
  const b = RETENTION_BOUNDS[name];
  if (typeof value !== 'number' || !Number.isInteger(value) || value < b.min || value > b.max) {
    throw invalid(`${what} must be a whole number of days from ${b.min} to ${b.max}.`);
  }
  return value;
};

/**
 * `PATCH .../retention`, the console (owners) and `climate-pulse audit retention`: a field not
 * given keeps its value. The audit row names the new values. Shortening takes effect at the job's
 * next run: older rows are deleted then, in batches, and cannot be brought back.
 */
export async function updateRetention(
  db: DatabaseExecutor,
  orgId: string,
  input: { auditDays?: unknown; deliveryDays?: unknown },
  actor: Actor,
  now: Date,
): Promise<Retention> {
  const auditDays = input.auditDays === undefined ? undefined : checkDays(input.auditDays, 'auditDays', 'The audit log retention');
  const deliveryDays = input.deliveryDays === undefined ? undefined : checkDays(input.deliveryDays, 'deliveryDays', 'The delivery log retention');
  return db.transaction(async (tx) => {
    const before = await selectRetention(tx, orgId);
    const next = { auditDays: auditDays ?? before?.auditDays ?? 0, deliveryDays: deliveryDays ?? before?.deliveryDays ?? 0 };
    if (!before || !(await updateRetentionRow(tx, orgId, next))) {
      throw new ApiError('not_found', `no organization ${JSON.stringify(orgId)} (or it is deleted)`);
    }
    await recordAudit(
      tx,
      orgId,
      actor,
      { action: 'retention.updated', target: { kind: 'organization', id: orgId }, details: { auditDays: next.auditDays, deliveryDays: next.deliveryDays } },
      now,
    );
    return next;
  });
}

/** Rows one statement deletes, and statements per table and organization in one run. */
export const PURGE_BATCH = 1_000;
export const PURGE_MAX_BATCHES = 20;

export interface PurgeReport {
  organizations: number;
  auditEvents: number;
  deliveries: number;
  webhookEvents: number;
  /** Organizations where a table still had expired rows when the run's batches were spent (the next run goes on). */
  unfinished: number;
}

/**
 * Deletes what every organization's retention no longer keeps: audit entries older than its
 * audit days; finished deliveries older than its delivery days, then the events older than that
 * which no delivery refers to any more. Each statement deletes at most `batch` rows in its own
 * transaction, at most `maxBatches` per table and organization, so a run never holds a lock long
 * and a large backlog is worked off over several runs. Deleted organizations keep their logs
 * under the same retention. Returns counts only.
 */
export async function purgeExpiredRecords(db: Queryable, now: Date, opts: { batch?: number; maxBatches?: number } = {}): Promise<PurgeReport> {
  const batch = opts.batch ?? PURGE_BATCH;
  const maxBatches = opts.maxBatches ?? PURGE_MAX_BATCHES;
  const report: PurgeReport = { organizations: 0, auditEvents: 0, deliveries: 0, webhookEvents: 0, unfinished: 0 };
  const drain = async (step: (limit: number) => Promise<number>): Promise<{ n: number; done: boolean }> => {
    let n = 0;
    for (let i = 0; i < maxBatches; i++) {
      const deleted = await step(batch);
      n += deleted;
      if (deleted < batch) return { n, done: true };
    }
    return { n, done: false };
  };
  let after = '';
  for (;;) {
    const page = await listRetentionPage(db, after, 100);
    for (const org of page) {
      report.organizations++;
      const auditBefore = new Date(now.getTime() - org.auditDays * DAY_MS);
      const deliveryBefore = new Date(now.getTime() - org.deliveryDays * DAY_MS);
      const a = await drain((limit) => deleteExpiredAuditEvents(db, org.orgId, auditBefore, limit));
      const d = await drain((limit) => deleteExpiredDeliveries(db, org.orgId, deliveryBefore, limit));
      const e = await drain((limit) => deleteExpiredWebhookEvents(db, org.orgId, deliveryBefore, limit));
      report.auditEvents += a.n;
      report.deliveries += d.n;
      report.webhookEvents += e.n;
      if (!a.done || !d.done || !e.done) report.unfinished++;
    }
    if (page.length < 100) return report;
    after = page[page.length - 1].orgId;
  }
}
