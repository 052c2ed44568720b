import { setAlertRead } from '../../domain/alert-reads.js';
import { requireJsonObject } from '../../http/plugins/writes.js';
import { AdminNoQuerySchema, OrgItemParamsSchema, adminResponses } from '../../contract/schemas/admin-common.js';
import { MarkReadBodySchema } from '../../contract/schemas/admin-alerts.js';
import { AlertSchema } from '../../contract/schemas/alerts.js';
import type { AdminRouteDeps, App } from './types.js';

export function registerAlertRoutes(app: App, { db, now }: AdminRouteDeps) {
  app.patch(
    '/organizations/:orgId/alerts/:alertId',
    {
      preValidation: requireJsonObject,
      schema: {
        operationId: 'markAlertRead',
        summary: 'Set or clear the read marker of an alert',
        tags: ['alerts'],
        querystring: AdminNoQuerySchema,
        params: OrgItemParamsSchema('alertId', 'Alert id.'),
        body: MarkReadBodySchema,
        response: adminResponses(AlertSchema, 'The alert as GET /v1/alerts shows it.'),
      },
    },
    async (request) => setAlertRead(db, request.params.orgId, request.params.alertId, request.body.read, now()),
  );
}
