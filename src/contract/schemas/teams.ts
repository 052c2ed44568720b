import { Type, type Static } from 'typebox';
import { DateTimeSchema } from './common.js';

export const TeamSchema = Type.Object(
  {
    id: Type.String({ minLength: 1, maxLength: 128 }),
    name: Type.String({ minLength: 1, maxLength: 80 }),
    createdAt: DateTimeSchema('When the team was created.'),
  },
  { title: 'Team', additionalProperties: false, examples: [{ id: 'team_web', name: 'Web', createdAt: '2026-01-05T09:00:00.000Z' }] },
);
export type Team = Static<typeof TeamSchema>;

export const TeamListSchema = Type.Object(
  { items: Type.Array(TeamSchema, { description: 'Ordered by name (case-insensitive), then id.' }) },
  {
    title: 'TeamList',
    additionalProperties: false,
    examples: [
      {
        items: [
          { id: 'team_support', name: 'Customer Support', createdAt: '2026-01-05T09:00:00.000Z' },
          { id: 'team_web', name: 'Web', createdAt: '2026-01-05T09:00:00.000Z' },
        ],
      },
    ],
  },
);
export type TeamList = Static<typeof TeamListSchema>;

export const CreateTeamBodySchema = Type.Object(
  {
    name: Type.String({
      minLength: 1,
      // The bound of the text as sent; the 1-80 rule applies after trimming (domain/teams.ts).
      maxLength: 256,
      pattern: '\\S',
      description: 'Trimmed; 1-80 characters after trimming (at most 256 as sent), not only whitespace; unique in the organization regardless of case.',
    }),
  },
  { title: 'NewTeam', additionalProperties: false, examples: [{ name: 'Platform' }] },
);
export type CreateTeamBody = Static<typeof CreateTeamBodySchema>;

export const CreatedTeamSchema = Type.Object(
  { id: Type.String({ minLength: 1, maxLength: 128 }), name: Type.String({ minLength: 1, maxLength: 80 }) },
  { title: 'CreatedTeam', additionalProperties: false, examples: [{ id: 'team_3fZ8kq1', name: 'Platform' }] },
);
