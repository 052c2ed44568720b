import { Type, type Static } from 'typebox';
import { CountSchema, DateTimeSchema, Nullable } from './common.js';

const EventType = Type.Union([Type.Literal('alert.created'), Type.Literal('action.created'), Type.Literal('action.updated')]);

export const CreateEndpointBodySchema = Type.Object(
  {
    url: Type.String({ minLength: 1, maxLength: 2048, description: 'https:// URL that receives signed events.' }),
    eventTypes: Type.Optional(Nullable(Type.Array(EventType, { minItems: 1, uniqueItems: true, description: 'Default (null): every event type.' }))),
  },
  { additionalProperties: false },
);

const endpointFields = {
  id: Type.String({ minLength: 1, maxLength: 128 }),
  orgId: Type.String({ minLength: 1, maxLength: 128 }),
  url: Type.String({ minLength: 1, maxLength: 2048 }),
  eventTypes: Type.Array(EventType),
  enabled: Type.Boolean(),
  disabledReason: Nullable(Type.String()),
  createdAt: DateTimeSchema('When the endpoint was added.'),
};

export const EndpointSchema = Type.Object(endpointFields, { additionalProperties: false });
export const CreatedEndpointSchema = Type.Object(
  { ...endpointFields, secret: Type.String({ description: 'whsec_... signing secret; in this answer only.' }) },
  { additionalProperties: false },
);
export const EndpointListSchema = Type.Object({ items: Type.Array(EndpointSchema) }, { additionalProperties: false });

export const RemovedSchema = Type.Object({ id: Type.String(), removed: Type.Boolean() }, { additionalProperties: false });

export const PingResultSchema = Type.Object(
  {
    eventId: Type.String(),
    deliveryId: Type.String(),
    outcome: Type.String({ description: 'succeeded, failed or endpoint_disabled.' }),
    result: Type.String({ description: 'HTTP status or the error of the attempt.' }),
  },
  { additionalProperties: false },
);

export const DeliveryQuerySchema = Type.Object(
  {
    failed: Type.Optional(Type.Boolean({ description: 'Only deliveries that failed for good.' })),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000, description: 'At most this many (default 50).' })),
  },
  { additionalProperties: false },
);

export const DeliverySchema = Type.Object(
  {
    id: Type.String(),
    orgId: Type.Optional(Type.String()),
    eventId: Type.String(),
    type: Type.String(),
    endpointId: Type.String(),
    status: Type.String(),
    attempts: CountSchema(),
    lastStatusCode: Nullable(Type.Integer()),
    lastError: Nullable(Type.String()),
    nextAttemptAt: Type.Optional(Nullable(Type.String())),
    lastAttemptAt: Type.Optional(Nullable(Type.String())),
    createdAt: Type.String(),
    completedAt: Type.Optional(Nullable(Type.String())),
  },
  { additionalProperties: true },
);
export const DeliveryListSchema = Type.Object({ items: Type.Array(DeliverySchema) }, { additionalProperties: false });
export const ReplayResultSchema = Type.Object(
  { id: Type.String(), eventId: Type.String(), type: Type.String(), url: Type.String() },
  { additionalProperties: false },
);

export type CreateEndpointBody = Static<typeof CreateEndpointBodySchema>;
export type Endpoint = Static<typeof EndpointSchema>;
export type CreatedEndpoint = Static<typeof CreatedEndpointSchema>;
export type EndpointList = Static<typeof EndpointListSchema>;
export type Removed = Static<typeof RemovedSchema>;
export type PingResult = Static<typeof PingResultSchema>;
export type DeliveryQuery = Static<typeof DeliveryQuerySchema>;
export type Delivery = Static<typeof DeliverySchema>;
export type DeliveryList = Static<typeof DeliveryListSchema>;
export type ReplayResult = Static<typeof ReplayResultSchema>;
