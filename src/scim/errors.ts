import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ApiError, type ErrorCode } from '../contract/errors.js';
import { ScimProblem } from '../domain/scim-roster.js';
import { toApiError, withoutValues } from '../http/plugins/index.js';
import { URN } from './resources.js';

/**
 * SCIM's error format (RFC 7644 section 3.12): every failure of /scim/v2, ours, the domain's or
 * Fastify's, is answered as `{schemas: [Error], status: "400", scimType?, detail}`, with the
 * status as a string and the `scimType` an identity provider acts on (uniqueness, invalidFilter,
 * invalidValue, invalidSyntax, mutability, tooMany).
 */
const SCIM_TYPE: Partial<Record<ErrorCode, string>> = {
  invalid_request: 'invalidValue',
  invalid_json: 'invalidSyntax',
  payload_too_large: 'tooLarge',
  team_name_taken: 'uniqueness',
};

/** An error of the roster told in SCIM's words: an address already on it is SCIM's uniqueness (409). */
function scimOf(err: FastifyError, request: FastifyRequest): { status: number; scimType?: string; detail: string; headers: Record<string, string> } {
  if (err instanceof ScimProblem) return { status: err.statusCode, scimType: err.scimType, detail: err.message, headers: err.headers };
  const e = toApiError(err, request.headers);
  if (e.code === 'invalid_request' && /already on the roster/.test(e.message)) return { status: 409, scimType: 'uniqueness', detail: e.message, headers: {} };
  if (e.code === 'team_name_taken') return { status: 409, scimType: 'uniqueness', detail: e.message, headers: {} };
  const status = e.code === 'payload_too_large' ? 413 : e.statusCode;
  return { status, scimType: SCIM_TYPE[e.code], detail: e.message, headers: e.headers };
}

export function sendScimError(reply: FastifyReply, status: number, detail: string, scimType?: string, headers: Record<string, string> = {}) {
  if (status === 401) reply.header('www-authenticate', 'Bearer realm="climate-pulse-scim"');
  return reply
    .code(status)
    .headers(headers)
    .type('application/scim+json; charset=utf-8')
    .send({ schemas: [URN.error], status: String(status), ...(scimType ? { scimType } : {}), detail });
}

/** The body of one error, for /Bulk's operations. */
export function scimErrorBody(status: number, detail: string, scimType?: string) {
  return { schemas: [URN.error], status: String(status), ...(scimType ? { scimType } : {}), detail };
}

export function scimErrors(scope: FastifyInstance) {
  scope.setErrorHandler((err: FastifyError, request: FastifyRequest, reply: FastifyReply) => {
    const s = scimOf(err, request);
    if (s.status >= 500 && !(err instanceof ApiError)) request.log.error({ err: withoutValues(err) }, 'request failed');
    return sendScimError(reply, s.status, s.detail, s.scimType, s.headers);
  });
  scope.setNotFoundHandler((_request, reply) => sendScimError(reply, 404, 'No such SCIM endpoint.'));
}
