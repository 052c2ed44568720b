import { operatorActor } from '../../domain/audit.js';
import { requireLiveOrg } from '../../domain/orgs.js';
import { listMemberPasskeys, readPasskeySettings, removeMemberPasskey, updateRequirePasskeys } from '../../domain/passkeys.js';
import { requireJsonObject } from '../../http/plugins/index.js';
import { AdminNoQuerySchema, OrgIdParamsSchema, OrgItemParamsSchema, adminResponses } from '../../contract/schemas/admin-common.js';
import { OperatorPasskeyListSchema, OperatorPasskeySchema, PasskeySettingsPatchSchema, PasskeySettingsSchema } from '../../contract/schemas/admin-passkeys.js';
import { Type } from 'typebox';
import type { AdminRouteDeps, App } from './types.js';

const MemberPasskeyParamsSchema = Type.Object(
  {
    orgId: Type.String({ minLength: 1, maxLength: 128, description: 'Organization id.' }),
    memberId: Type.String({ minLength: 1, maxLength: 128, description: 'Member id (mem_...).' }),
    passkeyId: Type.String({ minLength: 1, maxLength: 128, description: 'Passkey id (pk_...).' }),
  },
  { additionalProperties: false },
);

/**
 * Members' passkeys and the organization's "passkeys required for owners and admins" (issue 55,
 * item 6): the operator's way back in for a member, or a sole owner, who lost every passkey.
 * Each change is audited as the console's own (`member.passkey_removed`,
 * `organization.passkeys_required`), with the operator as actor.
 */
export function registerPasskeyRoutes(app: App, { db, now }: AdminRouteDeps) {
  const tags = ['members'];
  app.get(
    '/organizations/:orgId/members/:memberId/passkeys',
    {
      schema: {
        operationId: 'listMemberPasskeys',
        summary: "A member's passkeys",
        description: 'Oldest first: name, when added and last used, whether synced. Never the public key or the whole credential id.',
        tags,
        querystring: AdminNoQuerySchema,
        params: OrgItemParamsSchema('memberId', 'Member id (mem_...).'),
        response: adminResponses(OperatorPasskeyListSchema, 'Every passkey of the member, oldest first (none: an empty list).'),
      },
    },
    async (request) => ({ items: await listMemberPasskeys(db, request.params.orgId, request.params.memberId) }),
  );

  app.delete(
    '/organizations/:orgId/members/:memberId/passkeys/:passkeyId',
    {
      schema: {
        operationId: 'removeMemberPasskey',
        summary: "Remove a member's passkey",
        description:
          'It signs in nowhere from then on (a lost or stolen device). Unlike the member in the console, the operator may remove the last passkey of an owner or admin while passkeys are required: they then sign in with their password, are held, and add a new one. Sessions already open stay open (remove the member to end them).',
        tags,
        querystring: AdminNoQuerySchema,
        params: MemberPasskeyParamsSchema,
        response: adminResponses(OperatorPasskeySchema, 'The passkey as removed.'),
      },
    },
    async (request) => removeMemberPasskey(db, request.params.orgId, request.params.memberId, request.params.passkeyId, operatorActor(request.ip), now()),
  );

  app.get(
    '/organizations/:orgId/passkey-settings',
    {
      schema: {
        operationId: 'getPasskeySettings',
        summary: 'Whether passkeys are required for owners and admins',
        description: 'Set by an owner in the console (Members page), or by the operator.',
        tags,
        querystring: AdminNoQuerySchema,
        params: OrgIdParamsSchema,
        response: adminResponses(PasskeySettingsSchema, 'The setting (default: not required).'),
      },
    },
    async (request) => readPasskeySettings(db, request.params.orgId),
  );

  app.patch(
    '/organizations/:orgId/passkey-settings',
    {
      preValidation: requireJsonObject,
      schema: {
        operationId: 'updatePasskeySettings',
        summary: 'Require passkeys for owners and admins, or stop',
        description:
          'Turning it off lets an owner or admin who lost every passkey back in with their password and second factor (then they add a new one and an owner turns it on again). Unlike an owner in the console, the operator needs no passkey to turn it on: owners and admins without one are held at their next request until they add one. Audited as organization.passkeys_required, even when the value does not change.',
        tags,
        querystring: AdminNoQuerySchema,
        params: OrgIdParamsSchema,
        body: PasskeySettingsPatchSchema,
        response: adminResponses(PasskeySettingsSchema, 'The setting as changed.'),
      },
    },
    async (request) => {
      await requireLiveOrg(db, request.params.orgId);
      await updateRequirePasskeys(db, request.params.orgId, request.body.required, operatorActor(request.ip), now());
      return readPasskeySettings(db, request.params.orgId);
    },
  );
}
