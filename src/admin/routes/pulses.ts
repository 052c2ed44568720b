import { createWriteStream } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { ingestPulses } from '../../domain/ingest.js';
import { ImportAborted, importPulses, type ImportSummary } from '../../domain/import.js';
import { requireLiveOrg } from '../../domain/keys.js';
import { moderatePulse } from '../../domain/moderation.js';
import { toApiError } from '../../http/plugins/errors.js';
import { requireJsonObject } from '../../http/plugins/writes.js';
import { ApiError } from '../../contract/errors.js';
import { uniqueViolation } from '../../db/errors.js';
import { AdminNoQuerySchema, OrgIdParamsSchema, OrgItemParamsSchema, adminResponses } from '../../contract/schemas/admin-common.js';
import {
  ImportQuerySchema,
  IngestBodySchema,
  IngestResultSchema,
  ModerateBodySchema,
  ModerationResultSchema,
} from '../../contract/schemas/admin-pulses.js';
import { Type } from 'typebox';
import type { AdminRouteDeps, App } from './types.js';

/** 1,000 pulses with comments of up to 10,000 characters. */
const INGEST_BODY_LIMIT = 16 * 1024 * 1024;

export function registerPulseRoutes(app: App, { db }: AdminRouteDeps) {
  app.post(
    '/organizations/:orgId/pulses',
    {
      bodyLimit: INGEST_BODY_LIMIT,
      preValidation: requireJsonObject,
      schema: {
        operationId: 'ingestPulses',
        summary: 'Ingest 1-1000 pulses in one transaction',
        description:
          "Idempotent by pulse id: a pulse whose id exists with the same fields is left as it is (counted in unchanged; its moderation status is the moderation's and is not compared); with other fields the batch is 409 pulse_conflict naming it. A batch that breaks a rule writes nothing and names the first bad value (pulses[3].level). Written through the same path as import-pulses: rollups, frozen weeks, alerts and webhooks see these pulses as imported ones.",
        tags: ['pulses'],
        querystring: AdminNoQuerySchema,
        params: OrgIdParamsSchema,
        body: IngestBodySchema,
        response: adminResponses(IngestResultSchema, 'What the batch did.', {
          conflict: 'pulse_conflict: a pulse of the batch has the id of an existing pulse with other fields; nothing was written.',
        }),
      },
    },
    async (request) => ingestPulses(db, request.params.orgId, request.body.pulses),
  );

  app.patch(
    '/organizations/:orgId/pulses/:pulseId',
    {
      preValidation: requireJsonObject,
      schema: {
        operationId: 'moderatePulse',
        summary: 'Set the moderation status of a pulse',
        description: 'Under the rule of CONTRACT.md section 5 (moderation after release).',
        tags: ['pulses'],
        querystring: AdminNoQuerySchema,
        params: OrgItemParamsSchema('pulseId', 'Pulse id.'),
        body: ModerateBodySchema,
        response: adminResponses(ModerationResultSchema, 'The status before and after.'),
      },
    },
    async (request) => {
      await requireLiveOrg(db, request.params.orgId);
      return moderatePulse(db, request.params.orgId, request.params.pulseId, request.body.moderationStatus);
    },
  );

  // The file import of `climate-pulse import-pulses` while an embedded server holds the database:
  // the file is the body (NDJSON or CSV), the importer runs here, in one transaction, and the answer
  // streams its progress as NDJSON lines, then the summary (docs/decisions.md, issue 18).
  app.register(async (scope: App) => {
    scope.addContentTypeParser(['application/x-ndjson', 'text/csv'], (_request, payload, done) => done(null, payload));
    scope.post(
      '/organizations/:orgId/pulses/import',
      {
        schema: {
          operationId: 'importPulses',
          summary: 'Import a file of pulses (NDJSON or CSV) in one transaction',
          description:
            'The body is the file (Content-Type application/x-ndjson or text/csv). The answer is NDJSON: {"progress":{bytes,total,rows}} lines while the import runs, then {"summary":{...}} or {"error":{code,message},"summary"?:{...}}; nothing is written unless the last line is a summary.',
          tags: ['pulses'],
          querystring: ImportQuerySchema,
          params: OrgIdParamsSchema,
          response: adminResponses(Type.String({ description: 'NDJSON lines.' }), 'Progress lines, then the outcome.'),
        },
      },
      async (request, reply) => {
        const { orgId } = request.params;
        const type = String(request.headers['content-type'] ?? '').split(';')[0].trim().toLowerCase();
        if (type !== 'application/x-ndjson' && type !== 'text/csv') {
          throw new ApiError('invalid_json', "Content-Type must be 'application/x-ndjson' or 'text/csv'.");
        }
        await requireLiveOrg(db, orgId);
        const format = request.query.format ?? (type === 'text/csv' ? 'csv' : 'ndjson');
        const dir = await mkdtemp(join(tmpdir(), 'cp-import-')); // 0700
        const file = join(dir, `upload.${format}`);
        try {
          await pipeline(request.body as Readable, createWriteStream(file, { mode: 0o600 }));
          reply.hijack();
          const out = reply.raw;
          out.writeHead(200, {
            'content-type': 'application/x-ndjson',
            'x-request-id': request.id,
            'x-content-type-options': 'nosniff',
            'cache-control': 'no-store',
          });
          const line = (o: unknown) => out.write(JSON.stringify(o) + '\n');
          try {
            const summary = await importPulses(db, {
              orgId,
              file,
              format,
              onError: request.query.onError ?? 'abort',
              progress: (bytes, total, rows) => line({ progress: { bytes, total, rows } }),
            });
            line({ summary });
          } catch (err) {
            if (err instanceof ImportAborted) line({ error: { code: 'invalid_request', message: err.message }, summary: err.summary satisfies ImportSummary });
            else {
              const taken = uniqueViolation(err, orgId);
              const apiError = taken
                ? new ApiError('invalid_request', `import aborted, nothing was written: ${taken.message}`)
                : toApiError(err as never);
              if (apiError.statusCode >= 500) request.log.error({ err }, 'import failed');
              line({ error: { code: apiError.code, message: apiError.message } });
            }
          }
          out.end();
        } finally {
          await rm(dir, { recursive: true, force: true });
        }
      },
    );
  });
}
