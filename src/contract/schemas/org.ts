import { Type, type Static } from 'typebox';
import { DateTimeSchema } from './common.js';

export const OrgSchema = Type.Object(
  {
    id: Type.String({ minLength: 1, maxLength: 128 }),
    name: Type.String({ minLength: 1, maxLength: 256 }),
    memberCount: Type.Integer({ format: 'int32', minimum: 0, maximum: 2_147_483_647 }),
    createdAt: DateTimeSchema('When the organization was created.'),
  },
  {
    title: 'Organization',
    additionalProperties: false,
    examples: [{ id: 'org_acme', name: 'Acme', memberCount: 42, createdAt: '2026-01-05T09:00:00.000Z' }],
  },
);
export type Org = Static<typeof OrgSchema>;
