import { createTeam } from '../../../domain/teams.js';
import { requireJsonObject } from '../../../http/plugins/index.js';
import { createOnce, keyActor } from '../../plugins/writes.js';
import { IdempotencyHeadersSchema, NoQuerySchema } from '../../../contract/schemas/common.js';
import { responses } from '../../../contract/schemas/responses.js';
import { CreatedTeamSchema, CreateTeamBodySchema } from '../../../contract/schemas/teams.js';
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
        querystring: NoQuerySchema,
        headers: IdempotencyHeadersSchema,
        body: CreateTeamBodySchema,
        response: responses(CreatedTeamSchema, 'The team created (or, on a replay, the one created the first time).', {
          write: true,
          conflict:
            'team_name_taken: the name is already used in the organization (case-insensitive, trimmed); idempotency_key_reused: the Idempotency-Key was used for a different request.',
          replayHeader: true,
        }),
      },
    },
    async (request, reply) => createOnce(db, request, reply, (tx) => createTeam(tx, request.principal.orgId, request.body.name, keyActor(request), now())),
  );
}
