import { Type, type Static } from 'typebox';
import { DateTimeSchema, Nullable } from './common.js';

const Scope = Type.Union([Type.Literal('read_write'), Type.Literal('read')], {
  description: 'read_write (default): GET, POST and PATCH; read: GET only (POST and PATCH are 403 insufficient_scope).',
});
const KeyName = Nullable(Type.String({ minLength: 1, maxLength: 128, description: 'A label for the key.' }));

export const CreateKeyBodySchema = Type.Object(
  {
    name: Type.Optional(KeyName),
    scope: Type.Optional(Scope),
    expiresAt: Type.Optional(Nullable(DateTimeSchema('After this instant the key is refused like a revoked key (401). Must be in the future.'))),
  },
  { additionalProperties: false },
);

const keyFields = {
  id: Type.String({ minLength: 1, maxLength: 128, description: 'Key id (key_...).' }),
  prefix: Type.String({ minLength: 1, maxLength: 32, description: 'The non-secret start of the key, shown in listings.' }),
  name: KeyName,
  scope: Scope,
  createdAt: DateTimeSchema('When the key was created.'),
  expiresAt: Nullable(DateTimeSchema('When the key expires; null: never.')),
};

export const CreatedKeySchema = Type.Object(
  { ...keyFields, key: Type.String({ minLength: 16, maxLength: 256, description: 'The secret. It appears in this answer only: store it now.' }) },
  { additionalProperties: false },
);

export const KeyListingSchema = Type.Object(
  {
    ...keyFields,
    lastUsedAt: Nullable(DateTimeSchema('Last use, recorded within about 5 seconds.')),
    revokedAt: Nullable(DateTimeSchema('When the key was revoked; null while it is not.')),
    createdBy: Nullable(
      Type.String({
        minLength: 1,
        maxLength: 320,
        description:
          "Who made the key: a console member's email, `operator`, or an API key's display prefix; null for keys loaded from a dataset file or made before this was recorded.",
      }),
    ),
  },
  { additionalProperties: false },
);

export const KeyListSchema = Type.Object({ items: Type.Array(KeyListingSchema) }, { additionalProperties: false });

export type CreateKeyBody = Static<typeof CreateKeyBodySchema>;
export type CreatedKey = Static<typeof CreatedKeySchema>;
export type KeyListing = Static<typeof KeyListingSchema>;
export type KeyList = Static<typeof KeyListSchema>;
