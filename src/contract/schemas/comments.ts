import { Type, type Static } from 'typebox';
import { Nullable } from './common.js';

export const CommentListQuerySchema = Type.Object(
  {
    cursor: Type.Optional(Type.String({ minLength: 1, maxLength: 512, description: 'Opaque `nextCursor` of the previous page.' })),
    from: Type.Optional(Type.String({ format: 'date', description: 'First calendar day (UTC), inclusive. Default: today minus 29 days.' })),
    to: Type.Optional(Type.String({ format: 'date', description: 'Last calendar day (UTC), inclusive. Default: today.' })),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 20, description: 'Page size, 1-100.' })),
    subteamId: Type.Optional(Type.String({ minLength: 1, maxLength: 128, description: 'Only comments of this team.' })),
  },
  { additionalProperties: false },
);
export type CommentListQuery = Static<typeof CommentListQuerySchema>;

export const CommentListSchema = Type.Object(
  {
    items: Type.Array(
      Type.Object({ comment: Type.String({ minLength: 1 }) }, { additionalProperties: false }),
      { description: 'Comments of CLEAN pulses, newest first. No author, time, level or team.' },
    ),
    minimumSample: Type.Number({ description: 'Pulses needed in the range before any comment is shown.', examples: [5] }),
    nextCursor: Nullable(Type.String({ maxLength: 512, description: 'Opaque; null when there are no more pages.' })),
    suppressed: Type.Boolean({
      description: 'True when the range and team hold fewer pulses than `minimumSample`; then `items` is empty.',
    }),
  },
  {
    additionalProperties: false,
    examples: [{ items: [{ comment: 'Busy but fine' }], minimumSample: 5, nextCursor: null, suppressed: false }],
  },
);
export type CommentList = Static<typeof CommentListSchema>;
