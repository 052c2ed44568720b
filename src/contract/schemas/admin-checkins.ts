import { Type, type Static } from 'typebox';
import { DateTimeSchema, Nullable } from './common.js';

/** The operator API's check-in shapes (CONTRACT.md section 12): the roster, the round's settings, the week's links, participation. */
const Email = Type.String({ minLength: 3, maxLength: 254, description: "The respondent's email address (where the week's link goes)." });
const TeamName = Nullable(
  Type.String({ minLength: 0, maxLength: 80, description: 'Team name; a team of that name is made when the organization has none. Null or empty: no team.' }),
);

export const RespondentSchema = Type.Object(
  {
    id: Type.String({ minLength: 1, maxLength: 128, description: 'Respondent id (rsp_...).' }),
    email: Email,
    teamId: Nullable(Type.String({ minLength: 1, maxLength: 128, description: 'Team id, or null.' })),
    teamName: Nullable(Type.String({ minLength: 1, maxLength: 80, description: 'Team name, or null.' })),
    answersWithTeam: Type.Boolean({
      description: 'False when the team has fewer than 5 respondents on the roster: then the answer carries no team (CONTRACT.md section 12).',
    }),
    createdAt: DateTimeSchema('When the respondent joined the roster.'),
  },
  { additionalProperties: false },
);

export const RosterSchema = Type.Object(
  {
    items: Type.Array(RespondentSchema),
    teams: Type.Array(
      Type.Object(
        {
          id: Type.String({ minLength: 1, maxLength: 128 }),
          name: Type.String({ minLength: 1, maxLength: 80 }),
          respondents: Type.Integer({ minimum: 1 }),
          answersAsTeam: Type.Boolean({ description: 'At least 5 respondents: its answers carry the team.' }),
        },
        { additionalProperties: false },
      ),
    ),
  },
  { additionalProperties: false, examples: [{ items: [], teams: [] }] },
);

export const AddRespondentBodySchema = Type.Object({ email: Email, team: Type.Optional(TeamName) }, { additionalProperties: false });
export const MoveRespondentBodySchema = Type.Object({ team: TeamName }, { additionalProperties: false });
export const RespondentIdSchema = Type.Object(
  { id: Type.String({ minLength: 1, maxLength: 128, description: 'Respondent id.' }) },
  { additionalProperties: false },
);

export const ReplaceRosterBodySchema = Type.Object(
  {
    csv: Type.String({
      minLength: 0,
      maxLength: 4_000_000,
      description:
        'The whole roster as CSV: a header row whose email and team columns are found by name (email, e-mail, mail; team, department, group), other columns ignored; or `email,team` per line without a header. Checked whole before anything changes; every bad line is named (`Line 3: ...`), up to 500.',
    }),
    emailColumn: Type.Optional(
      Type.String({ minLength: 1, maxLength: 200, description: "The header's name of the email column, when the file's header does not say it plainly." }),
    ),
    teamColumn: Type.Optional(
      Type.String({ minLength: 0, maxLength: 200, description: "The header's name of the team column; '' for none (everyone without a team)." }),
    ),
  },
  { additionalProperties: false },
);
export const RosterReplacedSchema = Type.Object(
  { added: Type.Integer({ minimum: 0 }), removed: Type.Integer({ minimum: 0 }), moved: Type.Integer({ minimum: 0 }), unchanged: Type.Integer({ minimum: 0 }) },
  { additionalProperties: false },
);

export const CheckinSettingsSchema = Type.Object(
  {
    weekday: Type.Integer({ minimum: 1, maximum: 7, description: 'ISO weekday of the round: 1 Monday .. 7 Sunday.' }),
    hour: Type.Integer({ minimum: 0, maximum: 23, description: 'Hour of the round in timeZone.' }),
    timeZone: Type.String({ minLength: 1, maxLength: 64, description: 'IANA time zone, such as Europe/Paris.' }),
    reminderWeekday: Nullable(
      Type.Integer({ minimum: 1, maximum: 7, description: 'A later weekday for the reminder to those who have not opened their link; null: none.' }),
    ),
    reasons: Type.Array(Type.String({ minLength: 1, maxLength: 60 }), { maxItems: 20, description: 'Reasons offered on the page.' }),
    flagWords: Type.Array(Type.String({ minLength: 1, maxLength: 60 }), {
      maxItems: 500,
      description: 'An answer whose comment holds one of these words arrives FLAGGED.',
    }),
  },
  { additionalProperties: false },
);
export const CheckinSettingsPatchSchema = Type.Partial(CheckinSettingsSchema, { additionalProperties: false });

