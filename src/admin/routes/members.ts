import { inviteMember, listInvitations, listMembers, deleteMember, revokeInvitation, setMemberRoleAndTeams } from '../../domain/members.js';
import { operatorActor } from '../../domain/audit.js';
import { requireJsonObject } from '../../http/plugins/index.js';
import { AdminNoQuerySchema, OrgIdParamsSchema, OrgItemParamsSchema, adminResponses } from '../../contract/schemas/admin-common.js';
import {
  CreatedInvitationSchema,
  CreateInvitationBodySchema,
  InvitationListSchema,
  InvitationSchema,
  MemberListSchema,
  MemberSchema,
  UpdateMemberBodySchema,
} from '../../contract/schemas/admin-members.js';
import { consoleBaseUrl } from '../../config.js';
import type { AdminRouteDeps, App } from './types.js';

/** The console's members and invitations (CONTRACT.md sections 10 and 11). */
export function registerMemberRoutes(app: App, { db, now, config }: AdminRouteDeps) {
  app.post(
    '/organizations/:orgId/invitations',
    {
      preValidation: requireJsonObject,
      schema: {
        operationId: 'createInvitation',
        summary: 'Invite a member to the console',
        description:
          'A single-use link, valid 72 hours, with which the person sets a password and signs in to the console. The link (`url`) appears in this answer only; the database keeps a hash of its token. A manager is invited with the teams whose figures they read.',
        tags: ['members'],
        querystring: AdminNoQuerySchema,
        params: OrgIdParamsSchema,
        body: CreateInvitationBodySchema,
        response: adminResponses(CreatedInvitationSchema, 'The invitation, with its link.', { status: 201 }),
      },
    },
    async (request, reply) => {
      const inv = await inviteMember(db, request.params.orgId, request.body, operatorActor(request.ip), now());
      reply.code(201);
      return {
        id: inv.id,
        email: inv.email,
        role: inv.role,
        teams: inv.teams,
        url: `${consoleBaseUrl(config)}/console/invitations/${inv.token}`,
        expiresAt: inv.expiresAt,
      };
    },
  );

  app.get(
    '/organizations/:orgId/invitations',
    {
      schema: {
        operationId: 'listInvitations',
        summary: 'The invitations not yet accepted',
        description: 'Pending invitations (neither accepted nor expired), newest first. Never a link or token: those appear only when an invitation is made.',
        tags: ['members'],
        querystring: AdminNoQuerySchema,
        params: OrgIdParamsSchema,
        response: adminResponses(InvitationListSchema, 'Every pending invitation, newest first.'),
      },
    },
    async (request) => ({ items: await listInvitations(db, request.params.orgId, now()) }),
  );

  app.delete(
    '/organizations/:orgId/invitations/:invitationId',
    {
      schema: {
        operationId: 'revokeInvitation',
        summary: 'Revoke an invitation',
        description: 'Its link opens nothing from now on. Only a pending invitation can be revoked: an accepted one is a member (404).',
        tags: ['members'],
        querystring: AdminNoQuerySchema,
        params: OrgItemParamsSchema('invitationId', 'Invitation id.'),
        response: adminResponses(InvitationSchema, 'The invitation as revoked.'),
      },
    },
    async (request) => revokeInvitation(db, request.params.orgId, request.params.invitationId, operatorActor(request.ip), now()),
  );

  app.get(
    '/organizations/:orgId/members',
    {
      schema: {
        operationId: 'listMembers',
        summary: "The console's members of the organization",
        description: 'Never a password hash or a two-factor secret.',
        tags: ['members'],
        querystring: AdminNoQuerySchema,
        params: OrgIdParamsSchema,
        response: adminResponses(MemberListSchema, 'Every member, oldest first.'),
      },
    },
    async (request) => ({ items: await listMembers(db, request.params.orgId) }),
  );

  app.patch(
    '/organizations/:orgId/members/:memberId',
    {
      preValidation: requireJsonObject,
      schema: {
        operationId: 'updateMember',
        summary: "Change a member's role, and a manager's teams",
        description:
          "The change applies to the member's open sessions at their next request. The last owner of an organization cannot be demoted (400); a manager needs at least one team of the organization, and no other role has teams (400). A change that changes nothing writes nothing.",
        tags: ['members'],
        querystring: AdminNoQuerySchema,
        params: OrgItemParamsSchema('memberId', 'Member id.'),
        body: UpdateMemberBodySchema,
        response: adminResponses(MemberSchema, 'The member as changed.'),
      },
    },
    async (request) =>
      setMemberRoleAndTeams(db, request.params.orgId, request.params.memberId, request.body.role, request.body.teams, operatorActor(request.ip), now()),
  );

  app.delete(
    '/organizations/:orgId/members/:memberId',
    {
      schema: {
        operationId: 'removeMember',
        summary: 'Remove a member',
        description: 'Their sessions end at once. The last owner of an organization cannot be removed (400).',
        tags: ['members'],
        querystring: AdminNoQuerySchema,
        params: OrgItemParamsSchema('memberId', 'Member id.'),
        response: adminResponses(MemberSchema, 'The member as removed.'),
      },
    },
    async (request) => deleteMember(db, request.params.orgId, request.params.memberId, operatorActor(request.ip), now()),
  );
}
