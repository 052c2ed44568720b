import { getOrganization } from '../../../domain/orgs.js';
import { OrgSchema } from '../../../contract/schemas/org.js';
import { NoQuerySchema } from '../../../contract/schemas/common.js';
import { responses } from '../../../contract/schemas/responses.js';
import type { App, RouteDeps } from '../types.js';

export function registerGetOrg(app: App, { db }: RouteDeps) {
  app.get(
    '/org',
    {
      schema: {
        operationId: 'getOrg',
        summary: 'The organization of the API key',
        tags: ['organization'],
        querystring: NoQuerySchema,
        response: responses(OrgSchema, 'The organization record.'),
      },
    },
    async (request) => getOrganization(db, request.principal.orgId),
  );
}
