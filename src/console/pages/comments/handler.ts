import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ApiError } from '../../../contract/errors.js';
import type { DatabaseExecutor } from '../../../domain/database.js';
import { listCommentPageWithHandles, updateCommentHidden, type CommentReleases } from '../../../domain/comments.js';
import { listOrgTeams } from '../../../domain/teams.js';
import { startOfIsoWeek } from '../../../domain/time.js';
import { notice, type Safe } from '../../html.js';
import { actorOf, CHANGERS, changeOutcome, EVERY_MEMBER, refusedRole, type ConsoleDeps, type Form } from '../../plugins/index.js';
import { speakerOf } from '../../views/speaker.js';
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
    const managed = request.managedTeams;
    const [{ list, handles, hidden }, allTeams, speaker] = await Promise.all([
      listCommentPageWithHandles(db, s.orgId, q, deps.comments, at),
      listOrgTeams(db, s.orgId),
      speakerOf(db, request),
    ]);
    const teams = managed === null ? allTeams : allTeams.filter((t) => managed.includes(t.id));
    return sendPage(
      reply,
      status,
      commentsView({ session: s, filters, list, handles, hidden, teams, thisWeek: startOfIsoWeek(at), message, speaker, scoped: managed !== null }),
    );
  };

  // A manager reads one of their teams' released cells at a time (never the organization's answer,
  // which holds the other teams' and the remainder's): their first team unless they choose another;
  // another team's is refused as a page they may not see.
  scope.get('/comments', { config: { roles: EVERY_MEMBER } }, async (request, reply) => {
    const filters = filtersOfQuery(request);
    const managed = request.managedTeams;
    if (managed !== null) {
      if (filters.subteamId === undefined && managed.length > 0) filters.subteamId = managed[0];
      if (filters.subteamId === undefined || !managed.includes(filters.subteamId)) return refusedRole(reply, request.member.member.role);
    }
    return commentsPage(request, reply, 200, undefined, filters);
  });

  for (const hide of [true, false]) {
    scope.post<{ Body: Form }>(`/comments/${hide ? 'hide' : 'show'}`, admin, async (request, reply) => {
      const f = filtersOfForm(request.body);
      // Back to the page the form was on: its range, team and page (post, redirect, get).
      return changeOutcome(
        (rq, rp, st, msg) => commentsPage(rq, rp, st, msg, f),
        () => commentsHref(f),
      )(request, reply, async () => {
        const sp = await speakerOf(db, request);
        try {
          const r = await updateCommentHidden(db, request.member.orgId, handleOf(request.body), hide, actorOf(request), now());
          const said = hide ? (r.changed ? 'hidden' : 'hiddenAlready') : r.changed ? 'shown' : 'shownAlready';
          return notice(sp.t(`console.comments.${said}`), 'ok');
        } catch (err) {
          // The domain's refusal in the reader's words: an unknown handle is the one it expects here.
          if (err instanceof ApiError && err.code === 'not_found') throw new ApiError(err.code, sp.t('console.comments.notFound'), err.headers);
          throw err;
        }
      });
    });
  }
}
