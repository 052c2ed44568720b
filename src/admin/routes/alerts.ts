import { updateAlertRead } from '../../domain/alerts.js';
import { operatorActor } from '../../domain/audit.js';
import { requireJsonObject } from '../../http/plugins/index.js';
import { AdminNoQuerySchema, OrgItemParamsSchema, adminResponses } from '../../contract/schemas/admin-common.js';
import { AlertRunSchema, MarkReadBodySchema, RunAlertsBodySchema } from '../../contract/schemas/admin-alerts.js';
import { runAlertEngine, thresholdsFrom } from '../../domain/alert-engine.js';
import { parseIsoWeek } from '../../domain/time.js';
import { invalid } from '../../contract/errors.js';
import { AdminNoQuerySchema as NoQuery } from '../../contract/schemas/admin-common.js';
import { AlertSchema } from '../../contract/schemas/alerts.js';
import type { AdminRouteDeps, App } from './types.js';

export function registerAlertRoutes(app: App, { db, now, config }: AdminRouteDeps) {
  app.post(
    '/alerts/run',
    {
      preValidation: requireJsonObject,
      schema: {
        operationId: 'runAlerts',
        summary: 'Run the alert engine over ISO weeks (`climate-pulse alerts run`)',
        description: 'Each alert is raised at most once per organization, group, week and type, however often this runs.',
        tags: ['alerts'],
        querystring: NoQuery,
        body: RunAlertsBodySchema,
        response: adminResponses(AlertRunSchema, 'What the run raised.'),
      },
    },
    async (request) => {
      const weeks = request.body.weeks.map((label, i) => {
        const monday = parseIsoWeek(label);
        if (!monday) throw invalid(`Body field 'weeks[${i}]' is not an ISO week: ${JSON.stringify(label)}.`);
        return monday;
      });
      return runAlertEngine(db, {
        thresholds: thresholdsFrom(config),
        weeks,
        orgIds: request.body.orgId !== undefined ? [request.body.orgId] : undefined,
        clock: now,
      });
    },
  );

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
    async (request) => updateAlertRead(db, request.params.orgId, request.params.alertId, request.body.read, operatorActor(request.ip), now()),
  );
}
