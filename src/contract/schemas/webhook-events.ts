import { Type, type Static, type TObject, type TOptional, type TSchema } from 'typebox';
import { ActionSchema } from './actions.js';
import { AlertSchema } from './alerts.js';
import { DateTimeSchema, IdSchema } from './common.js';

/**
 * The body of every webhook delivery, one schema per event type (docs/webhooks.md). The public
 * OpenAPI document's top-level `webhooks` section is built from these (src/public/openapi.ts), so
 * generators give integrators a type per event; `data` is the very schema GET /alerts or GET
 * /actions answers with, so an event never says more than those endpoints do.
 */
const timestamp = DateTimeSchema('When the event happened (UTC, milliseconds). The same on every attempt of one event.');

const event = <T extends string, D extends TSchema, X extends Record<string, TSchema>>(
  type: T,
  data: D,
  extra: X,
  options: { title: string; description: string },
) => Type.Object({ type: Type.Literal(type, { description: 'The event type.' }), timestamp, data, ...extra }, { ...options, additionalProperties: false });

export const AlertCreatedEventSchema = event(
  'alert.created',
  AlertSchema,
  {},
  {
    title: 'AlertCreatedEvent',
    description: 'An alert was raised. `data` is the alert exactly as GET /alerts shows it.',
  },
);

export const ActionCreatedEventSchema = event(
  'action.created',
  ActionSchema,
  {},
  {
    title: 'ActionCreatedEvent',
    description: 'POST /actions created an action. `data` is the action exactly as GET /actions shows it.',
  },
);

/** Fields of an action that never change (its id and when it was made). */
const FIXED = ['$id', 'startDate', 'createdAt'] as const;
type ActionProperties = typeof ActionSchema.properties;
type ChangeProperties = {
  [K in Exclude<keyof ActionProperties, (typeof FIXED)[number]>]: TOptional<TObject<{ from: ActionProperties[K]; to: ActionProperties[K] }>>;
};

/** One entry per field of the action that can change, with the field's own schema before and after. */
const changeProperties = Object.fromEntries(
  Object.entries(ActionSchema.properties)
    .filter(([name]) => !(FIXED as readonly string[]).includes(name))
    .map(([name, schema]) => [
      name,
      Type.Optional(
        Type.Object({ from: schema, to: schema }, { additionalProperties: false, description: `${name} before (from) and after (to) the change.` }),
      ),
    ]),
) as unknown as ChangeProperties;

export const ActionChangesSchema = Type.Object(changeProperties, {
  title: 'ActionChanges',
  additionalProperties: false,
  minProperties: 1,
  description:
    'Each field of the action that changed, by the name GET /actions uses, with its value before (`from`) and after (`to`); a team change lists subteamId and subteamName both. Fields that did not change are absent.',
});
export type ActionChanges = Static<typeof ActionChangesSchema>;

export const ActionUpdatedEventSchema = event(
  'action.updated',
  ActionSchema,
  { changes: ActionChangesSchema },
  {
    title: 'ActionUpdatedEvent',
    description:
      'PATCH /actions/{id} changed what GET /actions shows (a field, the status, a clear with null). `data` is the action after the change; `changes` names what changed.',
  },
);

export const PingEventSchema = event(
  'ping',
  Type.Object({ endpointId: IdSchema({ description: 'The endpoint the test event was sent to (whe_...).' }) }, { additionalProperties: false }),
  {},
  { title: 'PingEvent', description: "A test event, sent on request (the console's Send test event, `climate-pulse webhooks test`), once, never retried." },
);

/** Every event a delivery can carry, by its `type`. */
export const WEBHOOK_EVENT_SCHEMAS = {
  'alert.created': AlertCreatedEventSchema,
  'action.created': ActionCreatedEventSchema,
  'action.updated': ActionUpdatedEventSchema,
  ping: PingEventSchema,
} as const;

export type WebhookEventName = keyof typeof WEBHOOK_EVENT_SCHEMAS;
export type WebhookEventBody<T extends WebhookEventName> = Static<(typeof WEBHOOK_EVENT_SCHEMAS)[T]>;
