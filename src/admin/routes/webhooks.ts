import {
  createWebhookEndpoint,
  disableOrgEndpoint,
  enableOrgEndpoint,
  endpointById,
  listOrgDeliveries,
  listOrgEndpoints,
  pingOrgEndpoint,
  deleteWebhookEndpoint,
  replayOrgDelivery,
  resendFailedOrgDeliveries,
  rotateOrgEndpointSecret,
} from '../../domain/webhook-endpoints.js';
import { operatorActor } from '../../domain/audit.js';
import { requireJsonObject } from '../../http/plugins/index.js';
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
  ResendFailedBodySchema,
  ResendFailedResultSchema,
  RotatedSecretSchema,
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
      const e = await createWebhookEndpoint(
        db,
        request.params.orgId,
        { url: request.body.url, eventTypes: request.body.eventTypes ?? null, allowPrivate: config.webhookAllowPrivate },
        operatorActor(request.ip),
        now(),
      );
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
    async (request) => deleteWebhookEndpoint(db, request.params.orgId, request.params.endpointId, operatorActor(request.ip), now()),
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
    async (request) => enableOrgEndpoint(db, null, request.params.endpointId, operatorActor(request.ip), now()),
  );

  app.post(
    '/webhook-endpoints/:endpointId/disable',
    {
      schema: {
        operationId: 'disableWebhookEndpoint',
        summary: 'Stop sending to an endpoint',
        description:
          'No new event is written for it, and its pending deliveries fail at once; enable it, then resend them. Disabling a disabled endpoint changes nothing.',
        tags: ['webhooks'],
        querystring: AdminNoQuerySchema,
        params: IdParams('endpointId', 'Endpoint id (whe_...).'),
        response: adminResponses(EndpointSchema, 'The endpoint, disabled.'),
      },
    },
    async (request) => disableOrgEndpoint(db, null, request.params.endpointId, operatorActor(request.ip), now()),
  );

  app.post(
    '/webhook-endpoints/:endpointId/rotate-secret',
    {
      schema: {
        operationId: 'rotateWebhookSecret',
        summary: 'Give an endpoint a new signing secret; the old one stays valid for 24 hours',
        description:
          'The new secret appears in this answer only. Until previousSecretExpiresAt (24 hours from now) every delivery carries two signatures in webhook-signature, one under each secret; after it, only the new one. A secret kept by an earlier rotation ends at once.',
        tags: ['webhooks'],
        querystring: AdminNoQuerySchema,
        params: IdParams('endpointId', 'Endpoint id (whe_...).'),
        response: adminResponses(RotatedSecretSchema, 'The endpoint, with its new secret.'),
      },
    },
    async (request) => rotateOrgEndpointSecret(db, null, request.params.endpointId, operatorActor(request.ip), now()),
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
    async (request) =>
      pingOrgEndpoint(
        db,
        null,
        request.params.endpointId,
        { timeoutMs: config.webhookTimeoutMs, allowPrivate: config.webhookAllowPrivate },
        operatorActor(request.ip),
        now(),
      ),
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
    async (request) => replayOrgDelivery(db, null, request.params.deliveryId, operatorActor(request.ip), now()),
  );

  app.post(
    '/organizations/:orgId/webhook-deliveries/resend-failed',
    {
      preValidation: requireJsonObject,
      schema: {
        operationId: 'resendFailedWebhookDeliveries',
        summary: 'Send again every failed delivery since a time',
        description:
          'Every delivery of the organization that failed for good and whose event was written at or after `since` starts over, as a replay does (same webhook-id, a full retry schedule). Deliveries of a disabled endpoint stay failed and are counted in `skipped`.',
        tags: ['webhooks'],
        querystring: AdminNoQuerySchema,
        params: OrgIdParamsSchema,
        body: ResendFailedBodySchema,
        response: adminResponses(ResendFailedResultSchema, 'How many were sent again.'),
      },
    },
    async (request) => resendFailedOrgDeliveries(db, request.params.orgId, request.body.since, operatorActor(request.ip), now()),
  );
}
