import { overallStats } from '../../../domain/stats.js';
import { NoQuerySchema } from '../../../contract/schemas/common.js';
import { responses } from '../../../contract/schemas/responses.js';
import { StatsSchema } from '../../../contract/schemas/stats.js';
import type { App, RouteDeps } from '../types.js';

export function registerGetStats(app: App, { db, now }: RouteDeps) {
  app.get(
    '/stats',
    {
      schema: {
        operationId: 'getStats',
        summary: 'Overall and rolling 7-day statistics',
        description: 'All pulses of the organization, and the rolling window [now - 7 days, now). Every moderation status counts.',
        tags: ['statistics'],
        querystring: NoQuerySchema,
        response: responses(StatsSchema, 'The overall statistics.'),
      },
    },
    async (request) => overallStats(db, request.principal.orgId, now()),
  );
}
