import { Type, type Static, type TSchema } from 'typebox';
import { COMMON_HEADERS } from './responses.js';

/** The operator API's answers (CONTRACT.md section 10): the success body, then its error statuses. */
const ERROR_DESCRIPTIONS: Record<number, string> = {
  400: 'The request breaks a rule: invalid_request (names the first bad value, such as pulses[3].level), invalid_json or payload_too_large. Nothing was written.',
  401: 'unauthorized: the Authorization header is missing or does not carry the operator token (ADMIN_TOKEN).',
  404: 'not_found: no such organization (or it is deleted), key, pulse, alert, endpoint, delivery or path.',
  409: 'Not returned by this operation.',
  500: 'internal_error: unexpected; logged with the request id.',
  503: 'service_unavailable: the database is unreachable or cannot store data; retry after Retry-After seconds.',
};

const HEADERS = { 'X-Request-Id': COMMON_HEADERS['X-Request-Id'] };
const RETRY_AFTER = { 'Retry-After': { type: 'integer', format: 'int32', minimum: 1, maximum: 3600, description: 'Whole seconds to wait.' } };

/** `mediaType`: the success answer is not JSON (the file import streams NDJSON), or one of several; the errors still are. */
export function adminResponses(
  ok: TSchema,
  description: string,
  opts: { status?: 200 | 201; conflict?: string; badRequest?: string; mediaType?: string | readonly string[] } = {},
) {
  const types = opts.mediaType === undefined ? [] : typeof opts.mediaType === 'string' ? [opts.mediaType] : opts.mediaType;
  const success =
    types.length > 0
      ? { description, headers: HEADERS, content: Object.fromEntries(types.map((t) => [t, { schema: ok }])) }
      : { ...ok, 'x-response-description': description, headers: HEADERS };
  const out: Record<number, unknown> = { [opts.status ?? 200]: success };
  for (const status of [400, 401, 404, 409, 500, 503]) {
    out[status] = {
      $ref: 'ApiError#',
      description: status === 409 && opts.conflict ? opts.conflict : status === 400 && opts.badRequest ? opts.badRequest : ERROR_DESCRIPTIONS[status],
      headers: status === 503 ? { ...HEADERS, ...RETRY_AFTER } : HEADERS,
    };
  }
  return out;
}

export const OrgIdParamsSchema = Type.Object(
  { orgId: Type.String({ minLength: 1, maxLength: 128, description: 'Organization id.' }) },
  { additionalProperties: false },
);

export const OrgItemParamsSchema = (name: string, description: string) =>
  Type.Object(
    {
      orgId: Type.String({ minLength: 1, maxLength: 128, description: 'Organization id.' }),
      [name]: Type.String({ minLength: 1, maxLength: 128, description }),
    },
    { additionalProperties: false },
  );

export const AdminNoQuerySchema = Type.Object({}, { additionalProperties: false });

export type OrgIdParams = Static<typeof OrgIdParamsSchema>;
export type AdminNoQuery = Static<typeof AdminNoQuerySchema>;
