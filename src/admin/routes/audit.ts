import { listOrgAuditEvents } from '../../domain/orgs.js';
import { OrgIdParamsSchema, adminResponses } from '../../contract/schemas/admin-common.js';
import { AuditEventListSchema, AuditQuerySchema } from '../../contract/schemas/admin-audit.js';
import type { AdminRouteDeps, App } from './types.js';

export function registerAuditRoutes(app: App, { db }: AdminRouteDeps) {
  app.get(
    '/organizations/:orgId/audit-events',
    {
      schema: {
        operationId: 'listAuditEvents',
        summary: "The organization's audit log, newest first",
        description:
          'Every change made to the organization, by a console member, the operator (this API and the CLI) or an API key, written in the transaction of the change: what, on what, when, by whom and from which address. Never a secret, key, hash, password, token or comment text. A deleted organization keeps its log; an erased one has none (404).',
        tags: ['audit'],
        querystring: AuditQuerySchema,
        params: OrgIdParamsSchema,
        response: adminResponses(AuditEventListSchema, 'One page of events, newest first.', {
          badRequest:
            "invalid_request: a query parameter breaks a rule (limit is 1-100); invalid_cursor: 'cursor' is not the nextCursor of a page of this log.",
        }),
      },
    },
    async (request) => {
      return listOrgAuditEvents(db, request.params.orgId, request.query);
    },
  );
}
