import { Type, type Static } from 'typebox';
import { DateTimeSchema, Nullable } from './common.js';

export const ActionStatusSchema = Type.Union([Type.Literal('active'), Type.Literal('done'), Type.Literal('cancelled')], {
  title: 'ActionStatus',
  description: 'active -> done or cancelled; done or cancelled -> active (reopen); done <-> cancelled directly is refused.',
});

const ACTION_EXAMPLE = {
  $id: 'act_7Qm2xV9b',
  title: 'Retro on workload',
  description: 'Every second Friday',
  startDate: '2026-11-21T09:00:00.000Z',
  endDate: null,
  status: 'active',
  subteamId: 'team_web',
  subteamName: 'Web',
  createdAt: '2026-11-21T09:00:00.000Z',
};

export const ActionSchema = Type.Object(
  {
    $id: Type.String({ minLength: 1, maxLength: 128, description: 'The action id (the key is literally `$id`).' }),
    title: Type.String({ minLength: 1, maxLength: 120 }),
    description: Nullable(Type.String({ maxLength: 500 })),
    startDate: DateTimeSchema('When the action started (its creation time when created through the API).'),
    endDate: Nullable(DateTimeSchema('Planned end, if any.')),
    status: ActionStatusSchema,
    subteamId: Nullable(Type.String({ minLength: 1, maxLength: 128 })),
    subteamName: Nullable(Type.String({ minLength: 1, maxLength: 80 })),
    createdAt: DateTimeSchema('When the action was created.'),
  },
  { title: 'Action', additionalProperties: false },
);
export type Action = Static<typeof ActionSchema>;

export const ActionListSchema = Type.Object(
  { items: Type.Array(ActionSchema, { description: 'All actions of the organization, newest first.' }) },
  { title: 'ActionList', additionalProperties: false, examples: [{ items: [ACTION_EXAMPLE] }] },
);
export type ActionList = Static<typeof ActionListSchema>;

export const CreateActionBodySchema = Type.Object(
  {
    title: Type.String({ minLength: 2, maxLength: 120 }),
    description: Type.Optional(Type.String({ maxLength: 500 })),
    endDate: Type.Optional(Type.String({ format: 'date-time', maxLength: 35, description: 'Not before the start (the time of creation).' })),
    subteamId: Type.Optional(Nullable(Type.String({ minLength: 1, maxLength: 64, description: 'A team of the organization.' }))),
  },
  { title: 'NewAction', additionalProperties: false, examples: [{ title: 'Retro on workload', description: 'Monthly', subteamId: 'team_engineering' }] },
);
export type CreateActionBody = Static<typeof CreateActionBodySchema>;

export const UpdateActionBodySchema = Type.Object(
  {
    title: Type.Optional(Type.String({ minLength: 2, maxLength: 120 })),
    description: Type.Optional(Nullable(Type.String({ maxLength: 500, description: 'Up to 500 characters, or null to clear.' }))),
    endDate: Type.Optional(Nullable(Type.String({ format: 'date-time', maxLength: 35, description: "Not before the action's startDate, or null to clear." }))),
    subteamId: Type.Optional(Nullable(Type.String({ minLength: 1, maxLength: 64, description: 'A team of the organization, or null to clear.' }))),
    status: Type.Optional(ActionStatusSchema),
  },
  {
    title: 'ActionChange',
    additionalProperties: false,
    minProperties: 1,
    description: 'At least one field; a field left out keeps its value.',
    examples: [{ status: 'done' }, { description: null, endDate: null }, { title: 'Retro on workload, part 2', subteamId: 'team_engineering' }],
  },
);
export type UpdateActionBody = Static<typeof UpdateActionBodySchema>;

// The examples a request sends name what the demo organization of `npm start` holds (its team
// team_engineering, its active action act_demo_1), so /docs' Try it out works there as filled in.
export const ActionIdParamsSchema = Type.Object({ id: Type.String({ minLength: 1, maxLength: 128, examples: ['act_demo_1'] }) });

export const ActionIdSchema = Type.Object(
  { id: Type.String({ minLength: 1, maxLength: 128 }) },
  { title: 'ActionId', additionalProperties: false, examples: [{ id: 'act_7Qm2xV9b' }] },
);
