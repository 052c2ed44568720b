import { dailyStats } from '../../../domain/stats.js';
import { responses } from '../../../contract/schemas/responses.js';
import { DailyStatsQuerySchema, DailyStatsSchema } from '../../../contract/schemas/stats.js';
import type { App, RouteDeps } from '../types.js';

export function registerGetDailyStats(app: App, { db, now }: RouteDeps) {
  app.get(
    '/stats/daily',
    {
      schema: {
        operationId: 'getDailyStats',
        summary: 'Pulse count and average level per UTC day',
        description: 'Range [from, to) defaults to the last 90 days; `from` may reach at most 365 days back. Days without pulses are omitted.',
        tags: ['statistics'],
        querystring: DailyStatsQuerySchema,
        response: responses(DailyStatsSchema, 'Per-day aggregates, ascending by date.'),
      },
    },
    async (request) => dailyStats(db, request.principal.orgId, request.query, now()),
  );
}
