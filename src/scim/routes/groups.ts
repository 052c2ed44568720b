import type { FastifyInstance } from 'fastify';
import { allScimGroups, createScimGroup, deleteScimGroup, findScimGroupsBy, getScimGroup, scimGroupsPage, updateScimGroup } from '../../domain/scim-roster.js';
import { applyPatch } from '../patch.js';
import { GROUP_ATTRIBUTES, groupInput, groupResource, URN, type Json } from '../resources.js';
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

const LOOKUPS: Record<string, string> = { displayname: 'displayName', id: 'id' };

/** /Groups: the teams. */
export function registerGroupRoutes(scope: FastifyInstance, deps: ScimDeps) {
  const { db, now, baseUrl } = deps;

  scope.get<{ Querystring: ScimListQuery }>('/Groups', { schema: { hide: true, querystring: ScimListQuerySchema } }, async (request, reply) => {
    const { orgId } = principalOf(request);
    reply.type(SCIM_JSON);
    return listResponse(request.query, {
      maxResults: deps.maxResults,
      core: URN.group,
      lookups: LOOKUPS,
      lookup: (by, value) => findScimGroupsBy(db, orgId, by as 'id' | 'displayName', value),
      all: () => allScimGroups(db, orgId),
      page: (offset, limit) => scimGroupsPage(db, orgId, offset, limit),
      render: (g) => groupResource(g, baseUrl),
    });
  });

  scope.get<{ Params: ScimIdParams; Querystring: ScimResourceQuery }>(
    '/Groups/:id',
    { schema: { hide: true, params: ScimIdParamsSchema, querystring: ScimResourceQuerySchema } },
    async (request, reply) => {
      const { orgId } = principalOf(request);
      return sendResource(request, reply, groupResource(await getScimGroup(db, orgId, request.params.id), baseUrl), URN.group);
    },
  );

  scope.post<{ Body: ScimResourceBody; Querystring: ScimResourceQuery }>(
    '/Groups',
    { schema: { hide: true, body: ScimResourceBodySchema, querystring: ScimResourceQuerySchema } },
    async (request, reply) => {
      const { orgId, actor } = principalOf(request);
      requireSchema(request.body, URN.group);
      const g = await createScimGroup(db, orgId, groupInput(request.body as Json), actor, now());
      const resource = groupResource(g, baseUrl);
      reply.header('location', (resource.meta as { location: string }).location);
      return sendResource(request, reply, resource, URN.group, 201);
    },
  );

  scope.put<{ Params: ScimIdParams; Body: ScimResourceBody; Querystring: ScimResourceQuery }>(
    '/Groups/:id',
    { schema: { hide: true, params: ScimIdParamsSchema, body: ScimResourceBodySchema, querystring: ScimResourceQuerySchema } },
    async (request, reply) => {
      const { orgId, actor } = principalOf(request);
      requireSchema(request.body, URN.group);
      const input = groupInput(request.body as Json);
      const g = await updateScimGroup(db, orgId, request.params.id, () => input, ifMatchOf(request), actor, now());
      return sendResource(request, reply, groupResource(g, baseUrl), URN.group);
    },
  );

  scope.patch<{ Params: ScimIdParams; Body: ScimPatchBody; Querystring: ScimResourceQuery }>(
    '/Groups/:id',
    { schema: { hide: true, params: ScimIdParamsSchema, body: ScimPatchBodySchema, querystring: ScimResourceQuerySchema } },
    async (request, reply) => {
      const { orgId, actor } = principalOf(request);
      requireSchema(request.body, URN.patch);
      const g = await updateScimGroup(
        db,
        orgId,
        request.params.id,
        (cur) => groupInput(applyPatch(groupResource(cur, baseUrl), request.body.Operations, GROUP_ATTRIBUTES, URN.group)),
        ifMatchOf(request),
        actor,
        now(),
      );
      return sendResource(request, reply, groupResource(g, baseUrl), URN.group);
    },
  );

  scope.delete<{ Params: ScimIdParams }>('/Groups/:id', { schema: { hide: true, params: ScimIdParamsSchema } }, async (request, reply) => {
    const { orgId, actor } = principalOf(request);
    await deleteScimGroup(db, orgId, request.params.id, ifMatchOf(request), actor, now());
    return reply.code(204).send();
  });
}
