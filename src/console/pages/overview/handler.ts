import type { FastifyInstance } from 'fastify';
import type { DatabaseExecutor } from '../../../domain/database.js';
import { overviewStats } from '../../../domain/stats.js';
import { overviewInsight } from '../../../domain/insight.js';
import { actionsInScope, alertsInScope, teamInScope } from '../../../domain/team-scope.js';
import { speakerOf } from '../../views/speaker.js';
import { EVERY_MEMBER, refusedRole, type ConsoleDeps } from '../../plugins/index.js';
import { sendPage } from '../../views/layout.js';
import { overviewRangeOf } from './form.js';
import { overviewView } from './view.js';

/** The newest unread alerts the overview reads (a team's week of three is one line). */
const UNREAD_ALERTS = 9;

/**
 * The overview (CONTRACT.md section 11): mood per day for the organization and each team, unread
 * alerts, open actions. A manager's shows their teams only, and no figure of the organization as a
 * whole (domain/insight.ts says why); another team's chart is refused as a page they may not see.
 */
export function registerOverviewPage(scope: FastifyInstance, deps: ConsoleDeps & { db: DatabaseExecutor }) {
  const { db, now } = deps;
  scope.get('/overview', { config: { roles: EVERY_MEMBER } }, async (request, reply) => {
    const s = request.member;
    const teams = request.managedTeams;
    const at = now();
    const range = overviewRangeOf(request);
    if (teams !== null && range.team && !teamInScope(teams, range.team)) return refusedRole(reply, s.member.role);
    // A manager of one team reads its daily chart without choosing it.
    if (teams !== null && !range.team && teams.length === 1) range.team = teams[0];
    const [stats, unread, open, speaker] = await Promise.all([
      overviewStats(db, s.orgId, range, at),
      alertsInScope(db, s.orgId, teams, UNREAD_ALERTS, 'unread'),
      actionsInScope(db, s.orgId, teams, 10, 'open'),
      speakerOf(db, request),
    ]);
    const insight = await overviewInsight(db, s.orgId, { fromDate: stats.fromDate, toDate: stats.toDate }, at, teams);
    const shown =
      teams === null ? stats : { ...stats, organization: { ...stats.organization, days: [] }, teams: stats.teams.filter((t) => teams.includes(t.id)) };
    return sendPage(reply, 200, overviewView({ session: s, at, stats: shown, insight, unread, open: open.items, moreOpen: open.more, speaker }));
  });
}
