import { getOrg } from '../../../db/repositories/orgs.js';
import { ApiError } from '../../../contract/errors.js';
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
    async (request) => {
      const org = await getOrg(db, request.principal.orgId);
      // Deleted between the key check and this read.
      if (!org) throw new ApiError('org_not_found', 'The organization of this API key no longer exists.');
      return org;
    },
  );
}
