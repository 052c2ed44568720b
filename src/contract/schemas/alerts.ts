import { Type, type Static } from 'typebox';
import { DateTimeSchema, Nullable } from './common.js';

export const AlertSchema = Type.Object(
  {
    id: Type.String({ minLength: 1, maxLength: 128 }),
    type: Type.String({
      minLength: 1,
      maxLength: 100,
      examples: ['MOOD_DROP'],
      description: 'MOOD_DROP, LOW_MOOD or PARTICIPATION_DROP from the engine; a free string.',
    }),
    message: Type.String({ maxLength: 4000 }),
    weekISO: Nullable(Type.String({ maxLength: 20, description: 'ISO week label.', examples: ['2026-W47'] })),
    subteamName: Nullable(Type.String({ minLength: 1, maxLength: 80 })),
    readAt: Nullable(DateTimeSchema('When the alert was read; null while unread.')),
    createdAt: DateTimeSchema('When the alert was raised.'),
  },
  { title: 'Alert', additionalProperties: false },
);
export type Alert = Static<typeof AlertSchema>;

export const AlertListQuerySchema = Type.Object(
  { limit: Type.Optional(Type.Integer({ format: 'int32', minimum: 1, maximum: 50, default: 10, description: 'How many, 1-50.', examples: [10] })) },
  { additionalProperties: false },
);

export const AlertListSchema = Type.Object(
  { items: Type.Array(AlertSchema, { maxItems: 50, description: 'Newest first.' }) },
  {
    title: 'AlertList',
    additionalProperties: false,
    examples: [
      {
        items: [
          {
            id: 'al_1',
            type: 'MOOD_DROP',
            message: 'Mood in Customer Support fell 25% week over week.',
            weekISO: '2026-W46',
            subteamName: 'Customer Support',
            readAt: null,
            createdAt: '2026-11-17T01:00:00.000Z',
          },
        ],
      },
    ],
  },
);
export type AlertList = Static<typeof AlertListSchema>;
