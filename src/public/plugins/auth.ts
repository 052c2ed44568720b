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

/** RFC 6750: a key was sent and is not valid. Without one, errors.ts adds the bare challenge. */
export const INVALID_TOKEN = 'Bearer realm="climate-pulse", error="invalid_token"';

/**
 * Authentication, organization and plan checks, in the contract's order (section 2).
 * Runs in onRequest, so it precedes body parsing and validation.
 *
 * A key is looked up in the database only after a failed authentication has been reserved for
 * the client's address (AuthFailureLimiter), and given back when the key is valid. Keys already
 * in the resolver's cache, and requests for a key whose lookup is already running, start no
 * lookup and reserve nothing: a valid client's burst is not limited, a guesser's is.
 *
 * The client's address is `request.ip`: the socket's, or with TRUST_PROXY the one the trusted
 * proxies report. An address past its limit gets 429 before any key is looked up, except with a
 * key that already authenticated from that same address (AuthFailureLimiter.proven), so a guesser
 * sharing an address with a client does not lock that client out.
 */
export function registerAuth(app: FastifyInstance, keys: KeyResolver, failures: AuthFailureLimiter, usage: KeyUsageRecorder) {
  app.decorateRequest('principal', null as unknown as KeyPrincipal);
  const running = new Map<string, Promise<KeyPrincipal | null>>();

  const lookUp = async (ip: string, secret: string, join = true): Promise<{ principal: KeyPrincipal | null; counted: boolean }> => {
    const cached = keys.peek(secret);
    if (cached !== undefined) return { principal: cached, counted: false };
    const joined = join ? running.get(secret) : undefined;
    if (joined) {
      try {
        return { principal: await joined, counted: false };
      } catch (err) {
        // The address that started the lookup was refused (429); this request's own address decides.
        if (err instanceof ApiError && err.code === 'rate_limited') return lookUp(ip, secret, false);
        throw err;
      }
    }
    // Registered before its first await, so concurrent requests for the same key join it.
    const lookup = (async () => {
      await failures.reserve(ip); // 429 here: past the limit, nothing is looked up
      let principal: KeyPrincipal | null;
      try {
        principal = await keys.resolve(secret);
      } catch (err) {
        await failures.refund(ip); // the database failed, not the client
        throw err;
      }
      if (principal && !principal.revoked) await failures.refund(ip);
      return principal;
    })();
    running.set(secret, lookup);
    try {
      return { principal: await lookup, counted: true };
    } finally {
      if (running.get(secret) === lookup) running.delete(secret);
    }
  };

  app.addHook('onRequest', async (request: FastifyRequest) => {
    const ip = request.ip;
    // Two Authorization headers are ambiguous (which one is the key?): refused, never the first one taken.
    const { single, token: secret, sent } = request.bearer();
    let principal: KeyPrincipal | null = null;
    let counted = false;
    const over = await failures.overLimit(ip);
    if (over !== null) {
      // Past the limit nothing is looked up, so keys cannot be guessed at speed; only a key this
      // address has proven goes on (the cache, or one lookup of a key that was valid).
      if (secret === undefined || !(await failures.proven(ip, secret))) failures.refuse(over);
      principal = await keys.resolve(secret);
      if (!principal || principal.revoked) await failures.forget(ip, secret);
    } else if (secret !== undefined) {
      ({ principal, counted } = await lookUp(ip, secret));
    }
    if (!principal || principal.revoked) {
      if (!counted) await failures.failed(ip);
      const message = !single
        ? 'Send exactly one Authorization header.'
        : secret !== undefined
          ? 'The API key is invalid or revoked.'
          : "Send 'Authorization: Bearer <API key>'.";
      throw new ApiError('unauthorized', message, sent ? { 'www-authenticate': INVALID_TOKEN } : {});
    }
    if (principal.orgDeleted) throw new ApiError('org_not_found', 'The organization of this API key no longer exists.');
    if (!principal.restApi) throw new ApiError('plan_forbidden', "The organization's plan does not include the REST API.");
    request.principal = principal;
    await failures.prove(ip, secret!);
    usage.used(principal.orgId, principal.keyId);
  });
}
