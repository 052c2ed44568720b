import { operatorActor } from '../../domain/audit.js';
import { createRespondent, listRoster, moveRespondent, deleteRespondent, replaceRoster } from '../../domain/checkins/roster.js';
import { getCheckinSettings, updateCheckinSettings } from '../../domain/checkins/settings.js';
import { exportWeekLinks, participation, resendCheckinLink, roundNowState, startRoundNow } from '../../domain/checkins/rounds.js';
import { roundStatuses } from '../../domain/checkins/round-status.js';
import { requireLiveOrg } from '../../domain/orgs.js';
import { requireJsonObject } from '../../http/plugins/index.js';
import { AdminNoQuerySchema, OrgIdParamsSchema, OrgItemParamsSchema, adminResponses } from '../../contract/schemas/admin-common.js';
import {
  AddRespondentBodySchema,
  CheckinSettingsPatchSchema,
  CheckinSettingsSchema,
  MoveRespondentBodySchema,
  ParticipationSchema,
  ReplaceRosterBodySchema,
  RespondentIdSchema,
  RosterReplacedSchema,
  ResentLinkSchema,
  RosterSchema,
  RoundSentSchema,
  RoundStatusesSchema,
  WeekLinksQuerySchema,
  WeekLinksSchema,
} from '../../contract/schemas/admin-checkins.js';
import { checkinLink } from '../../jobs/rounds.js';
import { consoleBaseUrl } from '../../config.js';
import type { AdminRouteDeps, App } from './types.js';

