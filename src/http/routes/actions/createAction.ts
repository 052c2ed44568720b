import { createAction } from '../../../domain/actions.js';
import { checkIdempotencyKey, once } from '../../../domain/idempotency.js';
import { canonicalPath, requireJsonObject, sendOutcome } from '../../plugins/writes.js';
import { ActionIdSchema, CreateActionBodySchema } from '../../schemas/actions.js';
import { IdempotencyHeadersSchema } from '../../schemas/common.js';
import { responses } from '../../schemas/responses.js';
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
        headers: IdempotencyHeadersSchema,
        body: CreateActionBodySchema,
        response: responses(ActionIdSchema, 'The id of the action created (or, on a replay, of the one created the first time).', {
          conflict: true,
          replayHeader: true,
        }),
      },
    },
    async (request, reply) => {
      const key = checkIdempotencyKey(request.headers['idempotency-key']);
      const { orgId, keyId } = request.principal;
      const outcome = await once(
        db,
        { orgId, apiKeyId: keyId, key },
        { method: 'POST', path: canonicalPath(request), body: request.body },
        (tx) => createAction(tx, orgId, request.body, now()),
      );
      return sendOutcome(reply, outcome);
    },
  );
}
