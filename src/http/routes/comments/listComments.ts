import { listCommentPage } from '../../../domain/comments.js';
import { CommentListQuerySchema, CommentListSchema } from '../../../contract/schemas/comments.js';
import { responses } from '../../../contract/schemas/responses.js';
import type { App, RouteDeps } from '../types.js';

export function registerListComments(app: App, { db, commentCursors, now }: RouteDeps) {
  app.get(
    '/comments',
    {
      schema: {
        operationId: 'listComments',
        summary: 'Anonymous comments of CLEAN pulses',
        description:
          'Calendar days [from, to], both inclusive, default the last 30 days. When the range and team hold fewer than 5 pulses the answer is suppressed. Items carry the comment text only.',
        tags: ['comments'],
        querystring: CommentListQuerySchema,
        response: responses(CommentListSchema, 'A page of comments.'),
      },
    },
    async (request) => listCommentPage(db, request.principal.orgId, request.query, commentCursors, now()),
  );
}
