import type { DatabaseExecutor, Queryable } from '../db/executor.js';
import { markAlertRead, recentAlerts } from '../db/repositories/alerts.js';
import { ApiError } from '../contract/errors.js';
import type { Alert } from '../contract/schemas/alerts.js';
import { recordAudit, type Actor } from './audit.js';
import { requireLiveOrg } from './orgs.js';

/**
 * The read marker of an alert (`PATCH .../alerts/{id}` and `alerts mark-read`): read sets
 * `readAt` to now the first time and keeps it after; unread clears it. Returns the alert as
 * GET /alerts shows it.
 */
export async function updateAlertRead(db: DatabaseExecutor, orgId: string, alertId: string, read: boolean, actor: Actor, now: Date): Promise<Alert> {
  return db.transaction(async (tx) => {
    await requireLiveOrg(tx, orgId);
    const alert = await markAlertRead(tx, orgId, alertId, read, now);
    if (!alert) throw new ApiError('not_found', `no alert ${JSON.stringify(alertId)} in ${orgId}`);
    await recordAudit(tx, orgId, actor, { action: read ? 'alert.read' : 'alert.unread', target: { kind: 'alert', id: alert.id } }, now);
    return alert;
  });
}

/** GET /alerts without `limit` answers this many. */
export const DEFAULT_ALERT_LIMIT = 10;

/** GET /alerts: the organization's most recent alerts, newest first. */
export async function listRecentAlerts(db: Queryable, orgId: string, limit = DEFAULT_ALERT_LIMIT): Promise<Alert[]> {
  return recentAlerts(db, orgId, limit);
}

/** The console's overview: the most recent alerts nobody has marked read, newest first. */
export async function listUnreadAlerts(db: Queryable, orgId: string, limit: number): Promise<Alert[]> {
  return recentAlerts(db, orgId, limit, 'unread');
}
