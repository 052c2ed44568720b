import { updateOrganization, createOrganization, deleteOrganization, listOrganizations, getOrganizationRecord } from '../../domain/orgs.js';
import { operatorActor } from '../../domain/audit.js';
import { updatePlan } from '../../domain/plans.js';
import { requireJsonObject } from '../../http/plugins/index.js';
import { AdminNoQuerySchema, OrgIdParamsSchema, adminResponses } from '../../contract/schemas/admin-common.js';
import {
  AdminOrgSchema,
  CreateOrgBodySchema,
  DeletedOrgSchema,
  DeleteOrgQuerySchema,
  OrgListQuerySchema,
  OrgListSchema,
  PlanParamsSchema,
  PlanSchema,
  PutPlanBodySchema,
  UpdateOrgBodySchema,
} from '../../contract/schemas/admin-orgs.js';
import type { AdminRouteDeps, App } from './types.js';

export function registerOrgRoutes(app: App, { db, now }: AdminRouteDeps) {
  app.post(
    '/organizations',
    {
      preValidation: requireJsonObject,
      schema: {
        operationId: 'createOrganization',
        summary: 'Create an organization',
        description: 'id defaults to org_ + 16 random characters; an id already taken (even by a deleted organization) is 400. plan must name a plan.',
        tags: ['organizations'],
        querystring: AdminNoQuerySchema,
        body: CreateOrgBodySchema,
        response: adminResponses(AdminOrgSchema, 'The organization created.', { status: 201 }),
      },
    },
    async (request, reply) => {
      const org = await createOrganization(db, request.body, operatorActor(request.ip), now());
      reply.code(201);
      return org;
    },
  );

  app.get(
    '/organizations',
    {
      schema: {
        operationId: 'listOrganizations',
        summary: 'Every organization, deleted ones marked',
        description: 'Newest first. `deletedAt` is set on deleted organizations.',
        tags: ['organizations'],
        querystring: OrgListQuerySchema,
        response: adminResponses(OrgListSchema, 'A page of organizations.'),
      },
    },
    async (request) => listOrganizations(db, { limit: request.query.limit ?? 50, cursor: request.query.cursor }),
  );

  app.get(
    '/organizations/:orgId',
    {
      schema: {
        operationId: 'getOrganization',
        summary: 'An organization, deleted ones too',
        tags: ['organizations'],
        querystring: AdminNoQuerySchema,
        params: OrgIdParamsSchema,
        response: adminResponses(AdminOrgSchema, 'The organization; deletedAt is set when it was deleted.'),
      },
    },
    async (request) => getOrganizationRecord(db, request.params.orgId),
  );

  app.patch(
    '/organizations/:orgId',
    {
      preValidation: requireJsonObject,
      schema: {
        operationId: 'updateOrganization',
        summary: "Change an organization's name, plan or member count",
        description: 'A plan change applies to the public API within 5 seconds.',
        tags: ['organizations'],
        querystring: AdminNoQuerySchema,
        params: OrgIdParamsSchema,
        body: UpdateOrgBodySchema,
        response: adminResponses(AdminOrgSchema, 'The organization as changed.'),
      },
    },
    async (request) => updateOrganization(db, request.params.orgId, request.body, operatorActor(request.ip), now()),
  );

  app.delete(
    '/organizations/:orgId',
    {
      schema: {
        operationId: 'deleteOrganization',
        summary: 'Delete an organization (soft), or erase it',
        description:
          'The public API answers 404 org_not_found within 5 seconds. With erase=true every row of the organization, in every table, is removed in one transaction; the organization is then gone (404 here too).',
        tags: ['organizations'],
        querystring: DeleteOrgQuerySchema,
        params: OrgIdParamsSchema,
        response: adminResponses(DeletedOrgSchema, 'The organization as it was deleted.'),
      },
    },
    async (request) => {
      const r = await deleteOrganization(db, request.params.orgId, { erase: request.query.erase === true }, operatorActor(request.ip), now());
      return { organization: r.organization, erased: r.erased };
    },
  );

  app.put(
    '/plans/:name',
    {
      preValidation: requireJsonObject,
      schema: {
        operationId: 'putPlan',
        summary: 'Create or change a plan',
        description: 'Applies to every organization on the plan within 5 seconds.',
        tags: ['plans'],
        querystring: AdminNoQuerySchema,
        params: PlanParamsSchema,
        body: PutPlanBodySchema,
        response: adminResponses(PlanSchema, 'The plan as stored.'),
      },
    },
    async (request) => updatePlan(db, { name: request.params.name, ...request.body }),
  );
}
