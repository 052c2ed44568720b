import { Type, type Static } from 'typebox';
import { DateTimeSchema, Nullable } from './common.js';

export const PulseSchema = Type.Object(
  {
    id: Type.String({ minLength: 1, maxLength: 128 }),
    level: Type.Integer({ format: 'int32', minimum: 1, maximum: 5, description: 'Mood level, 1 (worst) to 5 (best).' }),
    moderationStatus: Type.Union([Type.Literal('CLEAN'), Type.Literal('FLAGGED')]),
    reason: Nullable(Type.String({ maxLength: 500 })),
    subteamId: Nullable(Type.String({ minLength: 1, maxLength: 128 })),
    subteamName: Nullable(Type.String({ minLength: 1, maxLength: 80 })),
    createdAt: DateTimeSchema('When the pulse was recorded (UTC, millisecond precision).'),
  },
  {
    title: 'Pulse',
    additionalProperties: false,
    description: 'One mood record. The comment text is never part of a pulse.',
    examples: [
      {
        id: 'p_1',
        level: 4,
        moderationStatus: 'CLEAN',
        reason: 'workload',
        subteamId: 'team_web',
        subteamName: 'Web',
        createdAt: '2026-11-20T08:15:00.000Z',
      },
    ],
  },
);
export type Pulse = Static<typeof PulseSchema>;

export const PulseListQuerySchema = Type.Object(
  {
    cursor: Type.Optional(
      Type.String({ minLength: 1, maxLength: 512, description: 'The `nextCursor` of the previous page (`createdAt|id` of its last item).' }),
    ),
    from: Type.Optional(DateTimeSchema('Inclusive lower bound on createdAt. Default: `to` minus 30 days.', '2026-10-21T00:00:00.000Z')),
    to: Type.Optional(DateTimeSchema('Exclusive upper bound on createdAt. Default: now.', '2026-11-20T00:00:00.000Z')),
    level: Type.Optional(Type.Integer({ format: 'int32', minimum: 1, maximum: 5, description: 'Only pulses of this level.' })),
    limit: Type.Optional(Type.Integer({ format: 'int32', minimum: 1, maximum: 200, default: 50, description: 'Page size, 1-200.', examples: [50] })),
    subteamId: Type.Optional(Type.String({ minLength: 1, maxLength: 64, description: 'Only pulses of this team.' })),
  },
  { additionalProperties: false },
);
export type PulseListQuery = Static<typeof PulseListQuerySchema>;

export const PulseListSchema = Type.Object(
  {
    items: Type.Array(PulseSchema, { maxItems: 200 }),
    nextCursor: Nullable(Type.String({ maxLength: 512, description: 'Pass as `cursor` to get the next page; null when there are no more pages.' })),
  },
  {
    title: 'PulsePage',
    additionalProperties: false,
    description: 'One page of pulses, newest first. Repeat the same filters with `cursor` for the next page.',
    examples: [
      {
        items: [
          {
            id: 'p_1',
            level: 4,
            moderationStatus: 'CLEAN',
            reason: 'workload',
            subteamId: 'team_web',
            subteamName: 'Web',
            createdAt: '2026-11-20T08:15:00.000Z',
          },
          { id: 'p_0', level: 2, moderationStatus: 'FLAGGED', reason: null, subteamId: null, subteamName: null, createdAt: '2026-11-19T16:40:00.000Z' },
        ],
        nextCursor: '2026-11-19T16:40:00.000Z|p_0',
      },
    ],
  },
);
export type PulseList = Static<typeof PulseListSchema>;
