import { createAction } from '../../../domain/actions.js';
import { requireJsonObject } from '../../../http/plugins/index.js';
import { createOnce, keyActor } from '../../plugins/writes.js';
import { ActionIdSchema, CreateActionBodySchema } from '../../../contract/schemas/actions.js';
import { IdempotencyHeadersSchema, NoQuerySchema } from '../../../contract/schemas/common.js';
import { responses } from '../../../contract/schemas/responses.js';
import type { App, RouteDeps } from '../types.js';

export function registerCreateAction(app: App, { db, now }: RouteDeps) {
  app.post(
    '/actions',
    {
      preValidation: requireJsonObject,
      schema: {
        operationId: 'createAction',
        summary: 'Create an improvement action',
        description:
          'startDate and createdAt are the time of creation; status starts active. subteamId must name a team of the organization. Requires Idempotency-Key.',
        tags: ['actions'],
        querystring: NoQuerySchema,
        headers: IdempotencyHeadersSchema,
        body: CreateActionBodySchema,
        response: responses(ActionIdSchema, 'The id of the action created (or, on a replay, of the one created the first time).', {
          write: true,
          conflict: 'idempotency_key_reused: the Idempotency-Key was used for a different request.',
          replayHeader: true,
        }),
      },
    },
    async (request, reply) => createOnce(db, request, reply, (tx) => createAction(tx, request.principal.orgId, request.body, keyActor(request), now())),
  );
}
