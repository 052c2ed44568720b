import { editAction } from '../../../domain/actions.js';
import { requireJsonObject } from '../../plugins/writes.js';
import { ActionIdParamsSchema, ActionIdSchema, UpdateActionBodySchema } from '../../../contract/schemas/actions.js';
import { NoQuerySchema } from '../../../contract/schemas/common.js';
import { responses } from '../../../contract/schemas/responses.js';
import type { App, RouteDeps } from '../types.js';

export function registerUpdateAction(app: App, { db }: RouteDeps) {
  app.patch(
    '/actions/:id',
    {
      preValidation: requireJsonObject,
      schema: {
        operationId: 'updateAction',
        summary: 'Edit an improvement action',
        description:
          "At least one field. endDate must not be before the action's startDate; subteamId must name a team of the organization, or null to clear it. status is not writable. An action of another organization is 404.",
        tags: ['actions'],
        querystring: NoQuerySchema,
        params: ActionIdParamsSchema,
        body: UpdateActionBodySchema,
        response: responses(ActionIdSchema, 'The id of the action edited.'),
      },
    },
    async (request) => db.transaction((tx) => editAction(tx, request.principal.orgId, request.params.id, request.body)),
  );
}
