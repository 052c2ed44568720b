import { updateAction } from '../../../domain/actions.js';
import { requireJsonObject } from '../../../http/plugins/index.js';
import { keyActor } from '../../plugins/writes.js';
import { ActionIdParamsSchema, ActionIdSchema, UpdateActionBodySchema } from '../../../contract/schemas/actions.js';
import { NoQuerySchema } from '../../../contract/schemas/common.js';
import { responses } from '../../../contract/schemas/responses.js';
import type { App, RouteDeps } from '../types.js';

export function registerUpdateAction(app: App, { db, now }: RouteDeps) {
  app.patch(
    '/actions/:id',
    {
      preValidation: requireJsonObject,
      schema: {
        operationId: 'updateAction',
        summary: 'Edit an improvement action',
        description:
          "At least one field; a field left out keeps its value. description, endDate and subteamId take null to clear. endDate must not be before the action's startDate; subteamId must name a team of the organization. status: active -> done or cancelled, done or cancelled -> active; the status the action already has is accepted and changes nothing; done <-> cancelled directly is 409 invalid_transition. An action of another organization is 404. Raises the webhook event action.updated when something visible changed.",
        tags: ['actions'],
        querystring: NoQuerySchema,
        params: ActionIdParamsSchema,
        body: UpdateActionBodySchema,
        response: responses(ActionIdSchema, 'The id of the action edited.', {
          write: true,
          conflict: 'invalid_transition: status done -> cancelled or cancelled -> done; reopen (status active) first.',
        }),
      },
    },
    async (request) => db.transaction((tx) => updateAction(tx, request.principal.orgId, request.params.id, request.body, keyActor(request), now())),
  );
}
