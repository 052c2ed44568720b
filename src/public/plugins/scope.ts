import type { FastifyInstance } from 'fastify';
import { ApiError } from '../../contract/errors.js';

const WRITES = new Set(['POST', 'PATCH', 'PUT', 'DELETE']);

/**
 * A key of scope `read` may only read: POST and PATCH are 403 insufficient_scope (CONTRACT.md
 * section 7). preParsing runs after every onRequest hook (authentication, then the key's rate
 * limit, whose headers this answer keeps) and before the body is parsed and validated.
 */
export function registerScopeCheck(scope: FastifyInstance) {
  scope.addHook('preParsing', async (request) => {
    if (request.principal?.scope === 'read' && WRITES.has(request.method)) {
      throw new ApiError('insufficient_scope', 'This API key has scope read: it may only send GET requests.');
    }
  });
}