export const WeekLinksQuerySchema = Type.Object(
  {
    renew: Type.Optional(
      Type.Boolean({
        description:
          "true: when this week's links were handed out already, make a new link for everyone of the round (the earlier links keep working). Without it such a call is refused with 409, saying what it would do.",
      }),
    ),
  },
  { additionalProperties: false },
);

export const WeekLinksSchema = Type.Object(
  {
    week: Type.String({ format: 'date', description: "Monday of the round's ISO week." }),
    renewed: Type.Boolean({ description: 'true: new links for everyone of the round; the links of an earlier file keep working.' }),
    links: Type.Array(
      Type.Object(
        {
          email: Email,
          team: Nullable(Type.String({ maxLength: 80 })),
          link: Type.String({ minLength: 1, maxLength: 2048, description: 'The personal link; it appears in this answer only.' }),
        },
        { additionalProperties: false },
      ),
      {
        description:
          'The first file of the week: the link the round made for each of its people. A later one (renew): a new link for each; no link is ever voided, and each key takes no more answers than the people it was made for.',
      },
    ),
  },
  { additionalProperties: false },
);

export const ResentLinkSchema = Type.Object(
  {
    week: Type.String({ format: 'date', description: "Monday of the round's ISO week." }),
    link: Nullable(
      Type.String({ minLength: 1, maxLength: 2048, description: 'Without SMTP_URL: the new link, in this answer only. With it: null, the link goes by mail.' }),
    ),
  },
  { additionalProperties: false },
);

export const ParticipationSchema = Type.Object(
  {
    items: Type.Array(
      Type.Object(
        {
          week: Type.String({ format: 'date' }),
          teamId: Nullable(Type.String({ maxLength: 128 })),
          teamName: Nullable(Type.String({ maxLength: 80 })),
          invited: Nullable(Type.Integer({ minimum: 5, description: 'Null: fewer than 5.' })),
          opened: Nullable(Type.Integer({ minimum: 5, description: 'Null: fewer than 5.' })),
          answered: Nullable(Type.Integer({ minimum: 5, description: 'Null: fewer than 5.' })),
        },
        { additionalProperties: false },
      ),
    ),
  },
  { additionalProperties: false },
);

const Instant = (description: string) => Type.String({ format: 'date-time', description });

export const RoundSentSchema = Type.Object(
  {
    week: Type.String({ format: 'date', description: "Monday of the round's ISO week." }),
    people: Type.Integer({ minimum: 1, description: 'The people of the round: each gets a mail within a minute.' }),
  },
  { additionalProperties: false },
);

export const RoundStatusesSchema = Type.Object(
  {
    thisWeek: Type.Object(
      {
        week: Type.String({ format: 'date', description: 'Monday of this ISO week.' }),
        startedAt: Nullable(Instant("When this week's round started; null: not yet.")),
        people: Type.Integer({ minimum: 0, description: 'The people on the roster now: whom a round started now would mail.' }),
        scheduledAt: Instant("When the schedule starts this week's round."),
        reminderAt: Nullable(Instant('The reminder a round started now would send; null: none, or its time has passed.')),
      },
      { additionalProperties: false },
    ),
    items: Type.Array(
      Type.Object(
        {
          week: Type.String({ format: 'date' }),
          startedAt: Instant('When the round started.'),
          delivery: Nullable(
            Type.Union([Type.Literal('mail'), Type.Literal('file')], {
              description: 'mail: the round mails its links; file: handed out as a links file (no SMTP); null: started before rounds were counted.',
            }),
          ),
          people: Type.Integer({ minimum: 0, description: 'The people of the round.' }),
          mailed: Nullable(Type.Integer({ minimum: 0, description: 'First and re-sent links the relay took; null: not counted.' })),
          waiting: Type.Integer({ minimum: 0, description: 'Mails with a link waiting for the relay.' }),
          failed: Type.Integer({ minimum: 0, description: 'Mails the relay refused at their last try; tried again until the links close.' }),
          reminded: Nullable(Type.Integer({ minimum: 0, description: 'Reminders the relay took; null: not counted.' })),
          remindersWaiting: Type.Integer({ minimum: 0 }),
          reminderDue: Nullable(Instant('When the waiting reminders are due.')),
          lastError: Nullable(Type.String({ maxLength: 500, description: "The relay's last refusal, any address in it replaced by [address]." })),
          lastErrorAt: Nullable(Instant('When the relay last refused a mail of the round.')),
          closesAt: Instant("When the round's links close."),
          open: Type.Boolean({ description: 'Whether its links still work.' }),
        },
        { additionalProperties: false },
      ),
      { description: 'The rounds of the last 8 weeks, newest first; every count is per round, never per person.' },
    ),
  },
  { additionalProperties: false },
);

export type CheckinSettingsPatch = Static<typeof CheckinSettingsPatchSchema>;
