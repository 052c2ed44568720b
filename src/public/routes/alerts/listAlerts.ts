import { listRecentAlerts } from '../../../domain/alerts.js';
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
        description:
          'Alerts raised by the alert engine over closed ISO weeks (Monday 00:00 UTC to the next Monday), per team, ' +
          'for pulses without a team and for the whole organization, plus any loaded from a dataset file. ' +
          'Types (thresholds are the defaults; a group-week of fewer than 5 pulses raises nothing and does not count in a baseline; ' +
          'the baseline is the previous 4 weeks that have 5 pulses or more, at least 2 of them): ' +
          '`MOOD_DROP`: the week average is at least 0.50 below the baseline average. ' +
          '`LOW_MOOD`: the week average is at or below 2.50. ' +
          '`PARTICIPATION_DROP`: the week has at most half the baseline weekly pulse count. ' +
          'Each is raised at most once per organization, group, week and type. `subteamName` is the team of a team alert and null ' +
          'for the other groups (the message names the group). See docs/alerts.md.',
        tags: ['alerts'],
        querystring: AlertListQuerySchema,
        response: responses(AlertListSchema, 'Alerts, newest first.'),
      },
    },
    async (request) => ({ items: await listRecentAlerts(db, request.principal.orgId, request.query.limit) }),
  );
}
