import type { FastifyReply, FastifyRequest } from 'fastify';
import type { DatabaseExecutor, Queryable } from '../../db/executor.js';
import type { Actor } from '../../domain/audit.js';
import { checkIdempotencyKey, once } from '../../domain/idempotency.js';
import { ALIAS_PREFIX, API_PREFIX } from '../openapi.js';

/** Who makes a change through the public API: the request's key, by its display prefix, from the client's address. */
export function keyActor(request: FastifyRequest): Actor {
  const { keyId, prefix } = request.principal;
  return { kind: 'key', keyId, prefix, address: request.ip };
}

/** The request path as the idempotency fingerprint sees it: without the /api alias prefix or the query. */
export function canonicalPath(request: FastifyRequest): string {
  const path = request.url.split('?')[0];
  return path.startsWith(`${ALIAS_PREFIX}/`) ? API_PREFIX + path.slice(ALIAS_PREFIX.length) : path;
}

/**
 * The common shape of every POST: check the Idempotency-Key, run `create` at most once for
 * it, and answer with the stored outcome (marked as a replay when it is one).
 */
export async function createOnce<T>(db: DatabaseExecutor, request: FastifyRequest, reply: FastifyReply, create: (tx: Queryable) => Promise<T>): Promise<T> {
  const key = checkIdempotencyKey(request.headers['idempotency-key']);
  const { orgId, keyId } = request.principal;
  const outcome = await once(db, { orgId, apiKeyId: keyId, key }, { method: request.method, path: canonicalPath(request), body: request.body }, create);
  if (outcome.replayed) reply.header('idempotent-replayed', 'true');
  reply.code(outcome.statusCode);
  return outcome.body;
}
