import { Type, type Static } from 'typebox';
import { operatorActor } from '../../domain/audit.js';
import { createScimToken, getScimTeamFrom, listOrgScimTokens, revokeScimToken, rollScimToken, setScimTeamFrom } from '../../domain/scim.js';
import { requireLiveOrg } from '../../domain/orgs.js';
import { requireJsonObject } from '../../http/plugins/index.js';
import { AdminNoQuerySchema, OrgIdParamsSchema, OrgItemParamsSchema, adminResponses } from '../../contract/schemas/admin-common.js';
import { DateTimeSchema, Nullable } from '../../contract/schemas/common.js';
import type { AdminRouteDeps, App } from './types.js';

/**
 * The SCIM tokens and settings of an organization (issue 56), for the operator: what the console's
 * Provisioning page and `climate-pulse scim` do, through the same domain operations, audited with
 * the actor `operator`.
 */
const TokenName = Nullable(Type.String({ minLength: 1, maxLength: 128, description: 'A label for the token (the identity provider it is for).' }));

export const CreateScimTokenBodySchema = Type.Object({ name: Type.Optional(TokenName) }, { additionalProperties: false });

const tokenFields = {
  id: Type.String({ minLength: 1, maxLength: 128, description: 'Token id (stk_...).' }),
  prefix: Type.String({ minLength: 1, maxLength: 32, description: 'The non-secret start of the token (cp_scim_ and 6 characters).' }),
  name: TokenName,
  createdAt: DateTimeSchema('When the token was created.'),
};

export const CreatedScimTokenSchema = Type.Object(
  {
    ...tokenFields,
    token: Type.String({ minLength: 16, maxLength: 256, description: 'The secret. It appears in this answer only: give it to the identity provider now.' }),
  },
  { additionalProperties: false },
);

export const RolledScimTokenSchema = Type.Object(
  {
    ...tokenFields,
    token: Type.String({ minLength: 16, maxLength: 256, description: 'The new secret, in this answer only.' }),
    oldTokenId: Type.String({ description: 'The token replaced.' }),
    oldExpiresAt: DateTimeSchema('When the replaced token stops working.'),
  },
  { additionalProperties: false },
);

export const ScimTokenListingSchema = Type.Object(
  {
    ...tokenFields,
    createdBy: Nullable(Type.String({ description: 'Who made it: a member’s email, `operator`.' })),
    expiresAt: Nullable(DateTimeSchema('When a rolled token stops working; null: never.')),
    revokedAt: Nullable(DateTimeSchema('When it was revoked; null while it is not.')),
    state: Type.Union([Type.Literal('active'), Type.Literal('expiring'), Type.Literal('expired'), Type.Literal('revoked')], {
      description: 'active; expiring (rolled, still working until expiresAt); expired; revoked.',
    }),
  },
  { additionalProperties: false },
);

export const ScimTokenListSchema = Type.Object({ items: Type.Array(ScimTokenListingSchema) }, { additionalProperties: false });

export const RollScimTokenBodySchema = Type.Object(
  {
    expiresIn: Type.Optional(
      Type.Union([Type.Literal('now'), Type.Literal('1h'), Type.Literal('24h'), Type.Literal('7d')], {
        description: 'When the old token stops working (default 24h): time to change the identity provider’s setting.',
      }),
    ),
  },
  { additionalProperties: false },
);

export const ScimSettingsSchema = Type.Object(
  {
    teamFrom: Type.Union([Type.Literal('groups'), Type.Literal('department')], {
      description: "groups: a user's team is the SCIM Group they are a member of; department: the enterprise extension's department names it.",
    }),
  },
  { additionalProperties: false },
);

const TokenParams = OrgItemParamsSchema('tokenId', 'Token id, or a start of its display prefix.');

