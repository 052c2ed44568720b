import { recentAlerts } from '../../../db/repositories/alerts.js';
import { AlertListQuerySchema, AlertListSchema } from '../../../contract/schemas/alerts.js';
import { responses } from '../../../contract/schemas/responses.js';
import type { App, RouteDeps } from '../types.js';

export function registerListAlerts(app: App, { db }: RouteDeps) {
  app.get(
    '/alerts',
    {
      schema: {
        operationId: 'listAlerts',
        summary: 'Most recent alerts',
        tags: ['alerts'],
        querystring: AlertListQuerySchema,
        response: responses(AlertListSchema, 'Alerts, newest first.'),
      },
    },
    async (request) => ({ items: await recentAlerts(db, request.principal.orgId, request.query.limit ?? 10) }),
  );
}
