import type { TSchema } from 'typebox';

const ERROR_REF = { $ref: 'ApiError#' };

const ERROR_DESCRIPTIONS: Record<number, string> = {
  400: 'The request breaks a rule: invalid_request (including an unknown or repeated query parameter, or a body value of the wrong JSON type), invalid_json, invalid_cursor, idempotency_key_required, invalid_idempotency_key or payload_too_large.',
  401: 'unauthorized: the Authorization header is missing, malformed, or names an unknown or revoked key.',
  403: "plan_forbidden: the organization's plan does not include the REST API.",
  404: 'org_not_found: the organization was deleted; not_found: no such endpoint or resource.',
  409: 'Not returned by this operation today (it has no conflicting state); the seed allows 409 on every endpoint, with this error shape.',
  429: 'rate_limited: the per-key limit is exhausted; wait Retry-After seconds.',
  500: 'internal_error: unexpected; logged with the request id.',
  503: 'service_unavailable: the database is unreachable or the process is overloaded; retry after Retry-After seconds.',
};

const intHeader = (description: string, minimum: number, maximum: number) => ({ type: 'integer', format: 'int32', minimum, maximum, description });

export const COMMON_HEADERS = {
  'X-Request-Id': {
    type: 'string',
    minLength: 1,
    maxLength: 128,
    pattern: '^[A-Za-z0-9._:-]{1,128}$',
    description: 'Echoes a valid incoming X-Request-Id (1-128 characters of A-Z a-z 0-9 . _ : -), else a generated UUID.',
  },
  'RateLimit-Limit': intHeader("Requests per minute allowed for this key's plan.", 1, 2_147_483_647),
  'RateLimit-Remaining': intHeader('Requests left in the current window, after this one.', 0, 2_147_483_647),
  'RateLimit-Reset': intHeader('Seconds until the window resets.', 0, 3600),
};

const RETRY_AFTER = { 'Retry-After': intHeader('Whole seconds to wait before retrying (>= 1).', 1, 3600) };
const WWW_AUTHENTICATE = {
  'WWW-Authenticate': {
    type: 'string',
    enum: ['Bearer realm="climate-pulse"', 'Bearer realm="climate-pulse", error="invalid_token"'],
    description: 'The RFC 6750 challenge; error="invalid_token" when a key was sent.',
  },
};

/**
 * The documented answers of an endpoint: its success body, then every status the seed says any
 * endpoint may return (400, 401, 403, 404, 409, 429, 500, 503). `conflict` describes when this
 * operation answers 409; `write` marks a POST or PATCH, which a key of scope read may not call.
 */
export function responses(ok: TSchema, description: string, opts: { conflict?: string; replayHeader?: boolean; write?: boolean } = {}) {
  const okHeaders = opts.replayHeader
    ? {
        ...COMMON_HEADERS,
        'Idempotent-Replayed': {
          type: 'string',
          enum: ['true'],
          description: 'Present when this answer is a replay of an earlier request with the same Idempotency-Key.',
        },
      }
    : COMMON_HEADERS;
  const out: Record<number, unknown> = { 200: { ...ok, 'x-response-description': description, headers: okHeaders } };
  for (const status of [400, 401, 403, 404, 409, 429, 500, 503]) {
    out[status] = {
      ...ERROR_REF,
      description:
        status === 409 && opts.conflict
          ? opts.conflict
          : status === 403 && opts.write
            ? `${ERROR_DESCRIPTIONS[403]} insufficient_scope: the API key has scope read (GET only).`
            : ERROR_DESCRIPTIONS[status],
      headers:
        status === 429 || status === 503 ? { ...COMMON_HEADERS, ...RETRY_AFTER } : status === 401 ? { ...COMMON_HEADERS, ...WWW_AUTHENTICATE } : COMMON_HEADERS,
    };
  }
  return out;
}
