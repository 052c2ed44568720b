import { Type, type Static } from 'typebox';

/**
 * The shapes of /scim/v2's requests, for Fastify's validation. A SCIM resource may carry any
 * attribute of RFC 7643 (and an identity provider's own extensions): the bodies are objects whose
 * attributes the mapping reads (src/scim/resources.ts) and whose others it ignores.
 */
export const ScimIdParamsSchema = Type.Object(
  { id: Type.String({ minLength: 1, maxLength: 128, description: "The resource's id." }) },
  { additionalProperties: false },
);
export type ScimIdParams = Static<typeof ScimIdParamsSchema>;

export const ScimSchemaIdParamsSchema = Type.Object({ id: Type.String({ minLength: 1, maxLength: 200 }) }, { additionalProperties: false });

export const ScimListQuerySchema = Type.Object(
  {
    filter: Type.Optional(Type.String({ maxLength: 2000, description: 'RFC 7644 section 3.4.2.2: eq, ne, co, sw, ew, pr, gt, ge, lt, le, and, or, not.' })),
    startIndex: Type.Optional(Type.Integer({ description: '1-based index of the first result (below 1 is 1).' })),
    count: Type.Optional(Type.Integer({ description: 'Results per page: 0-1000 (default 100; above 1000 is 1000, below 0 is 0).' })),
    attributes: Type.Optional(Type.String({ maxLength: 2000 })),
    excludedAttributes: Type.Optional(Type.String({ maxLength: 2000 })),
    sortBy: Type.Optional(Type.String({ maxLength: 200, description: 'Not supported: ignored (ServiceProviderConfig says so).' })),
    sortOrder: Type.Optional(Type.String({ maxLength: 20 })),
  },
  { additionalProperties: false },
);
export type ScimListQuery = Static<typeof ScimListQuerySchema>;

export const ScimResourceQuerySchema = Type.Object(
  { attributes: Type.Optional(Type.String({ maxLength: 2000 })), excludedAttributes: Type.Optional(Type.String({ maxLength: 2000 })) },
  { additionalProperties: false },
);
export type ScimResourceQuery = Static<typeof ScimResourceQuerySchema>;

/** A User or Group resource as sent (POST, PUT). */
export const ScimResourceBodySchema = Type.Object(
  { schemas: Type.Optional(Type.Array(Type.String({ maxLength: 200 }), { maxItems: 10 })) },
  { additionalProperties: true },
);
export type ScimResourceBody = Static<typeof ScimResourceBodySchema>;

const PatchOperationSchema = Type.Object(
  {
    op: Type.String({
      pattern: '^([Aa][Dd][Dd]|[Rr][Ee][Mm][Oo][Vv][Ee]|[Rr][Ee][Pp][Ll][Aa][Cc][Ee])$',
      description: 'add, remove or replace, in any case (Entra ID sends Replace).',
    }),
    path: Type.Optional(Type.String({ maxLength: 2000 })),
    value: Type.Optional(Type.Unknown()),
  },
  { additionalProperties: true },
);

export const ScimPatchBodySchema = Type.Object(
  {
    schemas: Type.Array(Type.String({ maxLength: 200 }), { minItems: 1, maxItems: 5 }),
    Operations: Type.Array(PatchOperationSchema, { minItems: 1, maxItems: 1000 }),
  },
  { additionalProperties: true },
);
export type ScimPatchBody = Static<typeof ScimPatchBodySchema>;

export const ScimBulkBodySchema = Type.Object(
  {
    schemas: Type.Array(Type.String({ maxLength: 200 }), { minItems: 1, maxItems: 5 }),
    failOnErrors: Type.Optional(Type.Integer({ minimum: 1 })),
    Operations: Type.Array(
      Type.Object(
        {
          method: Type.String({ pattern: '^([Pp][Oo][Ss][Tt]|[Pp][Uu][Tt]|[Pp][Aa][Tt][Cc][Hh]|[Dd][Ee][Ll][Ee][Tt][Ee])$' }),
          bulkId: Type.Optional(Type.String({ maxLength: 200 })),
          version: Type.Optional(Type.String({ maxLength: 200 })),
          path: Type.String({ minLength: 1, maxLength: 400 }),
          data: Type.Optional(Type.Unknown()),
        },
        { additionalProperties: true },
      ),
      { minItems: 1, maxItems: 1000 },
    ),
  },
  { additionalProperties: true },
);
export type ScimBulkBody = Static<typeof ScimBulkBodySchema>;
