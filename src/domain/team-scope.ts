import type { Queryable } from '../db/executor.js';
import { teamActions, teamAlerts } from '../db/repositories/team-scope.js';
import type { Action } from '../contract/schemas/actions.js';
import type { Alert } from '../contract/schemas/alerts.js';
import { listRecentActionItems, toActionItem } from './actions.js';
import { listRecentAlerts, listUnreadAlerts } from './alerts.js';

/**
 * What a member reads of alerts and actions, by the teams they read (CONTRACT.md section 11
 * amended, *Managers*): `teams` null is the whole organization (owners, admins, viewers), as
 * GET /v1/alerts and GET /v1/actions answer it; a manager's teams give those teams' only. An alert
 * or action of no team is the organization's, so a manager reads none of them.
 */
export type TeamScope = readonly string[] | null;

export async function alertsInScope(db: Queryable, orgId: string, teams: TeamScope, limit: number, only?: 'unread'): Promise<Alert[]> {
  if (teams === null) return only === 'unread' ? listUnreadAlerts(db, orgId, limit) : listRecentAlerts(db, orgId, limit);
  return teamAlerts(db, orgId, teams, limit, only);
}

export async function actionsInScope(
  db: Queryable,
  orgId: string,
  teams: TeamScope,
  limit: number,
  only?: 'open',
): Promise<{ items: Action[]; more: boolean }> {
  if (teams === null) return listRecentActionItems(db, orgId, limit, only);
  const { rows, more } = await teamActions(db, orgId, teams, limit, only);
  return { items: rows.map(toActionItem), more };
}

/** Whether a team is one the scope reads (every team for the whole organization). */
export const teamInScope = (teams: TeamScope, teamId: string) => teams === null || teams.includes(teamId);
