import { Type, type Static } from 'typebox';
import { DateTimeSchema, Nullable } from './common.js';

/** Single sign-on in the operator API (CONTRACT.md section 11, amended: *Single sign-on*). */

const GroupRoleSchema = Type.Object(
  {
    group: Type.String({ minLength: 1, maxLength: 256, description: 'A value of the groups claim, as the IdP sends it.' }),
    role: Type.Union([Type.Literal('owner'), Type.Literal('admin'), Type.Literal('manager'), Type.Literal('viewer')], {
      description: 'The console role of people in this group (the highest wins when several groups match). manager: once the console has managers.',
    }),
    teams: Type.Array(Type.String({ minLength: 1, maxLength: 128 }), {
      maxItems: 100,
      description: "A manager's teams (team ids); empty for the other roles.",
    }),
  },
  { additionalProperties: false },
);

const DefaultRole = Nullable(
  Type.Union([Type.Literal('admin'), Type.Literal('manager'), Type.Literal('viewer')], {
    description: 'The role of people in none of the mapped groups; null: they are refused.',
  }),
);

export const SsoSettingsSchema = Type.Object(
  {
    kind: Type.Union([Type.Literal('oidc'), Type.Literal('saml')], { description: 'The protocol of the IdP.' }),
    issuer: Nullable(Type.String({ maxLength: 2048, description: 'OpenID Connect: the issuer URL.' })),
    clientId: Nullable(Type.String({ maxLength: 512, description: 'OpenID Connect: the client id registered at the IdP.' })),
    clientSecretSet: Type.Boolean({ description: 'Whether a client secret is stored (sealed). The secret itself is never answered.' }),
    groupsClaim: Type.String({ minLength: 1, maxLength: 200, description: "The ID token claim that lists the person's groups." }),
    groupRoles: Type.Array(GroupRoleSchema, { maxItems: 100 }),
    defaultRole: DefaultRole,
    required: Type.Boolean({ description: 'Enforced SSO: password and two-factor sign-in are off for every member but the break-glass owner.' }),
    breakGlassMemberId: Nullable(Type.String({ maxLength: 128, description: 'The owner (mem_...) who keeps a passkey sign-in when SSO is required.' })),
    sessionMaxHours: Type.Integer({ minimum: 1, maximum: 168, description: 'The longest a console session opened through the IdP lasts.' }),
    redirectUri: Type.String({ description: 'The redirect URI to register at the IdP.' }),
    backchannelLogoutUri: Type.String({ description: 'The back-channel logout URI to register at the IdP.' }),
    updatedAt: DateTimeSchema('The last change.'),
  },
  { additionalProperties: false },
);

export const OidcSettingsBodySchema = Type.Object(
  {
    issuer: Type.String({
      minLength: 1,
      maxLength: 2048,
      description: 'The issuer URL; <issuer>/.well-known/openid-configuration must answer (checked before saving).',
    }),
    clientId: Type.String({ minLength: 1, maxLength: 512 }),
    clientSecret: Type.Optional(
      Type.String({ minLength: 1, maxLength: 1024, description: 'Required the first time, or with another client id; omitted, the stored one is kept.' }),
    ),
    groupsClaim: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: "Default 'groups'." })),
    groupRoles: Type.Optional(Type.Array(GroupRoleSchema, { maxItems: 100, description: 'Omitted: unchanged.' })),
    defaultRole: Type.Optional(DefaultRole),
    sessionMaxHours: Type.Optional(Type.Integer({ minimum: 1, maximum: 168 })),
  },
  { additionalProperties: false },
);

export const SamlSettingsBodySchema = Type.Object(
  {
    metadataXml: Type.Optional(
      Type.String({ minLength: 1, maxLength: 1_000_000, description: "The IdP's metadata XML, pasted. Exactly one of metadataXml and metadataUrl." }),
    ),
    metadataUrl: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 2048,
        description: "Where to fetch the IdP's metadata (https, public addresses only: the webhooks' SSRF guard). Exactly one of metadataXml and metadataUrl.",
      }),
    ),
    emailAttribute: Type.Optional(
      Nullable(Type.String({ maxLength: 512, description: 'The attribute holding the email; null or omitted: the usual ones, then the NameID.' })),
    ),
    groupsAttribute: Type.Optional(
      Nullable(Type.String({ maxLength: 512, description: "The attribute holding the groups; null or omitted: groups, memberOf, then Entra ID's." })),
    ),
    groupRoles: Type.Optional(Type.Array(GroupRoleSchema, { maxItems: 100, description: 'Omitted: unchanged.' })),
    defaultRole: Type.Optional(DefaultRole),
    sessionMaxHours: Type.Optional(Type.Integer({ minimum: 1, maximum: 168 })),
  },
  { additionalProperties: false },
);

export const SsoRequirementBodySchema = Type.Object(
  {
    required: Type.Boolean(),
    breakGlassMemberId: Type.Optional(Nullable(Type.String({ minLength: 1, maxLength: 128, description: 'An owner of the organization (mem_...).' }))),
  },
  { additionalProperties: false },
);

export const SsoDomainSchema = Type.Object(
  {
    domain: Type.String({ minLength: 3, maxLength: 253 }),
    txtRecordName: Type.String({ description: 'The name of the TXT record that proves control of the domain.' }),
    txtRecordValue: Type.String({ description: 'Its value.' }),
    createdAt: DateTimeSchema('When it was added.'),
    verifiedAt: Nullable(DateTimeSchema('When it was verified; null until then. Only verified domains send addresses to the IdP.')),
    verifiedBy: Nullable(
      Type.Union([Type.Literal('dns'), Type.Literal('operator')], { description: 'dns: its TXT record was found; operator: the operator said so.' }),
    ),
  },
  { additionalProperties: false },
);

export const SsoDomainListSchema = Type.Object({ items: Type.Array(SsoDomainSchema) }, { additionalProperties: false });

export const AddSsoDomainBodySchema = Type.Object(
  { domain: Type.String({ minLength: 3, maxLength: 253, description: "A domain like 'example.com'." }) },
  { additionalProperties: false },
);

export const VerifySsoDomainBodySchema = Type.Object(
  {
    method: Type.Union([Type.Literal('dns'), Type.Literal('operator')], {
      description: "dns: look the TXT record up now (400 when it is not there yet); operator: mark it verified on the operator's word.",
    }),
  },
  { additionalProperties: false },
);

export const SsoDomainParamsSchema = Type.Object(
  {
    orgId: Type.String({ minLength: 1, maxLength: 128, description: 'Organization id.' }),
    domain: Type.String({ minLength: 1, maxLength: 253, description: "The domain (one that is not among the organization's is 404)." }),
  },
  { additionalProperties: false },
);

export const SsoRemovedSchema = Type.Object({ removed: Type.Boolean() }, { additionalProperties: false });

export type SsoSettings = Static<typeof SsoSettingsSchema>;
export type SsoDomain = Static<typeof SsoDomainSchema>;
