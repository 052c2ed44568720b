import type { FastifyInstance } from 'fastify';
import type { DatabaseExecutor } from '../../../domain/database.js';
import { listUnreadAlerts } from '../../../domain/alerts.js';
import { listRecentActionItems } from '../../../domain/actions.js';
import { overviewStats } from '../../../domain/stats.js';
import type { ConsoleDeps } from '../../plugins/index.js';
import { sendPage } from '../../views/layout.js';
import { overviewRangeOf } from './form.js';
import { overviewView } from './view.js';

/** The overview (CONTRACT.md section 11): mood per day for the organization and each team, unread alerts, open actions. */
export function registerOverviewPage(scope: FastifyInstance, deps: ConsoleDeps & { db: DatabaseExecutor }) {
  const { db, now } = deps;
  scope.get('/overview', async (request, reply) => {
    const s = request.member;
    const at = now();
    const [stats, unread, open] = await Promise.all([
      overviewStats(db, s.orgId, overviewRangeOf(request), at),
      listUnreadAlerts(db, s.orgId, 5),
      listRecentActionItems(db, s.orgId, 10, 'open'),
    ]);
    return sendPage(reply, 200, overviewView({ session: s, at, stats, unread, open: open.items, moreOpen: open.more }));
  });
}
