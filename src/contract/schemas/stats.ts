import { Type, type Static } from 'typebox';
import { CountSchema, DateTimeSchema, Nullable } from './common.js';

export const StatsSchema = Type.Object(
  {
    avgLevel: Nullable(Type.Number({ description: 'Average level of all pulses, 2 decimals; null without pulses.' })),
    minimumSample: Type.Number({ description: 'Minimum pulse sample for exposing text-derived data.', examples: [5] }),
    pulseCount: CountSchema(),
    weeklyAvgLevel: Nullable(Type.Number({ description: 'Average level over the rolling last 7 days.' })),
    weeklyPulseCount: CountSchema({ description: 'Pulses over the rolling last 7 days.' }),
  },
  {
    title: 'Stats',
    additionalProperties: false,
    examples: [{ avgLevel: 3.62, minimumSample: 5, pulseCount: 1280, weeklyAvgLevel: 3.4, weeklyPulseCount: 75 }],
  },
);
export type Stats = Static<typeof StatsSchema>;

export const DailyStatsQuerySchema = Type.Object(
  {
    from: Type.Optional(DateTimeSchema('Inclusive start. Default: `to` minus 90 days; at most 365 days back.', null)),
    to: Type.Optional(DateTimeSchema('Exclusive end. Default: now.', null)),
  },
  { additionalProperties: false },
);
export type DailyStatsQuery = Static<typeof DailyStatsQuerySchema>;

export const DailyEntrySchema = Type.Object(
  {
    date: Type.String({ format: 'date', maxLength: 10, description: 'UTC calendar day.', examples: ['2026-11-20'] }),
    count: CountSchema(),
    avg: Type.Number({ description: 'Average pulse level of that day, 2 decimals.' }),
  },
  { title: 'DailyStatsDay', additionalProperties: false },
);

export const DailyStatsSchema = Type.Object(
  {
    from: DateTimeSchema('The effective start of the range.'),
    to: DateTimeSchema('The effective end of the range.'),
    days: Type.Array(DailyEntrySchema, { description: 'Ascending by date; only days with at least one pulse.' }),
  },
  {
    title: 'DailyStats',
    additionalProperties: false,
    examples: [
      {
        from: '2026-08-22T12:00:00.000Z',
        to: '2026-11-20T12:00:00.000Z',
        days: [
          { date: '2026-11-18', count: 14, avg: 3.57 },
          { date: '2026-11-19', count: 11, avg: 3.18 },
        ],
      },
    ],
  },
);
export type DailyStats = Static<typeof DailyStatsSchema>;
