import { Type, type Static } from 'typebox';
import { ApiError } from '../errors.js';
import { Nullable } from './common.js';

/**
 * The check-in face's bodies and paths (CONTRACT.md section 12), declared like every other face's.
 * Each field's refusal is the answer the page has always had for it (the domain in
 * src/domain/checkins/answers.ts gives the same one when called directly), so the schema decides
 * what is refused and `checkinRefusal` words it: a link token that is not one is the link's 404
 * (a bad token and an unknown one look the same), the rest is 400 `invalid_request` naming the
 * field as the page's script reads it. The rules that need the database or the week's words (a
 * key that exists, a reason of the organization's list, a comment's length once trimmed) stay in
 * the domain.
 */

/** The check-in face's own rule of an organization id: the one of links made by a round. */
const CHECKIN_ORG_ID = '^[A-Za-z0-9._-]{1,128}$';
/** A link token as a round makes it (src/domain/checkins/answers.ts, LINK_TOKEN). */
const LINK_TOKEN = '^[A-Za-z0-9_-]{22,64}$';
const BASE64URL = '^[A-Za-z0-9_-]{1,1400}$';

const OrgId = Type.String({ pattern: CHECKIN_ORG_ID, description: 'The organization id of the link.' });
const Token = Type.String({ pattern: LINK_TOKEN, description: "The link's token (from the link's fragment, never a path or query)." });

export const CheckinOrgParamsSchema = Type.Object({ orgId: OrgId }, { additionalProperties: false });

export const OpenCheckinBodySchema = Type.Object({ token: Token }, { additionalProperties: false });

export const IssueCheckinBodySchema = Type.Object(
  { token: Token, blindedMessage: Type.String({ pattern: BASE64URL, description: 'The blinded message (RFC 9474), base64url.' }) },
  { additionalProperties: false },
);

/** Fields in the order the domain checks them, so a body with one fault gets the same answer as ever. */
export const AnswerCheckinBodySchema = Type.Object(
  {
    orgId: OrgId,
    keyId: Type.String({ pattern: '^ck_[A-Za-z0-9]{1,64}$', description: 'The published key the token is signed under.' }),
    message: Type.String({ pattern: BASE64URL, description: 'The message the page kept, base64url.' }),
    signature: Type.String({ pattern: BASE64URL, description: 'The unblinded signature, base64url.' }),
    level: Type.Integer({ minimum: 1, maximum: 5 }),
    comment: Type.Optional(Nullable(Type.String({ description: 'At most 2,000 characters once trimmed (checked by the domain).' }))),
    team: Type.Optional(Type.Boolean({ description: 'false: "Don\'t attach my team".' })),
    reason: Type.Optional(Nullable(Type.String({ description: "One of the organization's reasons (checked by the domain)." }))),
  },
  { additionalProperties: false },
);

export type CheckinOrgParams = Static<typeof CheckinOrgParamsSchema>;
export type OpenCheckinBody = Static<typeof OpenCheckinBodySchema>;
export type IssueCheckinBody = Static<typeof IssueCheckinBodySchema>;
export type AnswerCheckinBody = Static<typeof AnswerCheckinBodySchema>;

const linkGone = () => new ApiError('not_found', 'This check-in link is not valid or has closed.');
const base64url = (field: string) => () => new ApiError('invalid_request', `'${field}' must be base64url.`);

/** The answer to a field that breaks its schema: the same as the domain's for that field. */
const REFUSALS: Record<string, () => ApiError> = {
  orgId: () => new ApiError('invalid_request', "'orgId' must be an organization id."),
  token: linkGone,
  blindedMessage: base64url('blindedMessage'),
  keyId: () => new ApiError('invalid_request', 'The check-in token does not verify under a published key of this organization.'),
  message: base64url('message'),
  signature: base64url('signature'),
  level: () => new ApiError('invalid_request', "'level' must be an integer from 1 to 5."),
  comment: () => new ApiError('invalid_request', "'comment' must be text or null."),
  team: () => new ApiError('invalid_request', "'team' must be true or false."),
  reason: () => new ApiError('invalid_request', "'reason' must be one of the organization's reasons, or null."),
};

interface SchemaError {
  keyword: string;
  instancePath: string;
  params: Record<string, unknown>;
}

/**
 * A check-in route's `schemaErrorFormatter`: the first violation as the face's answer. The base's
 * error handler passes an ApiError through as it is (src/http/plugins/errors.ts, toApiError).
 */
export function checkinRefusal(errors: SchemaError[]): ApiError {
  const e = errors[0];
  if (!e) return new ApiError('invalid_request', 'The request is invalid.');
  if (e.keyword === 'additionalProperties') return new ApiError('invalid_request', `Unknown body field '${String(e.params.additionalProperty)}'.`);
  if (e.instancePath === '' && e.keyword === 'type') return new ApiError('invalid_json', 'The body must be a JSON object.');
  const field = e.keyword === 'required' ? String(e.params.missingProperty) : e.instancePath.split('/')[1];
  return REFUSALS[field]?.() ?? new ApiError('invalid_request', 'The request is invalid.');
}
