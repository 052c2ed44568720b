import { Type, type Static } from 'typebox';
import { CountSchema, DateTimeSchema, Nullable } from './common.js';

const Id = Type.String({ minLength: 1, maxLength: 128 });
const Status = Type.Union([Type.Literal('CLEAN'), Type.Literal('FLAGGED')]);

/** A pulse of the dataset file (CONTRACT.md section 9). */
export const IngestPulseSchema = Type.Object(
  {
    id: Id,
    level: Type.Integer({ minimum: 1, maximum: 5 }),
    reason: Type.Optional(Nullable(Type.String({ maxLength: 500 }))),
    comment: Type.Optional(Nullable(Type.String({ maxLength: 10_000 }))),
    moderationStatus: Status,
    subteamId: Type.Optional(Nullable(Id)),
    createdAt: DateTimeSchema('When the pulse was sent; kept exactly (milliseconds).'),
  },
  { additionalProperties: false },
);

export const IngestBodySchema = Type.Object(
  { pulses: Type.Array(IngestPulseSchema, { minItems: 1, maxItems: 1000, description: '1-1000 pulses, written in one transaction.' }) },
  {
    additionalProperties: false,
    examples: [
      {
        pulses: [
          {
            id: 'p_1',
            level: 4,
            reason: 'workload',
            comment: 'Busy but fine',
            moderationStatus: 'CLEAN',
            subteamId: null,
            createdAt: '2026-11-20T08:15:00.000Z',
          },
        ],
      },
    ],
  },
);

export const IngestResultSchema = Type.Object(
  {
    inserted: CountSchema({ description: 'Pulses written now.' }),
    unchanged: CountSchema({ description: 'Pulses whose id already existed with the same fields (a re-sent batch).' }),
    inFrozenWeeks: CountSchema({ description: 'Inserted pulses of weeks whose comments were already released: their comments are never released.' }),
  },
  { additionalProperties: false },
);

export const ModerateBodySchema = Type.Object({ moderationStatus: Status }, { additionalProperties: false });

export const ModerationResultSchema = Type.Object({ pulseId: Id, previous: Status, current: Status, changed: Type.Boolean() }, { additionalProperties: false });

export const ImportQuerySchema = Type.Object(
  {
    format: Type.Optional(Type.Union([Type.Literal('ndjson'), Type.Literal('csv')], { description: 'Default: by Content-Type.' })),
    onError: Type.Optional(Type.Union([Type.Literal('abort'), Type.Literal('skip')], { description: 'abort (default): any bad row writes nothing.' })),
  },
  { additionalProperties: false },
);

export type IngestPulse = Static<typeof IngestPulseSchema>;
export type IngestBody = Static<typeof IngestBodySchema>;
export type IngestResult = Static<typeof IngestResultSchema>;
export type ModerateBody = Static<typeof ModerateBodySchema>;
export type ModerationResult = Static<typeof ModerationResultSchema>;
export type ImportQuery = Static<typeof ImportQuerySchema>;
