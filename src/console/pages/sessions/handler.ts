import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { DatabaseExecutor } from '../../../domain/database.js';
import { listMemberSessions, signOutEverywhere } from '../../../domain/sessions.js';
import { notice, type Safe } from '../../html.js';
import { actorOf, changeOutcome, clearSessionCookie, EVERY_MEMBER, Redirect, type ConsoleDeps } from '../../plugins/index.js';
import { sendPage } from '../../views/layout.js';
import { speakerOf } from '../../views/speaker.js';
import { sessionsView } from './view.js';

/**
 * A member's own sessions (issue 52, item 4): every member, whatever the role, sees and ends only
 * their own. Ending the others keeps this one; ending all signs this one out too.
 */
export function registerSessionPages(scope: FastifyInstance, deps: ConsoleDeps & { db: DatabaseExecutor }) {
  const { db, now } = deps;

  const sessionsPage = async (request: FastifyRequest, reply: FastifyReply, status: number, message?: Safe) =>
    sendPage(
      reply,
      status,
      sessionsView({ session: request.member, sessions: await listMemberSessions(db, request.member, now()), message, speaker: await speakerOf(db, request) }),
    );
  const outcome = changeOutcome(sessionsPage);
  // Every role's own sessions, a manager's too.
  const own = { config: { roles: EVERY_MEMBER } };

  scope.get('/sessions', own, async (request, reply) => sessionsPage(request, reply, 200));

  scope.post('/sessions/end-others', own, async (request, reply) =>
    outcome(request, reply, async () => {
      const { ended } = await signOutEverywhere(db, request.member, { includeCurrent: false }, actorOf(request), now());
      return notice((await speakerOf(db, request)).t('console.sessions.endedOthers', { ended }), 'ok');
    }),
  );

  scope.post('/sessions/end-all', own, async (request, reply) =>
    outcome(request, reply, async () => {
      await signOutEverywhere(db, request.member, { includeCurrent: true }, actorOf(request), now());
      clearSessionCookie(reply, deps);
      return new Redirect('/console/sign-in');
    }),
  );
}
