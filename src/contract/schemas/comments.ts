import { Type, type Static } from 'typebox';
import { Nullable } from './common.js';

const DATE = { format: 'date', minLength: 10, maxLength: 10, examples: ['2026-11-16'] } as const;

export const CommentListQuerySchema = Type.Object(
  {
    cursor: Type.Optional(Type.String({ minLength: 1, maxLength: 512, description: 'Opaque `nextCursor` of the previous page.' })),
    from: Type.Optional(
      Type.String({
        ...DATE,
        description: 'First calendar day (UTC), inclusive. Default: today minus 29 days. The answer covers the whole ISO week of this day.',
      }),
    ),
    to: Type.Optional(
      Type.String({ ...DATE, description: 'Last calendar day (UTC), inclusive. Default: today. The answer covers the whole ISO week of this day.' }),
    ),
    limit: Type.Optional(Type.Integer({ format: 'int32', minimum: 1, maximum: 100, default: 20, description: 'Page size, 1-100.' })),
    subteamId: Type.Optional(Type.String({ minLength: 1, maxLength: 128, description: "Only this team's released cells (never the pooled remainder)." })),
  },
  { additionalProperties: false },
);
export type CommentListQuery = Static<typeof CommentListQuerySchema>;

export const CommentListSchema = Type.Object(
  {
    items: Type.Array(Type.Object({ comment: Type.String({ minLength: 1, maxLength: 10_000 }) }, { title: 'Comment', additionalProperties: false }), {
      maxItems: 100,
      description:
        'Released comments of CLEAN pulses: weeks newest first, and inside a week in the order of a keyed hash of the pulse, which says nothing of time, level or team. No author, time, level or team.',
    }),
    minimumSample: Type.Number({ minimum: 5, maximum: 5, description: 'CLEAN pulses a cell needs before its comments are released: 5.', examples: [5] }),
    from: Type.String({ ...DATE, description: 'The Monday of the first ISO week the answer covers.' }),
    to: Type.String({ ...DATE, examples: ['2026-11-22'], description: 'The Sunday of the last ISO week the answer covers.' }),
    releasedThrough: Nullable(
      Type.String({ ...DATE, examples: ['2026-11-15'], description: 'The Sunday of the last covered week that is released; null when none is yet.' }),
    ),
    nextCursor: Nullable(Type.String({ maxLength: 512, description: 'Opaque; null when there are no more pages.' })),
    suppressed: Type.Boolean({
      description:
        'True when a covered released week holds CLEAN pulses of the requested group that are withheld: a cell or remainder of 1-4 CLEAN pulses, or late pools not yet released (pulses that reached a frozen week later). Computed from pulses, never from whether they carry a comment.',
    }),
  },
  {
    title: 'CommentPage',
    additionalProperties: false,
    examples: [
      {
        items: [{ comment: 'Busy but fine' }],
        minimumSample: 5,
        from: '2026-10-19',
        to: '2026-11-22',
        releasedThrough: '2026-11-15',
        nextCursor: null,
        suppressed: false,
      },
    ],
  },
);
export type CommentList = Static<typeof CommentListSchema>;
