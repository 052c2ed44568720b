import { Type, type Static } from 'typebox';
import { DateTimeSchema, Nullable } from './common.js';

const Role = Type.Union([Type.Literal('owner'), Type.Literal('admin'), Type.Literal('viewer'), Type.Literal('manager')], {
  description:
    'owner: everything, members and security settings included; admin: keys, webhooks, actions, alerts, hiding comments; viewer: reads only; manager: reads the Overview, alerts, actions and released comments of its teams only (`teams`), and changes nothing.',
});
const Teams = Type.Array(Type.String({ minLength: 1, maxLength: 128, pattern: '^[A-Za-z0-9._:-]+$' }), {
  maxItems: 100,
  uniqueItems: true,
  description: "A manager's teams (team ids of the organization), 1 to 100; empty for every other role.",
});
const Email = Type.String({ minLength: 3, maxLength: 254, description: "The person's email address." });

export const CreateInvitationBodySchema = Type.Object(
  {
    email: Email,
    role: Role,
    teams: Type.Optional({ ...Teams, description: 'Required for a manager: the teams whose figures they read. Omitted or empty for every other role.' }),
  },
  { additionalProperties: false },
);

export const UpdateMemberBodySchema = Type.Object(
  {
    role: Role,
    teams: Type.Optional({
      ...Teams,
      description: 'For a manager: their teams, which replace the current ones (omitted: a manager keeps theirs). Omitted or empty for every other role.',
    }),
  },
  { additionalProperties: false },
);

export const CreatedInvitationSchema = Type.Object(
  {
    id: Type.String({ minLength: 1, maxLength: 128, description: 'Invitation id (inv_...).' }),
    email: Email,
    role: Role,
    teams: Teams,
    url: Type.String({
      minLength: 1,
      maxLength: 2048,
      description: 'The single-use link that lets the person set a password and sign in. It appears in this answer only.',
    }),
    expiresAt: DateTimeSchema('The link works until this instant (72 hours).'),
  },
  { additionalProperties: false },
);

export const MemberSchema = Type.Object(
  {
    id: Type.String({ minLength: 1, maxLength: 128, description: 'Member id (mem_...).' }),
    email: Email,
    role: Role,
    teams: Teams,
    twoFactor: Type.Boolean({ description: 'Whether the member has enrolled two-factor authentication.' }),
    createdAt: DateTimeSchema('When the member accepted the invitation.'),
    lastSignInAt: Nullable(DateTimeSchema('The last completed sign-in.')),
  },
  { additionalProperties: false },
);

export const MemberListSchema = Type.Object({ items: Type.Array(MemberSchema) }, { additionalProperties: false });

export const InvitationSchema = Type.Object(
  {
    id: Type.String({ minLength: 1, maxLength: 128, description: 'Invitation id (inv_...).' }),
    email: Email,
    role: Role,
    teams: Teams,
    invitedBy: Nullable(
      Type.String({ minLength: 1, maxLength: 128, description: 'The member (mem_...) who made it in the console; null when the operator made it.' }),
    ),
    createdAt: DateTimeSchema('When it was made.'),
    expiresAt: DateTimeSchema('The link works until this instant (72 hours after it was made).'),
  },
  { additionalProperties: false },
);

export const InvitationListSchema = Type.Object({ items: Type.Array(InvitationSchema) }, { additionalProperties: false });

export type CreateInvitationBody = Static<typeof CreateInvitationBodySchema>;
export type UpdateMemberBody = Static<typeof UpdateMemberBodySchema>;
export type CreatedInvitation = Static<typeof CreatedInvitationSchema>;
export type Member = Static<typeof MemberSchema>;
export type MemberList = Static<typeof MemberListSchema>;
export type Invitation = Static<typeof InvitationSchema>;
export type InvitationList = Static<typeof InvitationListSchema>;
