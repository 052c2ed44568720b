import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { KeyPrincipal } from '../../db/repositories/api-keys.js';
import type { KeyUsageRecorder } from '../../domain/key-usage.js';
import type { KeyResolver } from '../../domain/keys.js';
import { ApiError } from '../../contract/errors.js';
import type { AuthFailureLimiter } from './rate-limit.js';

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
export function registerAuth(app: FastifyInstance, keys: KeyResolver, failures: AuthFailureLimiter, usage: KeyUsageRecorder) {
  app.decorateRequest('principal', null as unknown as KeyPrincipal);
  app.addHook('onRequest', async (request: FastifyRequest) => {
    // An address that failed too often is refused before any key is looked at, so keys cannot be guessed at speed.
    await failures.check(request.ip);
    const header = request.headers.authorization;
    const m = typeof header === 'string' ? BEARER.exec(header) : null;
    const principal = m ? await keys.resolve(m[1]) : null;
    if (!principal || principal.revoked) {
      await failures.failed(request.ip);
      throw new ApiError('unauthorized', m ? 'The API key is invalid or revoked.' : "Send 'Authorization: Bearer <API key>'.");
    }
    if (principal.orgDeleted) throw new ApiError('org_not_found', 'The organization of this API key no longer exists.');
    if (!principal.restApi) throw new ApiError('plan_forbidden', "The organization's plan does not include the REST API.");
    request.principal = principal;
    usage.used(principal.orgId, principal.keyId);
  });
}
