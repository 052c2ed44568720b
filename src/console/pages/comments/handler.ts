import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { DatabaseExecutor } from '../../../domain/database.js';
import { listCommentPageWithHandles, updateCommentHidden, type CommentReleases } from '../../../domain/comments.js';
import { listOrgTeams } from '../../../domain/teams.js';
import { startOfIsoWeek } from '../../../domain/time.js';
import { notice, type Safe } from '../../html.js';
import { actorOf, CHANGERS, changeOutcome, type ConsoleDeps, type Form } from '../../plugins/index.js';
import { sendPage } from '../../views/layout.js';
import { commentQueryOf, commentsHref, filtersOfForm, filtersOfQuery, handleOf, type Filters } from './form.js';
import { commentsView } from './view.js';

const PAGE_COMMENTS = 50;

/**
 * The comments page (CONTRACT.md section 11): exactly what GET /v1/comments answers for a range and
 * team (the same domain call: cells, freezing, order, `suppressed`, late pools), nothing beside a
 * comment but its text. Admins and owners hide a released comment, or show it again, by its handle;
 * no pulse's status changes, so hiding says nothing about which pulse wrote it.
 */
export function registerCommentPages(scope: FastifyInstance, deps: ConsoleDeps & { db: DatabaseExecutor; comments: CommentReleases }) {
  const { db, now } = deps;
  const admin = { config: { roles: CHANGERS } };

  const commentsPage = async (request: FastifyRequest, reply: FastifyReply, status: number, message: Safe | undefined, filters: Filters) => {
    const s = request.member;
    const q = commentQueryOf(filters, PAGE_COMMENTS);
    const at = now();
    const [{ list, handles, hidden }, teams] = await Promise.all([listCommentPageWithHandles(db, s.orgId, q, deps.comments, at), listOrgTeams(db, s.orgId)]);
    return sendPage(reply, status, commentsView({ session: s, filters, list, handles, hidden, teams, thisWeek: startOfIsoWeek(at), message }));
  };

  scope.get('/comments', async (request, reply) => commentsPage(request, reply, 200, undefined, filtersOfQuery(request)));

  for (const hide of [true, false]) {
    scope.post<{ Body: Form }>(`/comments/${hide ? 'hide' : 'show'}`, admin, async (request, reply) => {
      const f = filtersOfForm(request.body);
      // Back to the page the form was on: its range, team and page (post, redirect, get).
      return changeOutcome(
        (rq, rp, st, msg) => commentsPage(rq, rp, st, msg, f),
        () => commentsHref(f),
      )(request, reply, async () => {
        const r = await updateCommentHidden(db, request.member.orgId, handleOf(request.body), hide, actorOf(request), now());
        return notice(
          hide
            ? r.changed
              ? 'Comment hidden: it is in no answer from now on.'
              : 'That comment was hidden already.'
            : r.changed
              ? 'Comment shown again.'
              : 'That comment was shown already.',
          'ok',
        );
      });
    });
  }
}
