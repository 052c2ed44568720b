import { Type, type Static } from 'typebox';
import { DateTimeSchema, Nullable } from './common.js';

/** A member's passkey as the operator sees it (issue 55, item 6): never its public key or whole credential id. */
export const OperatorPasskeySchema = Type.Object(
  {
    id: Type.String({ minLength: 1, maxLength: 128, description: 'Passkey id (pk_...).' }),
    name: Type.String({ minLength: 1, maxLength: 64, description: "The name the member gave it ('Work laptop')." }),
    createdAt: DateTimeSchema('When the member added it.'),
    lastUsedAt: Nullable(DateTimeSchema('Its last use to sign in; null: never used since it was added.')),
    backedUp: Type.Boolean({ description: 'Whether it is synced (by a password manager or a platform account), as its authenticator says.' }),
    credentialStart: Type.String({
      minLength: 1,
      maxLength: 8,
      description: 'The first 8 characters of its credential id (base64url), to tell passkeys apart; never the whole id.',
    }),
  },
  { additionalProperties: false },
);

export const OperatorPasskeyListSchema = Type.Object({ items: Type.Array(OperatorPasskeySchema) }, { additionalProperties: false });

export const PasskeySettingsSchema = Type.Object(
  {
    required: Type.Boolean({
      description:
        'Passkeys required for owners and admins: their sessions that proved no passkey are held until they use or add one, and a code no longer signs in one who has a passkey.',
    }),
  },
  { additionalProperties: false },
);

export const PasskeySettingsPatchSchema = Type.Object(
  { required: Type.Boolean({ description: 'true: require passkeys for owners and admins; false: stop requiring them.' }) },
  { additionalProperties: false },
);

export type OperatorPasskey = Static<typeof OperatorPasskeySchema>;
export type OperatorPasskeyList = Static<typeof OperatorPasskeyListSchema>;
export type PasskeySettings = Static<typeof PasskeySettingsSchema>;
