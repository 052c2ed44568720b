import { registerCreateAction } from './actions/createAction.js';
import { registerListActions } from './actions/listActions.js';
import { registerUpdateAction } from './actions/updateAction.js';
import { registerListAlerts } from './alerts/listAlerts.js';
import { registerListComments } from './comments/listComments.js';
import { registerGetOrg } from './org/getOrg.js';
import { registerListPulses } from './pulses/listPulses.js';
import { registerGetDailyStats } from './stats/getDailyStats.js';
import { registerGetStats } from './stats/getStats.js';
import { registerCreateTeam } from './teams/createTeam.js';
import { registerListTeams } from './teams/listTeams.js';
import type { App, RouteDeps } from './types.js';

/** Every operation of the versioned API; registered once under /v1 and once under /api/v1. */
export function registerApiRoutes(app: App, deps: RouteDeps) {
  registerListPulses(app, deps);
  registerGetStats(app, deps);
  registerGetDailyStats(app, deps);
  registerListComments(app, deps);
  registerListAlerts(app, deps);
  registerGetOrg(app, deps);
  registerListActions(app, deps);
  registerListTeams(app, deps);
  registerCreateTeam(app, deps);
  registerCreateAction(app, deps);
  registerUpdateAction(app, deps);
}
