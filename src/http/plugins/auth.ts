import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { KeyPrincipal } from '../../db/repositories/api-keys.js';
import type { KeyResolver } from '../../domain/keys.js';
import { ApiError } from '../errors.js';

declare module 'fastify' {
  interface FastifyRequest {
    principal: KeyPrincipal;
  }
}

const BEARER = /^bearer[ ]+([\x21-\x7e]{1,512})[ ]*$/i;

/**
 * Authentication, organization and plan checks, in the contract's order (section 2).
 * Runs in onRequest, so it precedes body parsing and validation.
 */
export function registerAuth(app: FastifyInstance, keys: KeyResolver) {
  app.decorateRequest('principal', null as unknown as KeyPrincipal);
  app.addHook('onRequest', async (request: FastifyRequest) => {
    const header = request.headers.authorization;
    const m = typeof header === 'string' ? BEARER.exec(header) : null;
    if (!m) {
      throw new ApiError('unauthorized', "Send 'Authorization: Bearer <API key>'.");
    }
    const principal = await keys.resolve(m[1]);
    if (!principal || principal.revoked) throw new ApiError('unauthorized', 'The API key is invalid or revoked.');
    if (principal.orgDeleted) throw new ApiError('org_not_found', 'The organization of this API key no longer exists.');
    if (!principal.restApi) throw new ApiError('plan_forbidden', "The organization's plan does not include the REST API.");
    request.principal = principal;
  });
}