/** The check-ins' roster, settings, links and participation (CONTRACT.md sections 10 and 12). */
export function registerCheckinRoutes(app: App, { db, now, config }: AdminRouteDeps) {
  const tags = ['check-ins'];
  app.get(
    '/organizations/:orgId/respondents',
    {
      schema: {
        operationId: 'listRespondents',
        summary: 'The check-in roster',
        description: 'Every respondent (email, team) and every team with how many respondents it has; a team of fewer than 5 answers without a team.',
        tags,
        querystring: AdminNoQuerySchema,
        params: OrgIdParamsSchema,
        response: adminResponses(RosterSchema, 'The roster.'),
      },
    },
    async (request) => {
      await requireLiveOrg(db, request.params.orgId);
      const r = await listRoster(db, request.params.orgId);
      return { items: r.respondents, teams: r.teams };
    },
  );
  app.post(
    '/organizations/:orgId/respondents',
    {
      preValidation: requireJsonObject,
      schema: {
        operationId: 'addRespondent',
        summary: 'Add a respondent',
        description: 'Adds an email to the roster, in a team (made when missing) or none. An email already on the roster is 400.',
        tags,
        querystring: AdminNoQuerySchema,
        params: OrgIdParamsSchema,
        body: AddRespondentBodySchema,
        response: adminResponses(RespondentIdSchema, 'The new respondent.', { status: 201 }),
      },
    },
    async (request, reply) => {
      reply.code(201);
      return createRespondent(db, request.params.orgId, request.body, operatorActor(request.ip), now());
    },
  );
  app.patch(
    '/organizations/:orgId/respondents/:respondentId',
    {
      preValidation: requireJsonObject,
      schema: {
        operationId: 'moveRespondent',
        summary: "Change a respondent's team",
        description: 'Moves the respondent to a team (made when missing), or to none with null. Takes effect from the next round.',
        tags,
        querystring: AdminNoQuerySchema,
        params: OrgItemParamsSchema('respondentId', 'Respondent id.'),
        body: MoveRespondentBodySchema,
        response: adminResponses(RespondentIdSchema, 'The respondent moved.'),
      },
    },
    async (request) => {
      await moveRespondent(db, request.params.orgId, request.params.respondentId, request.body.team, operatorActor(request.ip), now());
      return { id: request.params.respondentId };
    },
  );
  app.delete(
    '/organizations/:orgId/respondents/:respondentId',
    {
      schema: {
        operationId: 'removeRespondent',
        summary: 'Remove a respondent',
        description: 'Removes the respondent and their links; answers already given stay, tied to no one.',
        tags,
        querystring: AdminNoQuerySchema,
        params: OrgItemParamsSchema('respondentId', 'Respondent id.'),
        response: adminResponses(RespondentIdSchema, 'The respondent removed.'),
      },
    },
    async (request) => {
      await deleteRespondent(db, request.params.orgId, request.params.respondentId, operatorActor(request.ip), now());
      return { id: request.params.respondentId };
    },
  );
  app.post(
    '/organizations/:orgId/roster',
    // A roster of 50,000 lines is more than BODY_LIMIT_BYTES allows other bodies.
    {
      bodyLimit: 16 * 1024 * 1024,
      preValidation: requireJsonObject,
      schema: {
        operationId: 'replaceRoster',
        summary: 'Replace the roster from a CSV file',
        description:
          'The whole roster as `email,team` lines, checked whole before anything changes: a bad line is named with its reason (`Line 3: ...`) and nothing is written. Respondents whose email stays keep their id and link.',
        tags,
        querystring: AdminNoQuerySchema,
        params: OrgIdParamsSchema,
        body: ReplaceRosterBodySchema,
        response: adminResponses(RosterReplacedSchema, 'What changed.'),
      },
    },
    async (request) =>
      replaceRoster(db, request.params.orgId, request.body.csv, operatorActor(request.ip), now(), {
        email: request.body.emailColumn,
        team: request.body.teamColumn,
      }),
  );
  app.get(
    '/organizations/:orgId/checkin-settings',
    {
      schema: {
        operationId: 'getCheckinSettings',
        summary: "The round's settings",
        description: 'Weekday, hour and time zone of the round and its reminder; reasons; words that make an answer FLAGGED.',
        tags,
        querystring: AdminNoQuerySchema,
        params: OrgIdParamsSchema,
        response: adminResponses(CheckinSettingsSchema, 'The settings (defaults: Monday 09:00 UTC, reminder Thursday).'),
      },
    },
    async (request) => {
      await requireLiveOrg(db, request.params.orgId);
      return getCheckinSettings(db, request.params.orgId);
    },
  );
  app.patch(
    '/organizations/:orgId/checkin-settings',
    {
      preValidation: requireJsonObject,
      schema: {
        operationId: 'updateCheckinSettings',
        summary: "Change the round's settings",
        description: 'Fields not given keep their value. The reminder must fall on a later weekday than the round, or be null.',
        tags,
        querystring: AdminNoQuerySchema,
        params: OrgIdParamsSchema,
        body: CheckinSettingsPatchSchema,
        response: adminResponses(CheckinSettingsSchema, 'The settings as changed.'),
      },
    },
    async (request) => updateCheckinSettings(db, request.params.orgId, request.body as Record<string, unknown>, operatorActor(request.ip), now()),
  );
  const mails = Boolean(config.smtpUrl && config.mailFrom);
  const linkFor = checkinLink(consoleBaseUrl(config));
  app.post(
    '/organizations/:orgId/checkin-links',
    {
      schema: {
        operationId: 'exportCheckinLinks',
        summary: "The week's links, for a mail tool of the organization's own",
        description:
          "Without SMTP_URL only (with it: 409, the links go by mail). Starts the week's round when it has not started. The first call hands out the link the round made for each of its people; they are then nowhere in the service. A later call is refused with 409, saying what it would do, unless `renew=true`: then a new link for everyone of the round, the earlier links still working. Whoever holds the links can answer in someone's place, though still learn no answer.",
        tags,
        querystring: WeekLinksQuerySchema,
        params: OrgIdParamsSchema,
        response: adminResponses(WeekLinksSchema, "The week's links."),
      },
    },
    async (request) => exportWeekLinks(db, request.params.orgId, { linkFor, mails, renew: request.query.renew === true }, operatorActor(request.ip), now()),
  );
  app.post(
    '/organizations/:orgId/respondents/:respondentId/resend-link',
    {
      schema: {
        operationId: 'resendCheckinLink',
        summary: "A new link for one person of this week's round",
        description:
          "For a person who lost their link. Makes as many new links as their key has people, in random order, and gives them one (by mail with SMTP_URL, else in this answer); the others are never handed out, so the audited re-send does not single out the link. Their earlier link keeps working. A person not on this week's round (added since it started): 409.",
        tags,
        querystring: AdminNoQuerySchema,
        params: OrgItemParamsSchema('respondentId', 'Respondent id.'),
        response: adminResponses(ResentLinkSchema, 'The week and, without SMTP, the link.'),
      },
    },
    async (request) => resendCheckinLink(db, request.params.orgId, request.params.respondentId, { linkFor, mails }, operatorActor(request.ip), now()),
  );
  app.post(
    '/organizations/:orgId/checkin-rounds',
    {
      schema: {
        operationId: 'sendCheckinRoundNow',
        summary: "Send this week's round now",
        description:
          "Starts this week's round at once, as the schedule would at its hour: it is fixed from now on (its people, teams, reasons and flag words) and every server process mails it within a minute; it is not started again at the scheduled hour. 409 without SMTP_URL (the links file starts a round then), when this week's round started already, or with an empty roster. Audited.",
        tags,
        querystring: AdminNoQuerySchema,
        params: OrgIdParamsSchema,
        response: adminResponses(RoundSentSchema, 'The round started.', { status: 201 }),
      },
    },
    async (request, reply) => {
      const r = await startRoundNow(db, request.params.orgId, { mails }, operatorActor(request.ip), now());
      reply.code(201);
      return r;
    },
  );
  app.get(
    '/organizations/:orgId/checkin-rounds',
    {
      schema: {
        operationId: 'listCheckinRounds',
        summary: 'Each round and its status',
        description:
          "This week's state (started or not, the people a round would mail, the scheduled time), then each round of the last 8 weeks: mails sent, waiting and failed with the relay's last reason, reminders, when its links close. Counts per round, never per person.",
        tags,
        querystring: AdminNoQuerySchema,
        params: OrgIdParamsSchema,
        response: adminResponses(RoundStatusesSchema, 'The rounds.'),
      },
    },
    async (request) => {
      await requireLiveOrg(db, request.params.orgId);
      const at = now();
      const [thisWeek, items] = await Promise.all([roundNowState(db, request.params.orgId, at), roundStatuses(db, request.params.orgId, at)]);
      return { thisWeek, items };
    },
  );
  app.get(
    '/organizations/:orgId/checkin-participation',
    {
      schema: {
        operationId: 'getCheckinParticipation',
        summary: 'Participation per team and week',
        description: 'Invited, opened and answered per team and week (the last 8), each only from 5 (else null: fewer than 5); never who.',
        tags,
        querystring: AdminNoQuerySchema,
        params: OrgIdParamsSchema,
        response: adminResponses(ParticipationSchema, 'Counts per week and team.'),
      },
    },
    async (request) => {
      await requireLiveOrg(db, request.params.orgId);
      return { items: await participation(db, request.params.orgId, now()) };
    },
  );
}
