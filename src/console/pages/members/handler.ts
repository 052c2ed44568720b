import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ApiError } from '../../../contract/errors.js';
import type { DatabaseExecutor } from '../../../domain/database.js';
import {
  changeMemberRole,
  inviteMember,
  listInvitations,
  listMembers,
  MEMBER_ROLES,
  removeMember,
  requiresTwoFactor,
  revokeInvitation,
  setRequireTwoFactor,
} from '../../../domain/members.js';
import { changePassword } from '../../../domain/passwords.js';
import { csrfField, html, notice, type Safe } from '../../html.js';
import { actorOf, OWNERS, changeOutcome, clearSessionCookie, type ConsoleDeps, type Form } from '../../plugins/index.js';
import { navFor } from '../../views/nav.js';
import { sendPage, when } from '../../views/layout.js';
import type { Mailer } from '../../../mail/index.js';

/** Where an invitation's link points: the service's public address (PUBLIC_BASE_URL, else the listener's), never the Host header. */
export const invitationUrl = (baseUrl: string, token: string): string => `${baseUrl}/console/invitations/${token}`;

const send = (reply: FastifyReply, status: number, title: string, body: Safe, request: FastifyRequest, current: string) =>
  sendPage(reply, status, { title, body, nav: navFor(request.member, current) });

