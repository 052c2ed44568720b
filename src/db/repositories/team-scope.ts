import { sql, type Queryable } from '../executor.js';
import { iso, isoOrNull } from './time.js';
import type { AlertRow } from './alerts.js';
import type { ActionRow, ActionStatus } from './actions.js';

/**
 * The reads of a manager's pages: alerts and actions of some teams only (a manager's). The same
 * rows and order as the organization's lists (alerts.ts, actions.ts), filtered by team in SQL, so
 * a page of the newest is the newest of those teams.
 */

const alertsQuery = (unread: boolean) =>
  sql(
    `team_scope.alerts${unread ? '_unread' : ''}`,
    `SELECT a.id, a.type, a.message, a.week_iso, t.name AS subteam_name, a.read_at, a.created_at
       FROM alerts a
       JOIN teams t ON t.org_id = a.org_id AND t.id = a.subteam_id
      WHERE a.org_id = $1 AND a.subteam_id = ANY ($2::text[])${unread ? ' AND a.read_at IS NULL' : ''}
      ORDER BY a.created_at DESC, a.id DESC
      LIMIT $3`,
  );
const alerts = { all: alertsQuery(false), unread: alertsQuery(true) };

export async function teamAlerts(db: Queryable, orgId: string, teamIds: readonly string[], limit: number, only?: 'unread'): Promise<AlertRow[]> {
  if (teamIds.length === 0) return [];
  const rows = await db.query<{
    id: string;
    type: string;
    message: string;
    week_iso: string | null;
    subteam_name: string | null;
    read_at: Date | null;
    created_at: Date;
  }>(only === 'unread' ? alerts.unread : alerts.all, [orgId, [...teamIds], limit]);
  return rows.map((r) => ({
    id: r.id,
    type: r.type,
    message: r.message,
    weekISO: r.week_iso,
    subteamName: r.subteam_name,
    readAt: isoOrNull(r.read_at),
    createdAt: iso(r.created_at),
  }));
}

const actionsQuery = (open: boolean) =>
  sql(
    `team_scope.actions${open ? '_open' : ''}`,
    `SELECT a.id, a.title, a.description, a.start_date, a.end_date, a.status, a.subteam_id,
            t.name AS subteam_name, a.created_at
       FROM actions a
       JOIN teams t ON t.org_id = a.org_id AND t.id = a.subteam_id
      WHERE a.org_id = $1 AND a.subteam_id = ANY ($2::text[])${open ? ` AND a.status = 'active'` : ''}
      ORDER BY a.created_at DESC, a.id DESC
      LIMIT $3`,
  );
const actions = { all: actionsQuery(false), open: actionsQuery(true) };

/** The newest `limit` actions of the teams (or their open ones), and whether there are more. */
export async function teamActions(
  db: Queryable,
  orgId: string,
  teamIds: readonly string[],
  limit: number,
  only?: 'open',
): Promise<{ rows: ActionRow[]; more: boolean }> {
  if (teamIds.length === 0) return { rows: [], more: false };
  const rows = await db.query<{
    id: string;
    title: string;
    description: string | null;
    start_date: Date;
    end_date: Date | null;
    status: ActionStatus;
    subteam_id: string | null;
    subteam_name: string | null;
    created_at: Date;
  }>(only === 'open' ? actions.open : actions.all, [orgId, [...teamIds], limit + 1]);
  return {
    rows: rows.slice(0, limit).map((r) => ({
      id: r.id,
      title: r.title,
      description: r.description,
      startDate: iso(r.start_date),
      endDate: isoOrNull(r.end_date),
      status: r.status,
      subteamId: r.subteam_id,
      subteamName: r.subteam_name,
      createdAt: iso(r.created_at),
    })),
    more: rows.length > limit,
  };
}
