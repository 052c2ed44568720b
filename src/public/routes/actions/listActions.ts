import { listActionItems } from '../../../domain/actions.js';
import { ActionListSchema } from '../../../contract/schemas/actions.js';
import { NoQuerySchema } from '../../../contract/schemas/common.js';
import { responses } from '../../../contract/schemas/responses.js';
import type { App, RouteDeps } from '../types.js';

export function registerListActions(app: App, { db }: RouteDeps) {
  app.get(
    '/actions',
    {
      schema: {
        operationId: 'listActions',
        summary: 'All improvement actions, newest first',
        tags: ['actions'],
        querystring: NoQuerySchema,
        response: responses(ActionListSchema, 'Every action; each carries its id under the key `$id`.'),
      },
    },
    async (request) => ({ items: await listActionItems(db, request.principal.orgId) }),
  );
}
