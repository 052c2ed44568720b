import {
  addOrgEndpoint,
  endpointById,
  enableEndpointById,
  listOrgDeliveries,
  listOrgEndpoints,
  pingEndpoint,
  removeOrgEndpoint,
  replayDeliveryById,
} from '../../domain/webhook-endpoints.js';
import { operatorActor } from '../../domain/audit.js';
import { requireJsonObject } from '../../http/plugins/writes.js';
import { Type } from 'typebox';
import { AdminNoQuerySchema, OrgIdParamsSchema, OrgItemParamsSchema, adminResponses } from '../../contract/schemas/admin-common.js';
import {
  CreatedEndpointSchema,
  CreateEndpointBodySchema,
  DeliveryListSchema,
  DeliveryQuerySchema,
  EndpointListSchema,
  EndpointSchema,
  PingResultSchema,
  ReplayResultSchema,
} from '../../contract/schemas/admin-webhooks.js';
import type { AdminRouteDeps, App } from './types.js';

const IdParams = (name: string, description: string) =>
  Type.Object({ [name]: Type.String({ minLength: 1, maxLength: 128, description }) }, { additionalProperties: false });

export function registerWebhookRoutes(app: App, { db, now, config }: AdminRouteDeps) {
  app.get(
    '/organizations/:orgId/webhook-endpoints',
    {
      schema: {
        operationId: 'listWebhookEndpoints',
        summary: "The organization's webhook endpoints, never their secrets",
        tags: ['webhooks'],
        querystring: AdminNoQuerySchema,
        params: OrgIdParamsSchema,
        response: adminResponses(EndpointListSchema, 'Every endpoint, oldest first.'),
      },
    },
    async (request) => ({ items: await listOrgEndpoints(db, request.params.orgId) }),
  );

  app.post(
    '/organizations/:orgId/webhook-endpoints',
    {
      preValidation: requireJsonObject,
      schema: {
        operationId: 'createWebhookEndpoint',
        summary: 'Add a webhook endpoint',
        description: 'The signing secret appears in this answer only.',
        tags: ['webhooks'],
        querystring: AdminNoQuerySchema,
        params: OrgIdParamsSchema,
        body: CreateEndpointBodySchema,
        response: adminResponses(CreatedEndpointSchema, 'The endpoint, with its secret.', { status: 201 }),
      },
    },
    async (request, reply) => {
      const e = await addOrgEndpoint(db, request.params.orgId, { url: request.body.url, eventTypes: request.body.eventTypes ?? null, allowPrivate: config.webhookAllowPrivate }, operatorActor(request.ip), now());
      reply.code(201);
      return e;
    },
  );

  app.delete(
    '/organizations/:orgId/webhook-endpoints/:endpointId',
    {
      schema: {
        operationId: 'deleteWebhookEndpoint',
        summary: 'Remove a webhook endpoint and its deliveries',
        tags: ['webhooks'],
        querystring: AdminNoQuerySchema,
        params: OrgItemParamsSchema('endpointId', 'Endpoint id (whe_...).'),
        response: adminResponses(EndpointSchema, 'The endpoint removed.'),
      },
    },
    async (request) => removeOrgEndpoint(db, request.params.orgId, request.params.endpointId, operatorActor(request.ip), now()),
  );

  app.get(
    '/organizations/:orgId/webhook-deliveries',
    {
      schema: {
        operationId: 'listWebhookDeliveries',
        summary: "The organization's deliveries, newest first",
        tags: ['webhooks'],
        querystring: DeliveryQuerySchema,
        params: OrgIdParamsSchema,
        response: adminResponses(DeliveryListSchema, 'Deliveries, newest first.'),
      },
    },
    async (request) => ({ items: await listOrgDeliveries(db, request.params.orgId, request.query) }),
  );

  // Operator commands name an endpoint or a delivery by its id alone (`webhooks enable|test|remove ID`).
  app.get(
    '/webhook-endpoints/:endpointId',
    {
      schema: {
        operationId: 'getWebhookEndpoint',
        summary: 'A webhook endpoint by its id, with its organization',
        tags: ['webhooks'],
        querystring: AdminNoQuerySchema,
        params: IdParams('endpointId', 'Endpoint id (whe_...).'),
        response: adminResponses(EndpointSchema, 'The endpoint.'),
      },
    },
    async (request) => endpointById(db, request.params.endpointId),
  );

  app.post(
    '/webhook-endpoints/:endpointId/enable',
    {
      schema: {
        operationId: 'enableWebhookEndpoint',
        summary: 'Enable an endpoint that was disabled (after it answered 410)',
        tags: ['webhooks'],
        querystring: AdminNoQuerySchema,
        params: IdParams('endpointId', 'Endpoint id (whe_...).'),
        response: adminResponses(EndpointSchema, 'The endpoint, enabled.'),
      },
    },
    async (request) => enableEndpointById(db, request.params.endpointId, operatorActor(request.ip), now()),
  );

  app.post(
    '/webhook-endpoints/:endpointId/test',
    {
      schema: {
        operationId: 'testWebhookEndpoint',
        summary: 'Send a signed ping to an endpoint now, once',
        tags: ['webhooks'],
        querystring: AdminNoQuerySchema,
        params: IdParams('endpointId', 'Endpoint id (whe_...).'),
        response: adminResponses(Type.Object({ ...PingResultSchema.properties, url: Type.String() }, { additionalProperties: false }), 'What the attempt did.'),
      },
    },
    async (request) => pingEndpoint(db, request.params.endpointId, { timeoutMs: config.webhookTimeoutMs, allowPrivate: config.webhookAllowPrivate }, operatorActor(request.ip), now()),
  );

  app.post(
    '/webhook-deliveries/:deliveryId/replay',
    {
      schema: {
        operationId: 'replayWebhookDelivery',
        summary: 'Send a failed delivery again (same webhook-id, full retry schedule)',
        tags: ['webhooks'],
        querystring: AdminNoQuerySchema,
        params: IdParams('deliveryId', 'Delivery id (whd_...).'),
        response: adminResponses(ReplayResultSchema, 'The delivery, pending again.'),
      },
    },
    async (request) => replayDeliveryById(db, request.params.deliveryId, operatorActor(request.ip), now()),
  );
}
