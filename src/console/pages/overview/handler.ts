import type { FastifyInstance } from 'fastify';
import type { DatabaseExecutor } from '../../../domain/database.js';
import { listUnreadAlerts } from '../../../domain/alerts.js';
import { listRecentActionItems } from '../../../domain/actions.js';
import { overviewStats } from '../../../domain/stats.js';
import { overviewInsight } from '../../../domain/insight.js';
import { speakerOf } from '../../views/speaker.js';
import type { ConsoleDeps } from '../../plugins/index.js';
import { sendPage } from '../../views/layout.js';
import { overviewRangeOf } from './form.js';
import { overviewView } from './view.js';

/** The newest unread alerts the overview reads (a team's week of three is one line). */
const UNREAD_ALERTS = 9;

/** The overview (CONTRACT.md section 11): mood per day for the organization and each team, unread alerts, open actions. */
export function registerOverviewPage(scope: FastifyInstance, deps: ConsoleDeps & { db: DatabaseExecutor }) {
  const { db, now } = deps;
  scope.get('/overview', async (request, reply) => {
    const s = request.member;
    const at = now();
    const [stats, unread, open, speaker] = await Promise.all([
      overviewStats(db, s.orgId, overviewRangeOf(request), at),
      listUnreadAlerts(db, s.orgId, UNREAD_ALERTS),
      listRecentActionItems(db, s.orgId, 10, 'open'),
      speakerOf(db, request),
    ]);
    const insight = await overviewInsight(db, s.orgId, { fromDate: stats.fromDate, toDate: stats.toDate }, at);
    return sendPage(reply, 200, overviewView({ session: s, at, stats, insight, unread, open: open.items, moreOpen: open.more, speaker }));
  });
}
