import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { DatabaseExecutor } from '../../../domain/database.js';
import { listCommentPageWithHandles, setCommentHidden, type CommentReleases } from '../../../domain/comments.js';
import { listOrgTeams } from '../../../domain/teams.js';
import { DAY_MS, startOfIsoWeek, ymd } from '../../../domain/time.js';
import { CommentListQuerySchema, type CommentListQuery } from '../../../contract/schemas/comments.js';
import { csrfField, html, notice, type Safe } from '../../html.js';
import { actorOf, asApiRequest, CHANGERS, changeOutcome, queryText, type ConsoleDeps, type Form } from '../../plugins/index.js';
import { navFor } from '../../views/nav.js';
import { sendPage } from '../../views/layout.js';

const PAGE_COMMENTS = 50;
const FILTERS = ['from', 'to', 'subteamId', 'cursor'] as const;
type Filters = Partial<Record<(typeof FILTERS)[number], string>>;

const href = (f: Filters) => {
  const q = new URLSearchParams(Object.entries(f).filter(([, v]) => v !== undefined) as [string, string][]).toString();
  return `/console/comments${q ? `?${q}` : ''}`;
};

/**
 * The comments page (CONTRACT.md section 11): exactly what GET /v1/comments answers for a range and
 * team (the same domain call: cells, freezing, order, `suppressed`, late pools), nothing beside a
 * comment but its text. Admins and owners hide a released comment, or show it again, by its handle;
 * no pulse's status changes, so hiding says nothing about which pulse wrote it.
 */
export function registerCommentPages(scope: FastifyInstance, deps: ConsoleDeps & { db: DatabaseExecutor; comments: CommentReleases }) {
  const { db, now } = deps;

  const commentsPage = async (request: FastifyRequest, reply: FastifyReply, status: number, message: Safe | undefined, f: Filters) => {
    const s = request.member;
    const canChange = s.member.role !== 'viewer';
    const q = asApiRequest<CommentListQuery>(
      CommentListQuerySchema,
      { ...Object.fromEntries(Object.entries(f).filter(([, v]) => v !== undefined)), limit: PAGE_COMMENTS },
      'querystring',
    );
    const [{ list, handles, hidden }, teams] = await Promise.all([listCommentPageWithHandles(db, s.orgId, q, deps.comments, now()), listOrgTeams(db, s.orgId)]);
    const team = teams.find((t) => t.id === f.subteamId);
    const monday = Date.parse(`${list.from}T00:00:00.000Z`);
    const week = (m: number) => ({ from: ymd(new Date(m)), to: ymd(new Date(m + 6 * DAY_MS)), subteamId: f.subteamId });
    const thisWeek = startOfIsoWeek(now()).getTime();
    const back = { ...f, cursor: undefined };
    const returnFields = html`${FILTERS.map((k) => (f[k] !== undefined ? html`<input type="hidden" name="${k}" value="${f[k]}">` : ''))}`;
    const change = (
      what: 'hide' | 'show',
      handle: string,
      i: number,
    ) => html`<form method="post" action="/console/comments/${what}">${csrfField(s.csrfToken)}${returnFields}
<input type="hidden" name="handle" value="${handle}"><button type="submit" class="${what === 'hide' ? 'danger' : 'secondary'}" aria-label="${what === 'hide' ? 'Hide' : 'Show again'} comment ${i + 1}">${what === 'hide' ? 'Hide' : 'Show again'}</button></form>`;
    return sendPage(reply, status, {
      title: 'Comments',
      nav: navFor(s, '/console/comments'),
      body: html`<h1>Comments</h1>
${message ?? ''}
<p>Anonymous comments are released a whole week and a whole group of at least 5 pulses at a time, once the week has ended; this page shows exactly what <code>GET /v1/comments</code> answers, and never who, when, which team or which level wrote a comment.</p>
<form method="get" action="/console/comments" class="filters">
<label for="f-from">From</label> <input type="date" name="from" id="f-from" value="${f.from ?? ''}">
<label for="f-to">To</label> <input type="date" name="to" id="f-to" value="${f.to ?? ''}">
<label for="f-team">Team</label> <select name="subteamId" id="f-team"><option value="">(whole organization)</option>${teams.map(
        (t) => html`<option value="${t.id}"${t.id === f.subteamId ? html` selected` : ''}>${t.name}</option>`,
      )}</select>
<button type="submit">Show</button>
</form>
<p><a href="${href(week(monday - 7 * DAY_MS))}">Previous week</a>${monday + 7 * DAY_MS <= thisWeek ? html` · <a href="${href(week(monday + 7 * DAY_MS))}">Next week</a>` : ''}</p>
<h2>${team ? html`Team <bdi>${team.name}</bdi>` : 'Whole organization'}: weeks ${list.from} to ${list.to}</h2>
<dl class="facts">
<dt>Released through</dt><dd>${list.releasedThrough ?? 'no week of this range is released yet'}</dd>
<dt>Withheld comments</dt><dd>${list.suppressed ? 'yes: some groups of this range have fewer than 5 pulses, or late pulses wait for 5' : 'none'}</dd>
</dl>
${
  list.items.length === 0
    ? html`<p>No comments in this range.</p>`
    : html`<ol class="comments">${list.items.map((c, i) => html`<li><bdi>${c.comment}</bdi>${canChange ? change('hide', handles[i], i) : ''}</li>`)}</ol>`
}
${list.nextCursor ? html`<p><a href="${href({ ...back, cursor: list.nextCursor })}">Next page</a></p>` : ''}
${f.cursor ? html`<p><a href="${href(back)}">First page</a></p>` : ''}
${
  canChange && hidden.length > 0
    ? html`<h2>Hidden comments</h2>
<p>Hidden by an admin of ${s.orgName}: they are in no answer of the API until shown again.</p>
<ol class="comments">${hidden.map((c, i) => html`<li><bdi>${c.comment}</bdi>${change('show', c.handle, i)}</li>`)}</ol>`
    : ''
}
${canChange ? '' : html`<p class="muted">Viewers can read comments but not hide them.</p>`}`,
    });
  };
  const filtersOf = (source: Record<string, unknown>): Filters =>
    Object.fromEntries(FILTERS.map((k) => [k, typeof source[k] === 'string' && source[k] !== '' ? (source[k] as string) : undefined]));
  const admin = { config: { roles: CHANGERS } };

  scope.get('/comments', async (request, reply) => {
    const f = Object.fromEntries(FILTERS.map((k) => [k, queryText(request, k)])) as Filters;
    return commentsPage(request, reply, 200, undefined, f);
  });

  for (const hide of [true, false]) {
    scope.post<{ Body: Form }>(`/comments/${hide ? 'hide' : 'show'}`, admin, async (request, reply) => {
      const f = filtersOf(request.body);
      // Back to the page the form was on: its range, team and page (post, redirect, get).
      return changeOutcome(
        (rq, rp, st, msg) => commentsPage(rq, rp, st, msg, f),
        () => href(f),
      )(request, reply, async () => {
        const r = await setCommentHidden(db, request.member.orgId, request.body.handle ?? '', hide, actorOf(request), now());
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
