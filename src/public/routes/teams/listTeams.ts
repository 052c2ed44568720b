import { listOrgTeams } from '../../../domain/teams.js';
import { NoQuerySchema } from '../../../contract/schemas/common.js';
import { responses } from '../../../contract/schemas/responses.js';
import { TeamListSchema } from '../../../contract/schemas/teams.js';
import type { App, RouteDeps } from '../types.js';

export function registerListTeams(app: App, { db }: RouteDeps) {
  app.get(
    '/teams',
    {
      schema: {
        operationId: 'listTeams',
        summary: 'All teams, by name',
        tags: ['teams'],
        querystring: NoQuerySchema,
        response: responses(TeamListSchema, 'Every team of the organization, ordered by name (case-insensitive), then id.'),
      },
    },
    async (request) => ({ items: await listOrgTeams(db, request.principal.orgId) }),
  );
}
