import { checkIdempotencyKey, once } from '../../../domain/idempotency.js';
import { createTeam } from '../../../domain/teams.js';
import { canonicalPath, requireJsonObject, sendOutcome } from '../../plugins/writes.js';
import { IdempotencyHeadersSchema } from '../../schemas/common.js';
import { responses } from '../../schemas/responses.js';
import { CreatedTeamSchema, CreateTeamBodySchema } from '../../schemas/teams.js';
import type { App, RouteDeps } from '../types.js';

export function registerCreateTeam(app: App, { db, now }: RouteDeps) {
  app.post(
    '/teams',
    {
      preValidation: requireJsonObject,
      schema: {
        operationId: 'createTeam',
        summary: 'Create a team',
        description:
          'The name is trimmed and must be 1-80 characters; names are unique in the organization regardless of case (409 team_name_taken). Requires Idempotency-Key.',
        tags: ['teams'],
        headers: IdempotencyHeadersSchema,
        body: CreateTeamBodySchema,
        response: responses(CreatedTeamSchema, 'The team created (or, on a replay, the one created the first time).', {
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
        (tx) => createTeam(tx, orgId, request.body.name, now()),
      );
      return sendOutcome(reply, outcome);
    },
  );
}
