import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ApiError } from '../../../contract/errors.js';
import type { DatabaseExecutor } from '../../../domain/database.js';
import { createAction, updateAction, getActionItem } from '../../../domain/actions.js';
import { actionsInScope } from '../../../domain/team-scope.js';
import { listOrgTeams } from '../../../domain/teams.js';
import { notice, type Safe } from '../../html.js';
import { actorOf, CHANGERS, changeOutcome, EVERY_MEMBER, type ConsoleDeps, type Form } from '../../plugins/index.js';
import { sendPage } from '../../views/layout.js';
import { speakerOf } from '../../views/speaker.js';
import type { Speaker } from '../../words.js';
import { changeBodyOf, createBodyOf } from './form.js';
import { actionsView } from './view.js';

/** The form's fields the API names in a refusal, each with the reader's words for it. */
const FIELD_REFUSALS = {
  title: 'console.actions.refusedTitle',
  description: 'console.actions.refusedDescription',
  subteamId: 'console.actions.refusedTeam',
  status: 'console.actions.refusedStatus',
} as const;

/**
 * A refusal of the API's checks in the reader's words, chosen by its code and the field it names
 * (the message is the API's own, which names its field as 'field'); a refusal this page does not
 * expect keeps the API's English message.
 */
async function inWords<T>(sp: Speaker, work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (err) {
    if (!(err instanceof ApiError)) throw err;
    const say = (text: string) => new ApiError(err.code, text, err.headers);
    if (err.code === 'not_found') throw say(sp.t('console.actions.refusedNotFound'));
    if (err.code === 'invalid_transition') {
      const m = /is (\w+) cannot become (\w+)/.exec(err.message);
      if (m) throw say(sp.t('console.actions.refusedTransition', { from: m[1], to: m[2] }));
    }
    if (err.code === 'invalid_request') {
      const field = /'(title|description|endDate|subteamId|status)'/.exec(err.message)?.[1];
      if (field === 'endDate') throw say(sp.t(/before/.test(err.message) ? 'console.actions.refusedEndBefore' : 'console.actions.refusedEnd'));
      if (field) throw say(sp.t(FIELD_REFUSALS[field as keyof typeof FIELD_REFUSALS]));
    }
    throw err;
  }
}

/** The page lists the newest actions; GET /v1/actions has them all. */
const PAGE_ACTIONS = 100;

/**
 * The actions page (CONTRACT.md section 11): every action, newest first; admins and owners create,
 * edit and move them through the transitions of section 5, by the operations POST and PATCH
 * /v1/actions use, with the API's checks and messages. A manager reads their teams' actions only.
 */
export function registerActionPages(scope: FastifyInstance, deps: ConsoleDeps & { db: DatabaseExecutor }) {
  const { db, now } = deps;
  const admin = { config: { roles: CHANGERS } };

  const actionsPage = async (request: FastifyRequest, reply: FastifyReply, status: number, message?: Safe) => {
    const s = request.member;
    const [{ items: actions, more }, teams, speaker] = await Promise.all([
      actionsInScope(db, s.orgId, request.managedTeams, PAGE_ACTIONS),
      listOrgTeams(db, s.orgId),
      speakerOf(db, request),
    ]);
    return sendPage(reply, status, actionsView({ session: s, actions, more, teams, message, speaker, scoped: request.managedTeams !== null }));
  };
  const outcome = changeOutcome(actionsPage);

  scope.get('/actions', { config: { roles: EVERY_MEMBER } }, async (request, reply) => actionsPage(request, reply, 200));

  scope.post<{ Body: Form }>('/actions', admin, async (request, reply) =>
    outcome(request, reply, async () => {
      const sp = await speakerOf(db, request);
      return inWords(sp, async () => {
        const body = createBodyOf(request.body);
        await db.transaction((tx) => createAction(tx, request.member.orgId, body, actorOf(request), now()));
        return notice(sp.t('console.actions.created', { title: body.title }), 'ok');
      });
    }),
  );

  scope.post<{ Params: { actionId: string }; Body: Form }>('/actions/:actionId', admin, async (request, reply) =>
    outcome(request, reply, async () => {
      const sp = await speakerOf(db, request);
      return inWords(sp, async () => {
        const orgId = request.member.orgId;
        const current = await getActionItem(db, orgId, request.params.actionId);
        if (!current) throw new ApiError('not_found', 'No such action in this organization.');
        const body = changeBodyOf(request.body, current);
        if (!body) return notice(sp.t('console.actions.nothing'), 'ok');
        await db.transaction((tx) => updateAction(tx, orgId, current.$id, body, actorOf(request), now()));
        return notice(sp.t('console.actions.saved', { title: body.title ?? current.title }), 'ok');
      });
    }),
  );
}
