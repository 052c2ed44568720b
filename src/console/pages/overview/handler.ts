import type { FastifyInstance } from 'fastify';
import type { DatabaseExecutor } from '../../../domain/database.js';
import { ApiError } from '../../../contract/errors.js';
import { OVERVIEW_MAX_DAYS, overviewReads, overviewStats } from '../../../domain/stats.js';
import { DAY_MS, startOfUtcDay, ymd } from '../../../domain/time.js';
import { overviewInsight } from '../../../domain/insight.js';
import { actionsInScope, alertsInScope, teamInScope } from '../../../domain/team-scope.js';
import { speakerOf } from '../../views/speaker.js';
import type { Speaker } from '../../words.js';
import { EVERY_MEMBER, refusedRole, type ConsoleDeps } from '../../plugins/index.js';
import { sendPage } from '../../views/layout.js';
import { overviewRangeOf } from './form.js';
import { overviewView } from './view.js';

/** The newest unread alerts the overview reads (a team's week of three is one line). */
const UNREAD_ALERTS = 9;

/**
 * The range form's refusal in the reader's words, chosen by what the domain refused (its message
 * names the field); a refusal this page does not expect keeps the domain's English message.
 */
function rangeRefusal(err: unknown, sp: Speaker, at: Date): unknown {
  if (!(err instanceof ApiError) || err.code !== 'invalid_request') return err;
  const say = (text: string) => new ApiError(err.code, text, err.headers);
  const m = err.message;
  const field = /^'(from|to)' must be a calendar date/.exec(m)?.[1];
  if (field) return say(sp.t('console.overview.refusedDate', { field }));
  if (m.startsWith("'from' must not be after 'to'")) return say(sp.t('console.overview.refusedOrder'));
  if (m.startsWith('The overview covers at most')) {
    const first = ymd(new Date(startOfUtcDay(at).getTime() - (OVERVIEW_MAX_DAYS - 1) * DAY_MS));
    return say(sp.t('console.overview.refusedRange', { days: OVERVIEW_MAX_DAYS, day: sp.day(first) }));
  }
  if (m.startsWith("'team' names no team")) return say(sp.t('console.overview.refusedTeam'));
  return err;
}

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
    const [speaker, reads] = await Promise.all([speakerOf(db, request), overviewReads(db, s.orgId)]);
    const [stats, unread, open] = await Promise.all([
      overviewStats(db, s.orgId, range, at, reads).catch((err: unknown) => {
        throw rangeRefusal(err, speaker, at);
      }),
      alertsInScope(db, s.orgId, teams, UNREAD_ALERTS, 'unread'),
      actionsInScope(db, s.orgId, teams, 10, 'open'),
    ]);
    const insight = await overviewInsight(db, s.orgId, { fromDate: stats.fromDate, toDate: stats.toDate }, at, teams, reads);
    const shown =
      teams === null ? stats : { ...stats, organization: { ...stats.organization, days: [] }, teams: stats.teams.filter((t) => teams.includes(t.id)) };
    return sendPage(reply, 200, overviewView({ session: s, at, stats: shown, insight, unread, open: open.items, moreOpen: open.more, speaker }));
  });
}
