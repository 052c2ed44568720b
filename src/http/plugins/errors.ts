import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ApiError, type ErrorCode } from '../../contract/errors.js';
import { DATE_TIME_RULE } from '../../contract/schemas/date-time.js';
import { ORG_ID_PATTERN, ORG_ID_RULE } from '../../contract/schemas/common.js';
import { checkIdempotencyKey } from '../../domain/idempotency.js';
import { dbFailure, isDatabaseUnavailable } from '../../db/errors.js';
import { named } from '../plugin.js';

interface AjvError {
  keyword: string;
  instancePath: string;
  message?: string;
  params: Record<string, unknown>;
}

const CONTEXT_NAMES: Record<string, string> = {
  querystring: 'query parameter',
  body: 'body field',
  params: 'path parameter',
  headers: 'header',
};

/** Turns the first schema violation into one sentence that names the field. */
export function describeValidation(context: string | undefined, errors: AjvError[]): string {
  const what = CONTEXT_NAMES[context ?? ''] ?? 'value';
  const e = errors[0];
  if (!e) return 'The request is invalid.';
  // `/pulses/3/level` -> `pulses[3].level` (the dataset file's way of naming a value).
  const field = e.instancePath
    .replace(/^\//, '')
    .replace(/\/(\d+)(?=\/|$)/g, '[$1]')
    .replace(/\//g, '.');
  const capital = what[0].toUpperCase() + what.slice(1);
  switch (e.keyword) {
    case 'additionalProperties':
      return `Unknown ${what} '${String(e.params.additionalProperty)}'.`;
    case 'required':
      return `Missing required ${what} '${String(e.params.missingProperty)}'.`;
    case 'minProperties':
      return context === 'body' ? 'The body must contain at least one field.' : `At least one ${what} is required.`;
    case 'format':
      if (e.params.format === 'date-time') {
        return `${capital} '${field}' ${DATE_TIME_RULE}.`;
      }
      if (e.params.format === 'date') return `${capital} '${field}' must be a calendar date YYYY-MM-DD.`;
      break;
    case 'pattern':
      if (e.params.pattern === ORG_ID_PATTERN) return `${capital} '${field}' ${ORG_ID_RULE}.`;
      break;
    case 'type':
      if (field === '' && context === 'body') return 'The body must be a JSON object.';
      break;
  }
  return field ? `${capital} '${field}' ${e.message ?? 'is invalid'}.` : `The ${what} ${e.message ?? 'is invalid'}.`;
}

/**
 * The database cannot write: disk full, read-only, an I/O error, or the embedded database's files
 * refusing a write (src/db/errors.ts). Writes fail, reads go on; nothing is half-written.
 */
export function isStorageFailure(err: unknown): boolean {
  return dbFailure(err) === 'storage';
}

/** Every failure, ours or Fastify's, becomes an `ApiError`; nothing else builds an error body. */
export function toApiError(
  err: FastifyError & { validation?: AjvError[]; validationContext?: string },
  headers: Record<string, string | string[] | undefined> = {},
): ApiError {
  if (err instanceof ApiError) return err;
  if (err.validation) {
    // The header schema documents the key's rule; a violation keeps the key's own codes.
    if (err.validationContext === 'headers' && err.validation[0]?.instancePath === '/idempotency-key') {
      try {
        checkIdempotencyKey(headers['idempotency-key']);
      } catch (e) {
        if (e instanceof ApiError) return e;
      }
    }
    return new ApiError('invalid_request', describeValidation(err.validationContext, err.validation));
  }
  switch (err.code) {
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return new ApiError('invalid_json', "Content-Type must be 'application/json'.");
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new ApiError('payload_too_large', 'The request body is larger than the limit.');
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return new ApiError('invalid_json', 'The body is empty; send a JSON object.');
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
      return new ApiError('invalid_json', 'The body is not valid JSON.');
  }
  if (err instanceof SyntaxError && err.statusCode === 400) return new ApiError('invalid_json', 'The body is not valid JSON.');
  // PostgreSQL refuses NUL and unencodable characters in text: the value is the problem, not the server.
  if (dbFailure(err) === 'unstorable_text') {
    return new ApiError('invalid_request', 'A value contains a character that cannot be stored (such as NUL).');
  }
  if (isStorageFailure(err)) {
    return new ApiError('service_unavailable', 'The database cannot store data right now (its storage is full or read-only); retry later.', {
      'retry-after': '30',
    });
  }
  if (isDatabaseUnavailable(err)) {
    return new ApiError('service_unavailable', 'The service is temporarily unavailable; retry shortly.', { 'retry-after': '5' });
  }
  const status = err.statusCode ?? 500;
  if (status === 404) return new ApiError('not_found', 'No such endpoint.');
  if (status === 503) return new ApiError('service_unavailable', 'The service is overloaded; retry shortly.', { 'retry-after': '5' });
  if (status === 429) return new ApiError('rate_limited', 'Too many requests.');
  if (status >= 400 && status < 500) return new ApiError('invalid_request', 'The request is invalid.');
  return new ApiError('internal_error', 'An unexpected error occurred; it has been logged with the request id.');
}

/** RFC 6750 challenge of every 401 (auth.ts adds `error="invalid_token"` when a key was sent). */
export const BEARER_CHALLENGE = 'Bearer realm="climate-pulse"';

export function sendError(reply: FastifyReply, e: ApiError) {
  if (e.statusCode === 401 && !e.headers['www-authenticate']) reply.header('www-authenticate', BEARER_CHALLENGE);
  return reply
    .code(e.statusCode)
    .headers(e.headers)
    .type('application/json; charset=utf-8')
    .send({ error: { code: e.code satisfies ErrorCode, message: e.message } });
}

/**
 * Database errors carry values clients sent (titles, descriptions, Idempotency-Keys): PGlite's
 * the statement's parameters (`params`), PostgreSQL's `detail` the failing row or key, its
 * `where` a bind parameter's value (`unnamed portal parameter $3 = '...'`), and a data
 * exception's message (SQLSTATE class 22: `invalid input syntax for type uuid: "..."`) the value
 * itself, in `stack` too. The log keeps the message's words, the SQLSTATE and the statement, not
 * the values; a cause is treated the same way.
 */
const VALUE_FIELDS = ['params', 'detail'] as const;
const QUOTED_VALUE = /: ".*"$/s;
const PARAMETER_VALUE = / = '.*'/s;
export function withoutValues<E extends object>(err: E, depth = 0): E {
  const e = err as Record<string, unknown>;
  const message = typeof e.message === 'string' ? e.message : '';
  const dataException = typeof e.code === 'string' && e.code.startsWith('22') && QUOTED_VALUE.test(message);
  const where = typeof e.where === 'string' && PARAMETER_VALUE.test(e.where);
  const cause = depth < 3 && e.cause !== null && typeof e.cause === 'object' ? withoutValues(e.cause, depth + 1) : e.cause;
  if (!VALUE_FIELDS.some((f) => f in err) && !dataException && !where && cause === e.cause) return err;
  const copy = Object.create(Object.getPrototypeOf(err)) as Record<string, unknown>;
  Object.defineProperties(copy, Object.getOwnPropertyDescriptors(err));
  for (const f of VALUE_FIELDS) if (f in copy) copy[f] = '[redacted]';
  if (dataException) {
    const redacted = message.replace(QUOTED_VALUE, ': "[redacted]"');
    copy.message = redacted;
    if (typeof copy.stack === 'string') copy.stack = copy.stack.split(message).join(redacted);
  }
  if (where) copy.where = (e.where as string).replace(PARAMETER_VALUE, " = '[redacted]'");
  if (cause !== e.cause) copy.cause = cause;
  return copy as E;
}

/** Every error, our own and Fastify's, and every unmatched route, answered in the contract's one shape. */
export const contractErrors = named('contract-errors', (app: FastifyInstance) => {
  app.setErrorHandler((err: FastifyError, request: FastifyRequest, reply: FastifyReply) => {
    const e = toApiError(err, request.headers);
    if (isStorageFailure(err)) {
      // One clear line for the operator instead of a stack trace.
      request.log.error({ code: (err as { code?: string }).code, reason: err.message }, 'database storage refuses writes (full or read-only)');
    } else if (err instanceof ApiError && e.code === 'service_unavailable') {
      // Answered so on purpose (a drain's /readyz, a request on a closing server): no failure, no stack.
      request.log.info({ code: e.code, reason: e.message }, 'answered 503 service_unavailable');
    } else if (e.statusCode >= 500) request.log.error({ err: withoutValues(err) }, 'request failed');
    return sendError(reply, e);
  });
  app.setNotFoundHandler((_request, reply) => sendError(reply, new ApiError('not_found', 'No such endpoint.')));
});
