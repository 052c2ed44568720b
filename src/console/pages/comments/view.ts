import type { CommentList } from '../../../contract/schemas/comments.js';
import type { ConsoleSession } from '../../../domain/sessions.js';
import { DAY_MS, ymd } from '../../../domain/time.js';
import { csrfField, html, type PageOptions, type Safe } from '../../html.js';
import { navFor } from '../../views/nav.js';
import { PLAIN, type Speaker } from '../../words.js';
import { commentsHref as href, FILTERS, type Filters } from './form.js';

export interface CommentsData {
  session: ConsoleSession;
  filters: Filters;
  /** GET /v1/comments' answer for the filters, each item's handle, and the range's hidden comments. */
  list: CommentList;
  handles: string[];
  hidden: { comment: string; handle: string }[];
  teams: { id: string; name: string }[];
  /** The Monday (UTC) that starts the current week: no link leads past it. */
  thisWeek: Date;
  message?: Safe;
  /** Dates in the reader's locale (PLAIN: en-GB). */
  speaker?: Speaker;
  /** A manager's page: their teams only, one at a time, never the whole organization. */
  scoped?: boolean;
}

/**
 * The comments page: exactly GET /v1/comments' answer, nothing beside a comment but its text; for
 * admins and owners a hide button per comment and the range's hidden comments with a show button.
 */
export function commentsView({
  session: s,
  filters: f,
  list,
  handles,
  hidden,
  teams,
  thisWeek,
  message,
  speaker: sp = PLAIN,
  scoped = false,
}: CommentsData): PageOptions {
  const canChange = s.member.role === 'owner' || s.member.role === 'admin';
  const team = teams.find((t) => t.id === f.subteamId);
  const monday = Date.parse(`${list.from}T00:00:00.000Z`);
  const week = (m: number) => ({ from: ymd(new Date(m)), to: ymd(new Date(m + 6 * DAY_MS)), subteamId: f.subteamId });
  const back = { ...f, cursor: undefined };
  const returnFields = html`${FILTERS.map((k) => (f[k] !== undefined ? html`<input type="hidden" name="${k}" value="${f[k]}">` : ''))}`;
  const change = (
    what: 'hide' | 'show',
    handle: string,
    i: number,
  ) => html`<form method="post" action="/console/comments/${what}">${csrfField(s.csrfToken)}${returnFields}
<input type="hidden" name="handle" value="${handle}"><button type="submit" class="${what === 'hide' ? 'danger' : 'secondary'}" aria-label="${what === 'hide' ? 'Hide' : 'Show again'} comment ${i + 1}">${what === 'hide' ? 'Hide' : 'Show again'}</button></form>`;
  return {
    title: 'Comments',
    nav: navFor(s, '/console/comments'),
    body: html`<h1>Comments</h1>
${message ?? ''}
<p>Anonymous comments are released a whole week and a whole group of at least 5 pulses at a time, once the week has ended; this page shows exactly what <code>GET /v1/comments</code> answers, and never who, when, which team or which level wrote a comment.</p>
<form method="get" action="/console/comments" class="filters">
<label for="f-from">From</label> <input type="date" name="from" id="f-from" value="${f.from ?? ''}">
<label for="f-to">To</label> <input type="date" name="to" id="f-to" value="${f.to ?? ''}">
<label for="f-team">Team</label> <select name="subteamId" id="f-team">${scoped ? '' : html`<option value="">(whole organization)</option>`}${teams.map(
      (t) => html`<option value="${t.id}"${t.id === f.subteamId ? html` selected` : ''}>${t.name}</option>`,
    )}</select>
<button type="submit">Show</button>
</form>
<p><a href="${href(week(monday - 7 * DAY_MS))}">Previous week</a>${monday + 7 * DAY_MS <= thisWeek.getTime() ? html` · <a href="${href(week(monday + 7 * DAY_MS))}">Next week</a>` : ''}</p>
<h2>${team ? html`Team <bdi>${team.name}</bdi>` : 'Whole organization'}: weeks ${sp.day(list.from)} to ${sp.day(list.to)}</h2>
<dl class="facts">
<dt>Released through</dt><dd>${list.releasedThrough === null ? 'no week of this range is released yet' : sp.day(list.releasedThrough)}</dd>
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
${canChange ? '' : html`<p class="muted">${scoped ? 'Managers' : 'Viewers'} can read comments but not hide them.</p>`}`,
  };
}
