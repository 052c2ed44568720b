import { Readable } from 'node:stream';
import { Type } from 'typebox';
import { checkExportRange, exportAuditLog, operatorActor } from '../../domain/audit.js';
import { listOrgAuditEvents } from '../../domain/orgs.js';
import { getRetention, updateRetention } from '../../domain/retention.js';
import { requireJsonObject } from '../../http/plugins/index.js';
import { AdminNoQuerySchema, OrgIdParamsSchema, adminResponses } from '../../contract/schemas/admin-common.js';
import { AuditEventListSchema, AuditExportQuerySchema, AuditQuerySchema, RetentionPatchSchema, RetentionSchema } from '../../contract/schemas/admin-audit.js';
import type { AdminRouteDeps, App } from './types.js';

/** The media type of each export format. */
export const EXPORT_TYPES = { jsonl: 'application/x-ndjson', csv: 'text/csv; charset=utf-8' } as const;

export function registerAuditRoutes(app: App, { db, now }: AdminRouteDeps) {
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

  app.get(
    '/organizations/:orgId/audit-events/export',
    {
      schema: {
        operationId: 'exportAuditEvents',
        summary: "The organization's audit log over a range, as JSON lines or CSV",
        description:
          'Every event from `from` (inclusive) to `to` (exclusive), oldest first, streamed as it is read (a large log is never held at once): as JSON lines (application/x-ndjson), one event per line in the shape of an item of listAuditEvents, or as CSV (text/csv) with a header row. The export is itself recorded in the log (`audit_log.exported`, with its format and range). A deleted organization keeps its log; an erased one has none (404).',
        tags: ['audit'],
        querystring: AuditExportQuerySchema,
        params: OrgIdParamsSchema,
        response: adminResponses(Type.String({ description: 'JSON lines, or CSV.' }), 'The events of the range, oldest first.', {
          mediaType: ['application/x-ndjson', 'text/csv'],
          badRequest: "invalid_request: format is not jsonl or csv, a date-time is not RFC 3339, or 'from' is not before 'to'.",
        }),
      },
    },
    async (request, reply) => {
      const at = now();
      const range = checkExportRange(request.query, at);
      const { format } = request.query;
      const lines = await exportAuditLog(db, request.params.orgId, { format, range, viewer: false }, operatorActor(request.ip), at);
      reply.header('content-type', EXPORT_TYPES[format]);
      reply.header('content-disposition', `attachment; filename="audit-log.${format}"`);
      return reply.send(Readable.from(lines));
    },
  );

  app.get(
    '/organizations/:orgId/retention',
    {
      schema: {
        operationId: 'getRetention',
        summary: 'How long the organization keeps its audit log and its webhook delivery log',
        description: 'In days. The retention job deletes older rows every hour, in bounded batches. Deleted organizations too.',
        tags: ['audit'],
        querystring: AdminNoQuerySchema,
        params: OrgIdParamsSchema,
        response: adminResponses(RetentionSchema, 'The retention, in days.'),
      },
    },
    async (request) => getRetention(db, request.params.orgId),
  );

  app.patch(
    '/organizations/:orgId/retention',
    {
      preValidation: requireJsonObject,
      schema: {
        operationId: 'updateRetention',
        summary: 'Change how long the organization keeps its audit log and its webhook delivery log',
        description:
          'A field not given keeps its value. Rows older than a shortened retention are deleted at the job’s next run and cannot be brought back. Recorded in the audit log (`retention.updated`).',
        tags: ['audit'],
        querystring: AdminNoQuerySchema,
        params: OrgIdParamsSchema,
        body: RetentionPatchSchema,
        response: adminResponses(RetentionSchema, 'The retention as changed.'),
      },
    },
    async (request) => updateRetention(db, request.params.orgId, request.body, operatorActor(request.ip), now()),
  );
}
