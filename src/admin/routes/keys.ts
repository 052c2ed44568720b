import { operatorActor } from '../../domain/audit.js';
import { createOrgKey, listOrgKeys, revokeOrgKey } from '../../domain/keys.js';
import { requireJsonObject } from '../../http/plugins/index.js';
import { AdminNoQuerySchema, OrgIdParamsSchema, OrgItemParamsSchema, adminResponses } from '../../contract/schemas/admin-common.js';
import { CreatedKeySchema, CreateKeyBodySchema, KeyListingSchema, KeyListSchema } from '../../contract/schemas/admin-keys.js';
import type { AdminRouteDeps, App } from './types.js';

export function registerKeyRoutes(app: App, { db, now }: AdminRouteDeps) {
  app.post(
    '/organizations/:orgId/keys',
    {
      preValidation: requireJsonObject,
      schema: {
        operationId: 'createKey',
        summary: 'Create an API key',
        description: 'The secret (`key`) appears in this answer only. scope read: GET only; expiresAt: refused like a revoked key after it.',
        tags: ['keys'],
        querystring: AdminNoQuerySchema,
        params: OrgIdParamsSchema,
        body: CreateKeyBodySchema,
        response: adminResponses(CreatedKeySchema, 'The key, with its secret.', { status: 201 }),
      },
    },
    async (request, reply) => {
      const key = await createOrgKey(db, request.params.orgId, request.body, operatorActor(request.ip), now());
      reply.code(201);
      return key;
    },
  );

  app.get(
    '/organizations/:orgId/keys',
    {
      schema: {
        operationId: 'listKeys',
        summary: "The organization's keys, never a secret or hash",
        tags: ['keys'],
        querystring: AdminNoQuerySchema,
        params: OrgIdParamsSchema,
        response: adminResponses(KeyListSchema, 'Every key, oldest first.'),
      },
    },
    async (request) => ({ items: await listOrgKeys(db, request.params.orgId) }),
  );

  app.delete(
    '/organizations/:orgId/keys/:keyId',
    {
      schema: {
        operationId: 'revokeKey',
        summary: 'Revoke a key',
        description:
          "keyId is the key id, or an unambiguous start of its display prefix within this organization (a prefix matching several keys is 400, listing them). Another organization's keys are never touched. The public API refuses the key within 5 seconds.",
        tags: ['keys'],
        querystring: AdminNoQuerySchema,
        params: OrgItemParamsSchema('keyId', 'Key id, or a start of its display prefix.'),
        response: adminResponses(KeyListingSchema, 'The key as revoked (revoking again keeps the first time).'),
      },
    },
    async (request) => revokeOrgKey(db, request.params.orgId, request.params.keyId, operatorActor(request.ip), now()),
  );
}
