import { Type } from 'typebox';

export const MarkReadBodySchema = Type.Object(
  { read: Type.Boolean({ description: 'true sets readAt to now (once: again keeps the first time); false clears it.' }) },
  { additionalProperties: false },
);
