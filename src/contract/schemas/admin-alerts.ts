import { Type, type Static } from 'typebox';

export const MarkReadBodySchema = Type.Object(
  { read: Type.Boolean({ description: 'true sets readAt to now (once: again keeps the first time); false clears it.' }) },
  { additionalProperties: false },
);

export const RunAlertsBodySchema = Type.Object(
  {
    weeks: Type.Array(Type.String({ pattern: '^\\d{4}-W\\d{2}$', description: 'An ISO week, like 2026-W47.' }), { minItems: 1, maxItems: 520 }),
    orgId: Type.Optional(Type.String({ minLength: 1, maxLength: 128, description: 'Only this organization (default: every organization with pulses).' })),
  },
  { additionalProperties: false },
);

export const AlertRunSchema = Type.Object(
  {
    weeks: Type.Array(Type.String()),
    organizations: Type.Integer({ minimum: 0 }),
    raised: Type.Array(
      Type.Object(
        {
          orgId: Type.String(),
          id: Type.String(),
          type: Type.String(),
          message: Type.String(),
          weekISO: Type.Union([Type.String(), Type.Null()]),
          subteamName: Type.Union([Type.String(), Type.Null()]),
          readAt: Type.Union([Type.String(), Type.Null()]),
          createdAt: Type.String(),
        },
        { additionalProperties: false },
      ),
    ),
  },
  { additionalProperties: false },
);

export type MarkReadBody = Static<typeof MarkReadBodySchema>;
export type RunAlertsBody = Static<typeof RunAlertsBodySchema>;
export type AlertRun = Static<typeof AlertRunSchema>;
