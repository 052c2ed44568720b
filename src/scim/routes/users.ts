import type { FastifyInstance } from 'fastify';
import {
  allScimUsers,
  createScimUser,
  deleteScimUser,
  findScimUsersBy,
  getScimUser,
  scimTeamFrom,
  scimUsersPage,
  updateScimUser,
} from '../../domain/scim-roster.js';
import { applyPatch } from '../patch.js';
import { URN, USER_ATTRIBUTES, userInput, userResource, type Json } from '../resources.js';
import {
  ScimIdParamsSchema,
  ScimListQuerySchema,
  ScimPatchBodySchema,
  ScimResourceBodySchema,
  ScimResourceQuerySchema,
  type ScimIdParams,
  type ScimListQuery,
  type ScimPatchBody,
  type ScimResourceBody,
  type ScimResourceQuery,
} from '../schemas.js';
import { principalOf } from '../token.js';
import { ifMatchOf, listResponse, requireSchema, SCIM_JSON, sendResource } from './list.js';
import type { ScimDeps } from './types.js';

/** The attributes an `eq` look-up finds by index (lower case) and the look-up it makes. */
const LOOKUPS: Record<string, string> = { username: 'userName', externalid: 'externalId', id: 'id', 'emails.value': 'email', emails: 'email' };

/** /Users: the roster's people (src/domain/scim-roster.ts does the work; this is the mapping of HTTP). */
export function registerUserRoutes(scope: FastifyInstance, deps: ScimDeps) {
  const { db, now, baseUrl } = deps;

  scope.get<{ Querystring: ScimListQuery }>('/Users', { schema: { hide: true, querystring: ScimListQuerySchema } }, async (request, reply) => {
    const { orgId } = principalOf(request);
    const teamFrom = await scimTeamFrom(db, orgId);
    reply.type(SCIM_JSON);
    return listResponse(request.query, {
      maxResults: deps.maxResults,
      core: URN.user,
      lookups: LOOKUPS,
      lookup: (by, value) => findScimUsersBy(db, orgId, by as 'id' | 'userName' | 'externalId' | 'email', value),
      all: () => allScimUsers(db, orgId),
      page: (offset, limit) => scimUsersPage(db, orgId, offset, limit),
      render: (u) => userResource(u, baseUrl, teamFrom),
    });
  });

  scope.get<{ Params: ScimIdParams; Querystring: ScimResourceQuery }>(
    '/Users/:id',
    { schema: { hide: true, params: ScimIdParamsSchema, querystring: ScimResourceQuerySchema } },
    async (request, reply) => {
      const { orgId } = principalOf(request);
      const [u, teamFrom] = await Promise.all([getScimUser(db, orgId, request.params.id), scimTeamFrom(db, orgId)]);
      return sendResource(request, reply, userResource(u, baseUrl, teamFrom), URN.user);
    },
  );

  scope.post<{ Body: ScimResourceBody; Querystring: ScimResourceQuery }>(
    '/Users',
    { schema: { hide: true, body: ScimResourceBodySchema, querystring: ScimResourceQuerySchema } },
    async (request, reply) => {
      const { orgId, actor } = principalOf(request);
      requireSchema(request.body, URN.user);
      const u = await createScimUser(db, orgId, userInput(request.body as Json), actor, now());
      const resource = userResource(u, baseUrl, await scimTeamFrom(db, orgId));
      reply.header('location', (resource.meta as { location: string }).location);
      return sendResource(request, reply, resource, URN.user, 201);
    },
  );

  scope.put<{ Params: ScimIdParams; Body: ScimResourceBody; Querystring: ScimResourceQuery }>(
    '/Users/:id',
    { schema: { hide: true, params: ScimIdParamsSchema, body: ScimResourceBodySchema, querystring: ScimResourceQuerySchema } },
    async (request, reply) => {
      const { orgId, actor } = principalOf(request);
      requireSchema(request.body, URN.user);
      const input = userInput(request.body as Json);
      const u = await updateScimUser(db, orgId, request.params.id, () => input, ifMatchOf(request), actor, now());
      return sendResource(request, reply, userResource(u, baseUrl, await scimTeamFrom(db, orgId)), URN.user);
    },
  );

  scope.patch<{ Params: ScimIdParams; Body: ScimPatchBody; Querystring: ScimResourceQuery }>(
    '/Users/:id',
    { schema: { hide: true, params: ScimIdParamsSchema, body: ScimPatchBodySchema, querystring: ScimResourceQuerySchema } },
    async (request, reply) => {
      const { orgId, actor } = principalOf(request);
      requireSchema(request.body, URN.patch);
      const u = await updateScimUser(
        db,
        orgId,
        request.params.id,
        (cur, teamFrom) => userInput(applyPatch(userResource(cur, baseUrl, teamFrom), request.body.Operations, USER_ATTRIBUTES, URN.user)),
        ifMatchOf(request),
        actor,
        now(),
      );
      return sendResource(request, reply, userResource(u, baseUrl, await scimTeamFrom(db, orgId)), URN.user);
    },
  );

  scope.delete<{ Params: ScimIdParams }>('/Users/:id', { schema: { hide: true, params: ScimIdParamsSchema } }, async (request, reply) => {
    const { orgId, actor } = principalOf(request);
    await deleteScimUser(db, orgId, request.params.id, ifMatchOf(request), actor, now());
    return reply.code(204).send();
  });
}
