import { listCommentPage } from '../../../domain/comments.js';
import { CommentListQuerySchema, CommentListSchema } from '../../../contract/schemas/comments.js';
import { responses } from '../../../contract/schemas/responses.js';
import type { App, RouteDeps } from '../types.js';

export function registerListComments(app: App, { db, comments, now }: RouteDeps) {
  app.get(
    '/comments',
    {
      schema: {
        operationId: 'listComments',
        summary: 'Anonymous comments, released a whole week and group at a time',
        description: [
          'Comments of CLEAN pulses are released as whole cells, so that no sequence of requests can tie a comment to fewer than 5 pulses (see docs/privacy.md):',
          '- A cell is one ISO week (UTC, Monday to Sunday) of one team, or of the pulses without a team. Its sample is its number of CLEAN pulses, with or without a comment; FLAGGED pulses do not count.',
          '- A week is released once it has ended and `COMMENTS_RELEASE_DELAY_HOURS` (default 24) have passed; comments of a week not yet released are never returned.',
          "- In a released week, a cell with a sample of at least 5 is released. Cells of 1-4 are pooled into the week's remainder, released only without `subteamId` and only when its pooled sample is at least 5.",
          "- The first answer that covers a released week (one that holds pulses) freezes it: pulses that reach it later form late pools per team, released as new whole cells of at least 5. If a released comment's pulse stops being CLEAN, that comment alone leaves every answer (it returns if the pulse becomes CLEAN again); GET /pulses keeps each pulse's status as at the release.",
          '',
          '`from` and `to` are calendar days, both inclusive (default: the last 30 days); the answer covers every week that overlaps them, whole, and echoes the first Monday and last Sunday in `from` and `to`, and the last released Sunday in `releasedThrough`. Items carry the comment text only.',
        ].join('\n'),
        tags: ['comments'],
        querystring: CommentListQuerySchema,
        response: responses(CommentListSchema, 'A page of released comments.'),
      },
    },
    async (request) => listCommentPage(db, request.principal.orgId, request.query, comments, now()),
  );
}
