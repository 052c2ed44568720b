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
  setMemberLanguage,
  updateRequireTwoFactor,
} from '../../../domain/members.js';
import { updateRequirePasskeys } from '../../../domain/passkeys.js';
import { PASSWORD_REFUSED, updatePassword } from '../../../domain/passwords.js';
import { listOrgTeams } from '../../../domain/teams.js';
import { format, matchLocale } from '../../../i18n/index.js';
import type { Mailer } from '../../../mail/index.js';
import { notice, type Safe } from '../../html.js';
import { actorOf, EVERY_MEMBER, OWNERS, changeOutcome, clearSessionCookie, Redirect, type ConsoleDeps, type Form } from '../../plugins/index.js';
import { sendPage } from '../../views/layout.js';
import { speakerOf } from '../../views/speaker.js';
import { speakerFor, type Speaker } from '../../words.js';
import { passkeyRequirementBlock, sendAccountPage } from '../passkeys/handler.js';
import { invitationOf, languageOf, passwordChangeOf, roleAndTeamsOf, twoFactorRequiredOf } from './form.js';
import { inWords } from './refusals.js';
import { invitationLinkBox, membersView, roleInWords } from './view.js';

/** Where an invitation's link points: the service's public address (PUBLIC_BASE_URL, else the listener's), never the Host header. */
export const invitationUrl = (baseUrl: string, token: string): string => `${baseUrl}/console/invitations/${token}`;

/** The members domain's refusals (src/domain/members.ts, passwords.ts) in the reader's words; null: one it does not know. */
export function memberRefusal(sp: Speaker) {
  const { t } = sp;
  return (err: ApiError): string | null => {
    const m = err.message;
    let found: RegExpExecArray | null;
    if (err.code === 'not_found') return t('console.members.errorGone');
    if (err.code === 'insufficient_scope') return t('console.members.errorOnlyOwners');
    if (m === PASSWORD_REFUSED) return t('console.account.errorPasswordRefused');
    if ((found = /^The new password must be at least (\d+) characters long\.$/.exec(m)))
      return t('console.account.errorPasswordShort', { min: Number(found[1]) });
    if ((found = /^The new password must be at most (\d+) characters long\.$/.exec(m)))
      return t('console.account.errorPasswordLong', { max: Number(found[1]) });
    if (m.startsWith('The language must be one of')) return t('console.account.errorLanguage');
    if (m.startsWith('The email must be an address')) return t('console.members.errorEmail');
    if (m.startsWith('The role must be')) return t('console.members.errorRole');
    if (m.startsWith('A manager needs at least one team')) return t('console.members.errorNoTeam');
    if ((found = /^A manager has at most (\d+) teams\.$/.exec(m))) return t('console.members.errorTooManyTeams', { max: Number(found[1]) });
    if (m.startsWith('The teams must be a list') || m.endsWith('names no team of this organization.')) return t('console.members.errorUnknownTeam');
    if ((found = /^(.+) is already a member of this organization\.$/.exec(m))) return t('console.members.errorAlreadyMember', { email: found[1] });
    if (m.startsWith('The last owner of an organization cannot be removed')) return t('console.members.errorLastOwnerRemoved');
    if (m.startsWith('The last owner of an organization cannot be demoted')) return t('console.members.errorLastOwnerDemoted');
    return null;
  };
}

