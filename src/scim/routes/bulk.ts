import type { FastifyInstance } from 'fastify';
import { ScimProblem } from '../../domain/scim-roster.js';
import { scimErrorBody } from '../errors.js';
import { URN, type Json } from '../resources.js';
import { ScimBulkBodySchema, type ScimBulkBody } from '../schemas.js';
import { principalOf } from '../token.js';
import { requireSchema, SCIM_JSON } from './list.js';
import type { ScimDeps } from './types.js';

/** A Bulk operation's path: a resource type, or one resource of it. */
const PATH = /^\/(Users|Groups)(\/[A-Za-z0-9._~-]{1,128})?$/;
const BULK_ID = /bulkId:([A-Za-z0-9._~-]{1,200})/g;

/**
 * /Bulk (RFC 7644 section 3.7): the operations in order, each answered as the same request alone
 * would be (it goes through this face again, token, limit and all), `bulkId:` references to
 * resources created earlier in the request resolved in paths and data, and `failOnErrors`
 * stopping after that many errors. Each operation is its own transaction, as RFC 7644 allows.
 */
export function registerBulkRoute(scope: FastifyInstance, deps: ScimDeps) {
  scope.post<{ Body: ScimBulkBody }>('/Bulk', { schema: { hide: true, body: ScimBulkBodySchema } }, async (request, reply) => {
    principalOf(request);
    requireSchema(request.body, URN.bulkRequest);
    const ops = request.body.Operations;
    if (ops.length > deps.bulkMaxOperations) throw new ScimProblem(413, 'tooMany', `At most ${deps.bulkMaxOperations} operations per request.`);
    const created = new Map<string, string>();
    const results: Json[] = [];
    let errors = 0;
    const resolve = (text: string) =>
      text.replace(BULK_ID, (whole, id: string) => {
        const found = created.get(id);
        if (!found) throw new ScimProblem(409, 'invalidValue', `${whole} names no resource created earlier in this request.`);
        return found;
      });
    for (const op of ops) {
      if (request.body.failOnErrors !== undefined && errors >= request.body.failOnErrors) break;
      const method = op.method.toUpperCase();
      const entry: Json = { method, ...(op.bulkId !== undefined ? { bulkId: op.bulkId } : {}) };
      try {
        if (method === 'POST' && op.bulkId === undefined) throw new ScimProblem(400, 'invalidValue', 'A POST in /Bulk needs a bulkId.');
        const path = resolve(op.path);
        const m = PATH.exec(path);
        if (!m || (method === 'POST') !== (m[2] === undefined))
          throw new ScimProblem(400, 'invalidPath', `${JSON.stringify(op.path)} is not a path this operation takes.`);
        const payload = op.data === undefined ? undefined : resolve(JSON.stringify(op.data));
        const res = await scope.inject({
          method: method as 'POST' | 'PUT' | 'PATCH' | 'DELETE',
          url: `${request.url.replace(/\/Bulk(\?.*)?$/, '')}${path}`,
          headers: {
            authorization: request.headers.authorization ?? '',
            ...(payload !== undefined ? { 'content-type': 'application/scim+json' } : {}),
            ...(op.version !== undefined ? { 'if-match': op.version } : {}),
          },
          payload,
          remoteAddress: request.ip,
        });
        const body = res.body ? (JSON.parse(res.body) as Json) : undefined;
        entry.status = String(res.statusCode);
        if (res.statusCode < 300) {
          const meta = body?.meta as { location?: string; version?: string } | undefined;
          entry.location = meta?.location ?? `${deps.baseUrl}${path}`;
          if (meta?.version) entry.version = meta.version;
          if (method === 'POST' && op.bulkId !== undefined && typeof body?.id === 'string') created.set(op.bulkId, body.id);
        } else {
          errors++;
          entry.response = body;
        }
      } catch (err) {
        if (!(err instanceof ScimProblem)) throw err;
        errors++;
        entry.status = String(err.statusCode);
        entry.response = scimErrorBody(err.statusCode, err.message, err.scimType);
      }
      results.push(entry);
    }
    reply.type(SCIM_JSON);
    return { schemas: [URN.bulkResponse], Operations: results };
  });
}
