import { Type, type TSchema } from 'typebox';
import { ERROR_STATUS, type ErrorCode } from '../errors.js';
import './date-time.js'; // registers the API's date-time rule with TypeBox before any schema is checked

/**
 * RFC 3339 with an offset or Z, a real instant from 0001-01-01T00:00:00.000Z to 9999-12-31T23:59:59.999Z
 * (date-time.ts); rendered by the API as YYYY-MM-DDTHH:mm:ss.sssZ.
 */
export const DateTimeSchema = (description: string, example: string | null = '2026-11-20T08:15:00.000Z') =>
  Type.String({ format: 'date-time', maxLength: 35, description, ...(example === null ? {} : { examples: [example] }) });

/** An id of the seed: 1-128 characters. */
export const IdSchema = (opts: { description?: string } = {}) => Type.String({ minLength: 1, maxLength: 128, ...opts });

/**
 * The one rule of an organization id wherever one is created (the operator API and the CLI, the
 * dataset file): 1-128 of A-Z a-z 0-9 . _ : - and never `.` or `..`, which a client that
 * normalizes URLs removes from a path (`/organizations/../keys` becomes `/keys`).
 */
export const ORG_ID_PATTERN = '^(?!\\.\\.?$)[A-Za-z0-9._:-]+$';
export const ORG_ID_RULE = 'must be 1-128 characters of A-Z a-z 0-9 . _ : -, and not . or ..';
export const OrgIdSchema = (opts: { description?: string } = {}) => Type.String({ minLength: 1, maxLength: 128, pattern: ORG_ID_PATTERN, ...opts });

/** The largest integer a JSON client can hold exactly (2^53 - 1), the bound of every count. */
export const MAX_COUNT = Number.MAX_SAFE_INTEGER;

/** A count: an int64 from 0 to 2^53 - 1. */
export const CountSchema = (opts: { description?: string } = {}) => Type.Integer({ format: 'int64', minimum: 0, maximum: MAX_COUNT, ...opts });

export const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);

export const ErrorSchema = Type.Object(
  {
    error: Type.Object(
      {
        code: Type.Unsafe<ErrorCode>({
          type: 'string',
          enum: Object.keys(ERROR_STATUS),
          description: 'Stable machine-readable code, one of a closed list (the error table of docs/api.md); a new code is a new version of the API.',
        }),
        message: Type.String({ minLength: 1, maxLength: 500, description: 'Human-readable explanation naming the offending field.' }),
      },
      { additionalProperties: false },
    ),
  },
  {
    $id: 'ApiError',
    additionalProperties: false,
    description: 'Every error has this shape.',
    examples: [{ error: { code: 'invalid_request', message: "Query parameter 'limit' must be <= 200." } }],
  },
);

/**
 * Declared optional for validation, so that a missing or malformed key is answered with its own
 * codes (idempotency_key_required, invalid_idempotency_key) rather than a generic validation
 * error; the OpenAPI document declares it required (src/public/openapi.ts), as the server requires it.
 */
/** The Idempotency-Key the document shows; /docs' "Try it out" replaces it by one derived from the request. */
export const IDEMPOTENCY_KEY_EXAMPLE = 'a1b2c3d4-retry-safe';

export const IdempotencyHeadersSchema = Type.Object({
  'idempotency-key': Type.Optional(
    Type.String({
      maxLength: 128,
      pattern: '^[A-Za-z0-9._:-]{8,128}$',
      description: 'Required. 8-128 characters of A-Z a-z 0-9 . _ : -. A retry with the same key and body replays the first answer.',
      examples: [IDEMPOTENCY_KEY_EXAMPLE],
    }),
  ),
});

/** The query of an operation that takes no query parameter: any parameter is 400 invalid_request. */
export const NoQuerySchema = Type.Object({}, { additionalProperties: false });
