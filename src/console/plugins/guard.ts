import type { FastifyInstance } from 'fastify';
import { managedTeamIds, type MemberRole } from '../../domain/members.js';
import type { Queryable } from '../../domain/database.js';
import type { ConsoleSession } from '../../domain/sessions.js';
import { readerOf, refusalPage } from './errors.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /**
     * The roles that may use a member page or change; none: owners, admins and viewers. A manager
     * reaches only the routes that name `manager` (their teams' pages and their own account).
     */
    roles?: readonly MemberRole[];
  }
  interface FastifyRequest {
    /** The signed-in member's session, on the member pages (set by the guard; never null there). */
    member: ConsoleSession;
    /**
     * The teams whose figures this member reads: a manager's teams (ids), or null for every other
     * role (the whole organization). Read at every request, so a change of teams applies at once.
     */
    managedTeams: readonly string[] | null;
  }
}

/** Owners and admins: the changes a viewer may not make. */
export const CHANGERS: readonly MemberRole[] = ['owner', 'admin'];
export const OWNERS: readonly MemberRole[] = ['owner'];
/** The roles that read the whole organization: a route that names no roles is theirs. */
export const ORGANIZATION_READERS: readonly MemberRole[] = ['owner', 'admin', 'viewer'];
/** Every role: the pages a manager reads too (their teams' only) and each member's own account. */
export const EVERY_MEMBER: readonly MemberRole[] = ['owner', 'admin', 'viewer', 'manager'];

/**
 * The one guard of the member pages, checked on the server for every page and change of the scope
 * it is registered in: no session -> the sign-in page; a session halfway through two-factor -> its
 * next step; a role the route's `config.roles` (default ORGANIZATION_READERS) does not name -> 403.
 * A route left without roles is therefore closed to managers: a page added later shows a manager
 * nothing until it says how it keeps to their teams.
 */
export function registerMemberGuard(scope: FastifyInstance, deps: { db: Queryable }) {
  scope.decorateRequest('member', null as unknown as ConsoleSession);
  scope.decorateRequest('managedTeams', null);
  scope.addHook('preHandler', async (request, reply) => {
    const s = request.consoleSession;
    if (!s) {
      if (request.method === 'GET') return reply.redirect('/console/sign-in', 303);
      const { t } = readerOf(request);
      return refusalPage(reply, 401, t('console.errors.signedOutTitle'), t('console.errors.signedOutText'));
    }
    if (s.stage === 'totp') return reply.redirect('/console/two-factor', 303);
    if (s.stage === 'enroll') return reply.redirect('/console/two-factor/enroll', 303);
    if (s.stage === 'passkey') return reply.redirect('/console/passkeys/required', 303);
    const roles = request.routeOptions.config.roles ?? ORGANIZATION_READERS;
    if (!roles.includes(s.member.role)) return refusedRole(reply, s.member.role);
    request.member = s;
    request.managedTeams = s.member.role === 'manager' ? await managedTeamIds(deps.db, s.orgId, s.member.id) : null;
  });
}

/** The answer to a role that may not use a page or change (a manager asking for another team's figures too). */
export const refusedRole = (reply: Parameters<typeof refusalPage>[0], role: MemberRole) => {
  const { t } = readerOf(reply.request);
  return refusalPage(reply, 403, t('console.errors.notAllowedTitle'), t('console.errors.notAllowedText', { role }));
};
