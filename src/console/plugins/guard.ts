import type { FastifyInstance } from 'fastify';
import type { MemberRole } from '../../domain/members.js';
import type { ConsoleSession } from '../../domain/sessions.js';
import { refusalPage } from './errors.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The roles that may use a member page or change; none: every signed-in member. */
    roles?: readonly MemberRole[];
  }
  interface FastifyRequest {
    /** The signed-in member's session, on the member pages (set by the guard; never null there). */
    member: ConsoleSession;
  }
}

/** Owners and admins: the changes a viewer may not make. */
export const CHANGERS: readonly MemberRole[] = ['owner', 'admin'];
export const OWNERS: readonly MemberRole[] = ['owner'];

/**
 * The one guard of the member pages, checked on the server for every page and change of the scope
 * it is registered in: no session -> the sign-in page; a session halfway through two-factor -> its
 * next step; a role the route's `config.roles` does not name -> 403.
 */
export function registerMemberGuard(scope: FastifyInstance) {
  scope.decorateRequest('member', null as unknown as ConsoleSession);
  scope.addHook('preHandler', async (request, reply) => {
    const s = request.consoleSession;
    if (!s) {
      if (request.method === 'GET') return reply.redirect('/console/sign-in', 303);
      return refusalPage(reply, 401, 'Signed out', 'Your session ended; sign in again.');
    }
    if (s.stage === 'totp') return reply.redirect('/console/two-factor', 303);
    if (s.stage === 'enroll') return reply.redirect('/console/two-factor/enroll', 303);
    if (s.stage === 'passkey') return reply.redirect('/console/passkeys/required', 303);
    const roles = request.routeOptions.config.roles;
    if (roles && !roles.includes(s.member.role)) {
      return refusalPage(reply, 403, 'Not allowed', `Your role (${s.member.role}) cannot do this; ask an owner.`);
    }
    request.member = s;
  });
}
