import type { FastifyInstance, FastifyRequest } from 'fastify';
import { ApiError } from '../../contract/errors.js';
import { ErrorSchema } from '../../contract/schemas/common.js';
import { checkBodyText, compileValidator } from '../validation.js';
import { lazyValidatorCompiler } from '../lazy-compilers.js';
import { registerErrorHandling } from './errors.js';

/**
 * The bootstrap every face shares (public API, operator API, console): errors in the contract's
 * shape, strict validation, JSON bodies only, the error schema, and the response headers every
 * answer carries. Each app is then a short list of these plugins plus its routes.
 */
export function registerContractBase(app: FastifyInstance, opts: { compileOnFirstUse?: boolean } = {}): void {
  registerErrorHandling(app);
  // Bodies are validated without type conversion; query strings, params and headers are coerced.
  app.setValidatorCompiler(opts.compileOnFirstUse ? lazyValidatorCompiler(compileValidator) : compileValidator);
  // Only JSON bodies: a text/plain body is refused as invalid_json, not parsed as a string.
  app.removeContentTypeParser('text/plain');
  // A lone UTF-16 surrogate in any string of a JSON body is 400 on every route (issue 43).
  app.addHook('preValidation', checkBodyText);
  app.addSchema(ErrorSchema);
}

/**
 * `X-Request-Id`, `nosniff` and `no-store` on every answer, and the contract's 503 (with
 * `Retry-After`, closing the connection) for a request that arrives on an open keep-alive
 * connection while the app closes: Fastify's own would be a bare body without code.
 */
export function registerResponseHeaders(app: FastifyInstance): void {
  let closing = false;
  app.addHook('preClose', async () => {
    closing = true;
  });
  app.addHook('onRequest', async (_request, reply) => {
    reply.header('x-request-id', _request.id);
    reply.header('x-content-type-options', 'nosniff');
    reply.header('cache-control', 'no-store');
    if (closing) {
      reply.header('connection', 'close');
      throw new ApiError('service_unavailable', 'The service is shutting down; retry shortly.', { 'retry-after': '1' });
    }
  });
}

/**
 * One log line per request: method, route, status, duration and what `fields` adds (the
 * organization, the face). Never a header: keys and the operator token travel in one.
 */
export function registerRequestLog(app: FastifyInstance, fields: (request: FastifyRequest) => Record<string, unknown>): void {
  app.addHook('onResponse', async (request, reply) => {
    request.log.info(
      {
        ...fields(request),
        method: request.method,
        route: request.routeOptions.url ?? 'unknown',
        status: reply.statusCode,
        durationMs: Math.round(reply.elapsedTime * 100) / 100,
      },
      'request',
    );
  });
}

const BEARER = /^bearer[ ]+([\x21-\x7e]{1,512})[ ]*$/i;

/** What a request's `Authorization` says, read the same way by every face that takes a bearer token. */
export interface BearerHeader {
  /** False when the client sent several Authorization headers (Node keeps only the first): refused. */
  single: boolean;
  /** The token of a well-formed `Bearer <token>` header (the scheme word in any case). */
  token?: string;
  /** A token was sent (or several headers were), so a refusal says `error="invalid_token"` (RFC 6750). */
  sent: boolean;
}

export function readBearer(request: FastifyRequest): BearerHeader {
  const raw = request.raw.rawHeaders;
  let n = 0;
  for (let i = 0; i < raw.length; i += 2) if (raw[i].toLowerCase() === 'authorization') n++;
  const single = n <= 1;
  const header = request.headers.authorization;
  const m = single && typeof header === 'string' ? BEARER.exec(header) : null;
  return { single, token: m?.[1], sent: m !== null || !single };
}