/** The members page (owners) and each member's own account page. */
export function registerMemberPages(scope: FastifyInstance, deps: ConsoleDeps & { db: DatabaseExecutor; mailer?: Mailer }) {
  const { db, now } = deps;
  const owner = { config: { roles: OWNERS } };

  const membersPage = async (request: FastifyRequest, reply: FastifyReply, status: number, message?: Safe) => {
    const s = request.member;
    const [members, invitations, required] = await Promise.all([listMembers(db, s.orgId), listInvitations(db, s.orgId, now()), requiresTwoFactor(db, s.orgId)]);
    const roleOptions = (current: string) => MEMBER_ROLES.map((r) => html`<option value="${r}"${r === current ? html` selected` : ''}>${r}</option>`);
    return send(
      reply,
      status,
      'Members',
      html`<h1>Members</h1>
${message ?? ''}
<div class="table-scroll" role="region" aria-labelledby="members-caption" tabindex="0"><table>
<caption id="members-caption">Members of ${s.orgName}</caption>
<thead><tr><th scope="col">Email</th><th scope="col">Role</th><th scope="col">Two-factor</th><th scope="col">Joined</th><th scope="col">Last sign-in</th><th scope="col">Change</th></tr></thead>
<tbody>
${members.map(
  (m) => html`<tr>
<td>${m.email}</td><td>${m.role}</td><td>${m.twoFactor ? 'on' : 'off'}</td><td>${when(m.createdAt)}</td>
<td>${when(m.lastSignInAt)}</td>
<td>
<form method="post" action="/console/members/${encodeURIComponent(m.id)}/role">${csrfField(s.csrfToken)}
<label for="f-role-${m.id}">Role of ${m.email}</label> <select name="role" id="f-role-${m.id}">${roleOptions(m.role)}</select>
<button type="submit" class="secondary" aria-label="Change role of ${m.email}">Change role</button></form>
<form method="post" action="/console/members/${encodeURIComponent(m.id)}/remove" data-confirm="Remove ${m.email}? Their sessions end at once.">${csrfField(s.csrfToken)}
<button type="submit" class="danger" aria-label="Remove ${m.email}">Remove</button></form>
</td></tr>`,
)}
</tbody>
</table></div>
<h2>Invite a member</h2>
<form method="post" action="/console/members/invite" class="stack">
${csrfField(s.csrfToken)}
<label for="f-email">Email</label> <input type="email" name="email" required maxlength="254" id="f-email">
<label for="f-role">Role</label> <select name="role" id="f-role">${roleOptions('viewer')}</select>
<button type="submit">Invite</button>
</form>
${
  invitations.length > 0
    ? html`<table><caption>Invitations not yet accepted</caption>
<thead><tr><th scope="col">Email</th><th scope="col">Role</th><th scope="col">Invited by</th><th scope="col">Expires</th><th scope="col">Change</th></tr></thead>
<tbody>${invitations.map(
        (
          i,
        ) => html`<tr><td>${i.email}</td><td>${i.role}</td><td>${i.invitedBy === null ? 'operator' : (members.find((m) => m.id === i.invitedBy)?.email ?? i.invitedBy)}</td><td>${when(i.expiresAt)}</td>
<td><form method="post" action="/console/members/invitations/${encodeURIComponent(i.id)}/revoke" data-confirm="Revoke the invitation of ${i.email}? Its link stops working at once.">${csrfField(s.csrfToken)}
<button type="submit" class="danger" aria-label="Revoke invitation of ${i.email}">Revoke</button></form></td></tr>`,
      )}</tbody></table>`
    : ''
}
<h2>Two-factor authentication</h2>
<form method="post" action="/console/members/two-factor" class="stack">
${csrfField(s.csrfToken)}
<p>${required ? 'Every member must use two-factor authentication.' : 'Two-factor authentication is optional for members.'}</p>
<input type="hidden" name="required" value="${required ? 'false' : 'true'}">
<button type="submit" class="secondary">${required ? 'Stop requiring two-factor' : 'Require two-factor for every member'}</button>
</form>`,
      request,
      '/console/members',
    );
  };

  const outcome = changeOutcome(membersPage);

  scope.get('/members', owner, async (request, reply) => membersPage(request, reply, 200));

  scope.post('/members/invite', owner, async (request, reply) =>
    outcome(request, reply, async () => {
      const form = request.body as Form;
      const s = request.member;
      const inv = await inviteMember(db, s.orgId, { email: form.email, role: form.role }, actorOf(request), now());
      const url = invitationUrl(deps.baseUrl, inv.token);
      const until = when(inv.expiresAt);
      if (deps.mailer) {
        // By email only: accepting it proves control of the address. Unsent, it is revoked at once.
        try {
          await deps.mailer.send({
            to: inv.email,
            subject: `Your invitation to ${s.orgName} on Climate Pulse`,
            text: `${s.member.email} invites you to the Climate Pulse console of ${s.orgName} as ${inv.role}.\n\nOpen this link to choose your password; it works once, until ${until}:\n\n${url}\n\nIf you did not expect this, ignore this message.\n`,
          });
        } catch (err) {
          request.log.warn({ err: { message: (err as Error).message } }, 'console invitation email not sent');
          await revokeInvitation(db, s.orgId, inv.id, actorOf(request), now());
          throw new ApiError('invalid_request', `The invitation email to ${inv.email} could not be sent, so no invitation was made; try again later.`);
        }
        return notice(`Invitation sent by email to ${inv.email} (${inv.role}). Its link works once, until ${until}; nobody else sees it.`, 'ok');
      }
      return html`<div class="notice ok" role="status"><p>Invitation for ${inv.email} (${inv.role}) created. Send them this link; it works once, until ${until}, and is shown only now:</p>
<code class="secret" id="invitation-link">${url}</code> <button type="button" class="secondary" data-copy="invitation-link" hidden>Copy link</button>
<p><strong>The address is unproven:</strong> this service sends no email (no SMTP_URL), so whoever opens the link becomes this member. Give it to them yourself, over a channel you trust.</p></div>`;
    }),
  );

  scope.post<{ Params: { invitationId: string } }>('/members/invitations/:invitationId/revoke', owner, async (request, reply) =>
    outcome(request, reply, async () => {
      const inv = await revokeInvitation(db, request.member.orgId, request.params.invitationId, actorOf(request), now());
      return notice(`The invitation of ${inv.email} (${inv.role}) is revoked: its link opens nothing now.`, 'ok');
    }),
  );

  scope.post<{ Params: { memberId: string } }>('/members/:memberId/role', owner, async (request, reply) =>
    outcome(request, reply, async () => {
      const m = await changeMemberRole(db, request.member.orgId, request.params.memberId, (request.body as Form).role, actorOf(request), now());
      return notice(`${m.email} is now ${m.role}.`, 'ok');
    }),
  );

  scope.post<{ Params: { memberId: string } }>('/members/:memberId/remove', owner, async (request, reply) =>
    outcome(request, reply, async () => {
      const m = await removeMember(db, request.member.orgId, request.params.memberId, actorOf(request), now());
      return notice(`${m.email} was removed; their sessions ended.`, 'ok');
    }),
  );

  scope.post('/members/two-factor', owner, async (request, reply) =>
    outcome(request, reply, async () => {
      const on = (request.body as Form).required === 'true';
      await setRequireTwoFactor(db, request.member.orgId, on, actorOf(request), now());
      return notice(on ? 'Two-factor authentication is now required for every member.' : 'Two-factor authentication is now optional.', 'ok');
    }),
  );

  // Account: any member's own password and two-factor.
  const accountPage = (request: FastifyRequest, reply: FastifyReply, status: number, message?: Safe) => {
    const s = request.member;
    return send(
      reply,
      status,
      'Account',
      html`<h1>Account</h1>
${message ?? ''}
<p>Signed in as <strong>${s.member.email}</strong> (${s.member.role}). Two-factor authentication is ${s.member.twoFactor ? 'on' : 'off'}.</p>
<p><a href="/console/two-factor/enroll">${s.member.twoFactor ? 'Set up a new authenticator app' : 'Turn on two-factor authentication'}</a></p>
<h2>Change password</h2>
<form method="post" action="/console/account/password" class="stack">
${csrfField(s.csrfToken)}
<input type="email" name="username" value="${s.member.email}" autocomplete="username" hidden>
<label for="f-current">Current password</label> <input type="password" name="current" autocomplete="current-password" required id="f-current">
<label for="f-next">New password</label> <input type="password" name="next" autocomplete="new-password" required minlength="12" id="f-next">
<button type="submit">Change password</button>
</form>
<p class="muted">Changing the password ends every session of yours, this one too.</p>`,
      request,
      '/console/account',
    );
  };

  scope.get('/account', async (request, reply) => accountPage(request, reply, 200));
  scope.post('/account/password', async (request, reply) => {
    const form = request.body as Form;
    try {
      await changePassword(db, request.member, { current: form.current, next: form.next }, actorOf(request), now());
    } catch (err) {
      if (err instanceof ApiError && err.statusCode < 500) return accountPage(request, reply, err.statusCode, notice(err.message));
      throw err;
    }
    clearSessionCookie(reply, deps);
    return reply.redirect('/console/sign-in', 303);
  });
}