/** The members page (owners) and each member's own account page. */
export function registerMemberPages(scope: FastifyInstance, deps: ConsoleDeps & { db: DatabaseExecutor; mailer?: Mailer }) {
  const { db, now } = deps;
  const owner = { config: { roles: OWNERS } };

  const membersPage = async (request: FastifyRequest, reply: FastifyReply, status: number, message?: Safe) => {
    const s = request.member;
    const speaker = await speakerOf(db, request);
    const [members, invitations, required, teams, passkeys] = await Promise.all([
      listMembers(db, s.orgId),
      listInvitations(db, s.orgId, now()),
      requiresTwoFactor(db, s.orgId),
      listOrgTeams(db, s.orgId),
      passkeyRequirementBlock(deps, s, speaker),
    ]);
    return sendPage(reply, status, membersView({ session: s, members, invitations, required, teams, message, speaker, passkeys }));
  };
  const outcome = changeOutcome(membersPage);
  /** A change of the members page: its refusals in the owner's words. */
  const change = (request: FastifyRequest, reply: FastifyReply, work: (sp: Speaker) => Promise<Safe | Redirect>) =>
    outcome(request, reply, async () => {
      const sp = await speakerOf(db, request);
      return inWords(() => work(sp), memberRefusal(sp));
    });
  const teamNamesOf = async (orgId: string, ids: readonly string[] | undefined) =>
    ids && ids.length > 0 ? (await listOrgTeams(db, orgId)).filter((x) => ids.includes(x.id)).map((x) => x.name) : [];

  scope.get('/members', owner, async (request, reply) => membersPage(request, reply, 200));

  scope.post<{ Body: Form }>('/members/invite', owner, async (request, reply) =>
    change(request, reply, async (sp) => {
      const s = request.member;
      const inv = await inviteMember(db, s.orgId, invitationOf(request.body), actorOf(request), now());
      const url = invitationUrl(deps.baseUrl, inv.token);
      const until = sp.when(inv.expiresAt);
      const as = roleInWords(sp, inv.role, await teamNamesOf(s.orgId, inv.teams));
      if (!deps.mailer) return invitationLinkBox({ email: inv.email, role: as }, url, until, sp);
      // By email only: accepting it proves control of the address. Unsent, it is revoked at once.
      // In the inviter's language: the one thing the console knows of the invited person's is their colleague's.
      try {
        await deps.mailer.send({
          to: inv.email,
          subject: sp.t('console.members.mailSubject', { org: s.orgName }),
          text: sp.t('console.members.mailText', { inviter: s.member.email, org: s.orgName, role: as, until, url }),
        });
      } catch (err) {
        request.log.warn({ err: { message: (err as Error).message } }, 'console invitation email not sent');
        await revokeInvitation(db, s.orgId, inv.id, actorOf(request), now());
        throw new ApiError('invalid_request', sp.t('console.members.mailFailed', { email: inv.email }));
      }
      return notice(sp.t('console.members.invitationSent', { email: inv.email, role: as, until }), 'ok');
    }),
  );

  scope.post<{ Params: { invitationId: string } }>('/members/invitations/:invitationId/revoke', owner, async (request, reply) =>
    change(request, reply, async (sp) => {
      const inv = await revokeInvitation(db, request.member.orgId, request.params.invitationId, actorOf(request), now());
      const as = roleInWords(sp, inv.role, await teamNamesOf(request.member.orgId, inv.teams));
      return notice(sp.t('console.members.invitationRevoked', { email: inv.email, role: as }), 'ok');
    }),
  );

  scope.post<{ Params: { memberId: string }; Body: Form }>('/members/:memberId/role', owner, async (request, reply) =>
    change(request, reply, async (sp) => {
      const { role, teams } = roleAndTeamsOf(request.body);
      const m = await setMemberRoleAndTeams(db, request.member.orgId, request.params.memberId, role, teams, actorOf(request), now());
      const as = roleInWords(sp, m.role, m.role === 'manager' ? await teamNamesOf(request.member.orgId, m.teams) : []);
      return notice(sp.t('console.members.roleChanged', { email: m.email, role: as }), 'ok');
    }),
  );

  scope.post<{ Params: { memberId: string } }>('/members/:memberId/remove', owner, async (request, reply) =>
    change(request, reply, async (sp) => {
      const m = await deleteMember(db, request.member.orgId, request.params.memberId, actorOf(request), now());
      return notice(sp.t('console.members.removed', { email: m.email }), 'ok');
    }),
  );

  scope.post<{ Body: Form }>('/members/two-factor', owner, async (request, reply) =>
    change(request, reply, async (sp) => {
      const on = twoFactorRequiredOf(request.body);
      await updateRequireTwoFactor(db, request.member.orgId, on, actorOf(request), now());
      return notice(on ? sp.t('console.members.twoFactorNowRequired') : sp.t('console.members.twoFactorNowOptional'), 'ok');
    }),
  );

  // Passkeys required for owners and admins (src/domain/passkeys.ts).
  scope.post<{ Body: Form }>('/members/passkeys', owner, async (request, reply) =>
    change(request, reply, async (sp) => {
      const on = request.body.required === 'true';
      await updateRequirePasskeys(db, request.member.orgId, on, actorOf(request), now());
      return notice(on ? sp.t('console.members.passkeysNowRequired') : sp.t('console.members.passkeysNowOptional'), 'ok');
    }),
  );

  // Account: any member's own language, password, two-factor and passkeys, a manager's too.
  const own = { config: { roles: EVERY_MEMBER } };
  // The same page as the passkey routes answer with (src/console/pages/passkeys/handler.ts).
  const accountPage = (request: FastifyRequest, reply: FastifyReply, status: number, message?: Safe) =>
    sendAccountPage(deps, request.member, reply, status, message);
  const accountChange = (request: FastifyRequest, reply: FastifyReply, work: (sp: Speaker) => Promise<Safe | Redirect>) =>
    changeOutcome(accountPage)(request, reply, async () => {
      const sp = await speakerOf(db, request);
      return inWords(() => work(sp), memberRefusal(sp));
    });

  scope.get('/account', own, async (request, reply) => accountPage(request, reply, 200));

  // The member's own language: their pages speak it from the next request on, whatever the browser asks.
  scope.post<{ Body: Form }>('/account/language', own, async (request, reply) =>
    accountChange(request, reply, async (sp) => {
      const chosen = await setMemberLanguage(db, request.member.orgId, request.member.member.id, languageOf(request.body));
      // The message is already in the language chosen: it is the first thing the next page says.
      const next = speakerFor(request.headers['accept-language'], sp.timeZone, chosen);
      const locale = matchLocale(chosen);
      return notice(
        locale ? next.t('console.account.languageSaved', { language: format(locale, 'meta.name') }) : next.t('console.account.languageBrowser'),
        'ok',
      );
    }),
  );

  // A new password ends every session of the member, this one too: the next page is signing in.
  scope.post<{ Body: Form }>('/account/password', own, async (request, reply) =>
    accountChange(request, reply, async () => {
      await updatePassword(db, request.member, passwordChangeOf(request.body), actorOf(request), now());
      clearSessionCookie(reply, deps);
      return new Redirect('/console/sign-in');
    }),
  );
}
