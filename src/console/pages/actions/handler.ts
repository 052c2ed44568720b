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
import { changeBodyOf, createBodyOf } from './form.js';
import { actionsView } from './view.js';

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
      const body = createBodyOf(request.body);
      await db.transaction((tx) => createAction(tx, request.member.orgId, body, actorOf(request), now()));
      return notice(`Action “${body.title}” created.`, 'ok');
    }),
  );

  scope.post<{ Params: { actionId: string }; Body: Form }>('/actions/:actionId', admin, async (request, reply) =>
    outcome(request, reply, async () => {
      const orgId = request.member.orgId;
      const current = await getActionItem(db, orgId, request.params.actionId);
      if (!current) throw new ApiError('not_found', 'No such action in this organization.');
      const body = changeBodyOf(request.body, current);
      if (!body) return notice('Nothing to change.', 'ok');
      await db.transaction((tx) => updateAction(tx, orgId, current.$id, body, actorOf(request), now()));
      return notice(`Action “${body.title ?? current.title}” saved.`, 'ok');
    }),
  );
}
