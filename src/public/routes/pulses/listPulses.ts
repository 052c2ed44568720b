import { listPulsePage } from '../../../domain/pulses.js';
import { PulseListQuerySchema, PulseListSchema } from '../../../contract/schemas/pulses.js';
import { responses } from '../../../contract/schemas/responses.js';
import type { App, RouteDeps } from '../types.js';

export function registerListPulses(app: App, { db, now, teamNames }: RouteDeps) {
  app.get(
    '/pulses',
    {
      schema: {
        operationId: 'listPulses',
        summary: 'Pulses, newest first, one page at a time',
        description:
          'Ordered by (createdAt, id) descending. Range [from, to) defaults to the last 30 days. Repeat the same filters with `cursor` to walk the pages.',
        tags: ['pulses'],
        querystring: PulseListQuerySchema,
        response: responses(PulseListSchema, 'A page of pulses.'),
      },
    },
    async (request) => listPulsePage(db, request.principal.orgId, request.query, now(), teamNames),
  );
}