export function registerScimRoutes(app: App, { db, now }: AdminRouteDeps) {
  app.post(
    '/organizations/:orgId/scim-tokens',
    {
      preValidation: requireJsonObject,
      schema: {
        operationId: 'createScimToken',
        summary: 'Create a SCIM token',
        description: 'A bearer token for the organization’s identity provider at /scim/v2. The secret (`token`) appears in this answer only.',
        tags: ['scim'],
        querystring: AdminNoQuerySchema,
        params: OrgIdParamsSchema,
        body: CreateScimTokenBodySchema,
        response: adminResponses(CreatedScimTokenSchema, 'The token, with its secret.', { status: 201 }),
      },
    },
    async (request, reply) => {
      const t = await createScimToken(db, request.params.orgId, request.body, operatorActor(request.ip), now());
      reply.code(201);
      return t;
    },
  );

  app.get(
    '/organizations/:orgId/scim-tokens',
    {
      schema: {
        operationId: 'listScimTokens',
        summary: "The organization's SCIM tokens, never a secret or hash",
        tags: ['scim'],
        querystring: AdminNoQuerySchema,
        params: OrgIdParamsSchema,
        response: adminResponses(ScimTokenListSchema, 'Every token, newest first.'),
      },
    },
    async (request) => ({ items: await listOrgScimTokens(db, request.params.orgId, now()) }),
  );

  app.post(
    '/organizations/:orgId/scim-tokens/:tokenId/roll',
    {
      preValidation: requireJsonObject,
      schema: {
        operationId: 'rollScimToken',
        summary: 'Roll a SCIM token',
        description: 'A new token with the same name; the old one stops working at the chosen time. The new secret appears in this answer only.',
        tags: ['scim'],
        querystring: AdminNoQuerySchema,
        params: TokenParams,
        body: RollScimTokenBodySchema,
        response: adminResponses(RolledScimTokenSchema, 'The new token, with its secret.', { status: 201 }),
      },
    },
    async (request, reply) => {
      const t = await rollScimToken(db, request.params.orgId, request.params.tokenId, request.body.expiresIn ?? '24h', operatorActor(request.ip), now());
      reply.code(201);
      return t;
    },
  );

  app.delete(
    '/organizations/:orgId/scim-tokens/:tokenId',
    {
      schema: {
        operationId: 'revokeScimToken',
        summary: 'Revoke a SCIM token',
        description: '/scim/v2 refuses it (401) within 5 seconds.',
        tags: ['scim'],
        querystring: AdminNoQuerySchema,
        params: TokenParams,
        response: adminResponses(ScimTokenListingSchema, 'The token as revoked (again keeps the first time).'),
      },
    },
    async (request) => revokeScimToken(db, request.params.orgId, request.params.tokenId, operatorActor(request.ip), now()),
  );

  app.get(
    '/organizations/:orgId/scim-settings',
    {
      schema: {
        operationId: 'getScimSettings',
        summary: 'How SCIM users find their team',
        tags: ['scim'],
        querystring: AdminNoQuerySchema,
        params: OrgIdParamsSchema,
        response: adminResponses(ScimSettingsSchema, 'The setting (groups when never set).'),
      },
    },
    async (request) => {
      await requireLiveOrg(db, request.params.orgId);
      return { teamFrom: await getScimTeamFrom(db, request.params.orgId) };
    },
  );

  app.put(
    '/organizations/:orgId/scim-settings',
    {
      preValidation: requireJsonObject,
      schema: {
        operationId: 'setScimSettings',
        summary: 'Choose how SCIM users find their team',
        tags: ['scim'],
        querystring: AdminNoQuerySchema,
        params: OrgIdParamsSchema,
        body: ScimSettingsSchema,
        response: adminResponses(ScimSettingsSchema, 'The setting as saved.'),
      },
    },
    async (request) => ({
      teamFrom: await setScimTeamFrom(db, request.params.orgId, (request.body as Static<typeof ScimSettingsSchema>).teamFrom, operatorActor(request.ip), now()),
    }),
  );
}
