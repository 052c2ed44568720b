import { Type, type Static } from 'typebox';
import { DateTimeSchema, Nullable, OrgIdSchema } from './common.js';

const Name = Type.String({ minLength: 1, maxLength: 256, description: 'Display name, 1-256 characters.' });
const PlanName = Type.String({
  minLength: 1,
  maxLength: 64,
  description: 'Name of a plan (free, business, enterprise or one set with PUT /admin/v1/plans/{name}).',
});
const MemberCount = Type.Integer({ format: 'int32', minimum: 0, maximum: 2_147_483_647, description: 'Members of the organization.' });

export const AdminOrgSchema = Type.Object(
  {
    id: Type.String({ minLength: 1, maxLength: 128 }),
    name: Name,
    plan: PlanName,
    memberCount: MemberCount,
    createdAt: DateTimeSchema('When the organization was created.'),
    deletedAt: Nullable(DateTimeSchema('When the organization was deleted; null while it is live.')),
  },
  {
    additionalProperties: false,
    examples: [{ id: 'org_acme', name: 'Acme', plan: 'business', memberCount: 42, createdAt: '2026-01-05T09:00:00.000Z', deletedAt: null }],
  },
);
export type AdminOrg = Static<typeof AdminOrgSchema>;

export const CreateOrgBodySchema = Type.Object(
  {
    id: Type.Optional(OrgIdSchema({ description: '1-128 of A-Z a-z 0-9 . _ : -, not `.` or `..`. Default: org_ + 16 random base62 characters.' })),
    name: Name,
    plan: PlanName,
    memberCount: Type.Optional(MemberCount),
  },
  { additionalProperties: false },
);
export type CreateOrgBody = Static<typeof CreateOrgBodySchema>;

export const UpdateOrgBodySchema = Type.Object(
  { name: Type.Optional(Name), plan: Type.Optional(PlanName), memberCount: Type.Optional(MemberCount) },
  { additionalProperties: false, minProperties: 1 },
);
export type UpdateOrgBody = Static<typeof UpdateOrgBodySchema>;

export const DeleteOrgQuerySchema = Type.Object(
  { erase: Type.Optional(Type.Boolean({ description: 'Also remove every row of the organization, in one transaction.' })) },
  { additionalProperties: false },
);

export const DeletedOrgSchema = Type.Object(
  {
    organization: AdminOrgSchema,
    erased: Type.Boolean({ description: 'True when every row of the organization was removed.' }),
  },
  { additionalProperties: false },
);

export const PlanParamsSchema = Type.Object(
  { name: Type.String({ minLength: 1, maxLength: 64, pattern: '^[A-Za-z0-9._-]+$', description: 'Plan name.' }) },
  { additionalProperties: false },
);

export const PutPlanBodySchema = Type.Object(
  {
    restApi: Type.Boolean({ description: 'Whether the plan includes the REST API (else 403 plan_forbidden).' }),
    rateLimitPerMinute: Type.Integer({ format: 'int32', minimum: 1, maximum: 2_147_483_647, description: 'Requests per minute per key.' }),
  },
  { additionalProperties: false },
);

export const PlanSchema = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 64 }),
    restApi: Type.Boolean(),
    rateLimitPerMinute: Type.Integer({ format: 'int32', minimum: 1 }),
    created: Type.Boolean({ description: 'True when this request created the plan.' }),
  },
  { additionalProperties: false },
);

export type DeleteOrgQuery = Static<typeof DeleteOrgQuerySchema>;
export type DeletedOrg = Static<typeof DeletedOrgSchema>;
export type PlanParams = Static<typeof PlanParamsSchema>;
export type PutPlanBody = Static<typeof PutPlanBodySchema>;
export type Plan = Static<typeof PlanSchema>;

export const OrgListQuerySchema = Type.Object(
  {
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 50, description: 'Items per page, 1-100 (default 50).' })),
    cursor: Type.Optional(Type.String({ minLength: 1, maxLength: 512, description: 'The `nextCursor` of the previous page.' })),
  },
  { additionalProperties: false },
);
export const OrgListSchema = Type.Object(
  {
    items: Type.Array(AdminOrgSchema),
    nextCursor: Nullable(Type.String({ description: 'Pass as `cursor` for the next page; null on the last page.' })),
  },
  { additionalProperties: false },
);
export type OrgListQuery = Static<typeof OrgListQuerySchema>;
export type OrgList = Static<typeof OrgListSchema>;
