import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ApiError } from '../../../contract/errors.js';
import type { DatabaseExecutor } from '../../../domain/database.js';
import {
  setMemberRoleAndTeams,
  inviteMember,
  listInvitations,
  listMembers,
  deleteMember,
  requiresTwoFactor,
  revokeInvitation,
  updateRequireTwoFactor,
} from '../../../domain/members.js';
import { updatePassword } from '../../../domain/passwords.js';
import { notice, type Safe } from '../../html.js';
import { actorOf, EVERY_MEMBER, OWNERS, changeOutcome, clearSessionCookie, Redirect, type ConsoleDeps, type Form } from '../../plugins/index.js';
import { sendPage } from '../../views/layout.js';
import { speakerOf } from '../../views/speaker.js';
import { listOrgTeams } from '../../../domain/teams.js';
import type { Mailer } from '../../../mail/index.js';
import { invitationOf, passwordChangeOf, roleAndTeamsOf, twoFactorRequiredOf } from './form.js';
import { accountView, invitationLinkBox, membersView } from './view.js';
import { passkeyRequirementBlock, sendAccountPage } from '../passkeys/handler.js';
import { updateRequirePasskeys } from '../../../domain/passkeys.js';
import { PASSKEY_WORDS } from '../../words.js';

/** Where an invitation's link points: the service's public address (PUBLIC_BASE_URL, else the listener's), never the Host header. */
export const invitationUrl = (baseUrl: string, token: string): string => `${baseUrl}/console/invitations/${token}`;

/** The members page (owners) and each member's own account page. */
export function registerMemberPages(scope: FastifyInstance, deps: ConsoleDeps & { db: DatabaseExecutor; mailer?: Mailer }) {
  const { db, now } = deps;
  const owner = { config: { roles: OWNERS } };

  const membersPage = async (request: FastifyRequest, reply: FastifyReply, status: number, message?: Safe) => {
    const s = request.member;
    const [members, invitations, required, teams, speaker, passkeys] = await Promise.all([
      listMembers(db, s.orgId),
      listInvitations(db, s.orgId, now()),
      requiresTwoFactor(db, s.orgId),
      listOrgTeams(db, s.orgId),
      speakerOf(db, request),
      passkeyRequirementBlock(deps, s),
    ]);
    return sendPage(reply, status, membersView({ session: s, members, invitations, required, teams, message, speaker, passkeys }));
  };
  const outcome = changeOutcome(membersPage);

  scope.get('/members', owner, async (request, reply) => membersPage(request, reply, 200));

  scope.post<{ Body: Form }>('/members/invite', owner, async (request, reply) =>
    outcome(request, reply, async () => {
      const s = request.member;
      const inv = await inviteMember(db, s.orgId, invitationOf(request.body), actorOf(request), now());
      const url = invitationUrl(deps.baseUrl, inv.token);
      const until = (await speakerOf(db, request)).when(inv.expiresAt);
      const teamNames = inv.teams.length > 0 ? (await listOrgTeams(db, s.orgId)).filter((t) => inv.teams.includes(t.id)).map((t) => t.name) : [];
      const as = teamNames.length > 0 ? `manager of ${teamNames.join(', ')}` : inv.role;
      if (!deps.mailer) return invitationLinkBox({ email: inv.email, role: as }, url, until);
      // By email only: accepting it proves control of the address. Unsent, it is revoked at once.
      try {
        await deps.mailer.send({
          to: inv.email,
          subject: `Your invitation to ${s.orgName} on Climate Pulse`,
          text: `${s.member.email} invites you to the Climate Pulse console of ${s.orgName} as ${as}.\n\nOpen this link to choose your password; it works once, until ${until}:\n\n${url}\n\nIf you did not expect this, ignore this message.\n`,
        });
      } catch (err) {
        request.log.warn({ err: { message: (err as Error).message } }, 'console invitation email not sent');
        await revokeInvitation(db, s.orgId, inv.id, actorOf(request), now());
        throw new ApiError('invalid_request', `The invitation email to ${inv.email} could not be sent, so no invitation was made; try again later.`);
      }
      return notice(`Invitation sent by email to ${inv.email} (${as}). Its link works once, until ${until}; nobody else sees it.`, 'ok');
    }),
  );

  scope.post<{ Params: { invitationId: string } }>('/members/invitations/:invitationId/revoke', owner, async (request, reply) =>
    outcome(request, reply, async () => {
      const inv = await revokeInvitation(db, request.member.orgId, request.params.invitationId, actorOf(request), now());
      return notice(`The invitation of ${inv.email} (${inv.role}) is revoked: its link opens nothing now.`, 'ok');
    }),
  );

  scope.post<{ Params: { memberId: string }; Body: Form }>('/members/:memberId/role', owner, async (request, reply) =>
    outcome(request, reply, async () => {
      const { role, teams } = roleAndTeamsOf(request.body);
      const m = await setMemberRoleAndTeams(db, request.member.orgId, request.params.memberId, role, teams, actorOf(request), now());
      if (m.role !== 'manager') return notice(`${m.email} is now ${m.role}.`, 'ok');
      const names = (await listOrgTeams(db, request.member.orgId)).filter((t) => m.teams?.includes(t.id)).map((t) => t.name);
      return notice(`${m.email} is now manager of ${names.join(', ')}.`, 'ok');
    }),
  );

  scope.post<{ Params: { memberId: string } }>('/members/:memberId/remove', owner, async (request, reply) =>
    outcome(request, reply, async () => {
      const m = await deleteMember(db, request.member.orgId, request.params.memberId, actorOf(request), now());
      return notice(`${m.email} was removed; their sessions ended.`, 'ok');
    }),
  );

  scope.post<{ Body: Form }>('/members/two-factor', owner, async (request, reply) =>
    outcome(request, reply, async () => {
      const on = twoFactorRequiredOf(request.body);
      await updateRequireTwoFactor(db, request.member.orgId, on, actorOf(request), now());
      return notice(on ? 'Two-factor authentication is now required for every member.' : 'Two-factor authentication is now optional.', 'ok');
    }),
  );

  // Passkeys required for owners and admins (src/domain/passkeys.ts).
  scope.post<{ Body: Form }>('/members/passkeys', owner, async (request, reply) =>
    outcome(request, reply, async () => {
      const on = request.body.required === 'true';
      await updateRequirePasskeys(db, request.member.orgId, on, actorOf(request), now());
      return notice(on ? PASSKEY_WORDS.nowRequired : PASSKEY_WORDS.nowOptional, 'ok');
    }),
  );

  // Account: any member's own password, two-factor and passkeys, a manager's too.
  const own = { config: { roles: EVERY_MEMBER } };
  const accountPage = async (request: FastifyRequest, reply: FastifyReply, status: number, message?: Safe) =>
    sendAccountPage(deps, request.member, reply, status, message);

  scope.get('/account', own, async (request, reply) => accountPage(request, reply, 200));

  // A new password ends every session of the member, this one too: the next page is signing in.
  scope.post<{ Body: Form }>('/account/password', own, async (request, reply) =>
    changeOutcome(accountPage)(request, reply, async () => {
      await updatePassword(db, request.member, passwordChangeOf(request.body), actorOf(request), now());
      clearSessionCookie(reply, deps);
      return new Redirect('/console/sign-in');
    }),
  );
}
