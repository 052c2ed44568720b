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
  disabledReason: Nullable(Type.String({ description: 'Why it is disabled: HTTP 410 Gone, or who disabled it.' })),
  createdAt: DateTimeSchema('When the endpoint was added.'),
  previousSecretExpiresAt: Nullable(
    DateTimeSchema(
      'Until when the secret replaced by the last rotation is still valid: until then every delivery carries a signature under each secret. Null: never rotated (a past time: that overlap is over).',
    ),
  ),
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
    id: Type.String({ description: 'Delivery id (whd_...): one event to one endpoint.' }),
    orgId: Type.Optional(Type.String()),
    eventId: Type.String({ description: 'The event id, sent as webhook-id on every attempt.' }),
    type: Type.String({ description: 'The event type (alert.created, action.created, action.updated, ping).' }),
    endpointId: Type.String(),
    status: Type.String({ description: 'pending (an attempt is due or running), succeeded, or failed (for good, until replayed).' }),
    attempts: CountSchema({ description: 'Attempts made so far.' }),
    lastStatusCode: Nullable(Type.Integer({ description: "The last attempt's HTTP status; null when it got no answer." })),
    lastError: Nullable(Type.String({ description: 'What went wrong with the last failed attempt.' })),
    nextAttemptAt: Type.Optional(
      Nullable(Type.String({ description: 'Pending: when the next attempt is due (while one runs, the end of its lease). Null otherwise.' })),
    ),
    lastAttemptAt: Type.Optional(Nullable(Type.String({ description: 'When the last attempt was made.' }))),
    createdAt: Type.String({ description: 'When the event was written (the time the delivery log shows, and `since` compares).' }),
    completedAt: Type.Optional(Nullable(Type.String({ description: 'When it succeeded or failed for good.' }))),
  },
  { additionalProperties: true },
);
export const DeliveryListSchema = Type.Object({ items: Type.Array(DeliverySchema) }, { additionalProperties: false });
export const ReplayResultSchema = Type.Object(
  { id: Type.String(), eventId: Type.String(), type: Type.String(), url: Type.String() },
  { additionalProperties: false },
);

export const RotatedSecretSchema = Type.Object(
  {
    ...endpointFields,
    secret: Type.String({ description: 'The new whsec_... signing secret; in this answer only. The previous one stays valid until previousSecretExpiresAt.' }),
  },
  { additionalProperties: false },
);

export const ResendFailedBodySchema = Type.Object(
  {
    since: DateTimeSchema("Every failed delivery whose event was written at or after this instant (the delivery log's time) is sent again."),
  },
  { additionalProperties: false },
);

export const ResendFailedResultSchema = Type.Object(
  {
    since: DateTimeSchema('The instant asked, as the API writes it.'),
    resent: CountSchema({ description: 'Failed deliveries made pending again (same webhook-id, a full retry schedule).' }),
    skipped: CountSchema({ description: 'Failed deliveries left as they are because their endpoint is disabled (enable it, then resend).' }),
  },
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
export type RotatedSecret = Static<typeof RotatedSecretSchema>;
export type ResendFailedBody = Static<typeof ResendFailedBodySchema>;
export type ResendFailedResult = Static<typeof ResendFailedResultSchema>;
