import type { Queryable } from '../db/executor.js';
import { markAlertRead, recentAlerts } from '../db/repositories/alerts.js';
import { ApiError } from '../contract/errors.js';
import type { Alert } from '../contract/schemas/alerts.js';
import { requireLiveOrg } from './orgs.js';

/**
 * The read marker of an alert (`PATCH .../alerts/{id}` and `alerts mark-read`): read sets
 * `readAt` to now the first time and keeps it after; unread clears it. Returns the alert as
 * GET /alerts shows it.
 */
export async function setAlertRead(db: Queryable, orgId: string, alertId: string, read: boolean, now: Date): Promise<Alert> {
  await requireLiveOrg(db, orgId);
  const alert = await markAlertRead(db, orgId, alertId, read, now);
  if (!alert) throw new ApiError('not_found', `no alert ${JSON.stringify(alertId)} in ${orgId}`);
  return alert;
}

/** GET /alerts without `limit` answers this many. */
export const DEFAULT_ALERT_LIMIT = 10;

/** GET /alerts: the organization's most recent alerts, newest first. */
export async function listRecentAlerts(db: Queryable, orgId: string, limit = DEFAULT_ALERT_LIMIT): Promise<Alert[]> {
  return recentAlerts(db, orgId, limit);
}
