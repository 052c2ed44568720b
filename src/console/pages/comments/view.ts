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
  const { t } = sp;
  const canChange = s.member.role === 'owner' || s.member.role === 'admin';
  const team = teams.find((x) => x.id === f.subteamId);
  const monday = Date.parse(`${list.from}T00:00:00.000Z`);
  const week = (m: number) => ({ from: ymd(new Date(m)), to: ymd(new Date(m + 6 * DAY_MS)), subteamId: f.subteamId });
  const back = { ...f, cursor: undefined };
  const returnFields = html`${FILTERS.map((k) => (f[k] !== undefined ? html`<input type="hidden" name="${k}" value="${f[k]}">` : ''))}`;
  const change = (what: 'hide' | 'show', handle: string, i: number) =>
    html`<form method="post" action="/console/comments/${what}">${csrfField(s.csrfToken)}${returnFields}
<input type="hidden" name="handle" value="${handle}"><button type="submit" class="${what === 'hide' ? 'danger' : 'secondary'}" aria-label="${t(
      what === 'hide' ? 'console.comments.hideLabel' : 'console.comments.showLabel',
      { n: i + 1 },
    )}">${t(what === 'hide' ? 'console.comments.hide' : 'console.comments.showAgain')}</button></form>`;
  return {
    title: t('console.comments.title'),
    speaker: sp,
    nav: navFor(s, '/console/comments'),
    body: html`<h1>${t('console.comments.title')}</h1>
${message ?? ''}
<p>${sp.rich('console.comments.intro', { list: 'GET /v1/comments' }, { code: (chunks) => html`<code>${chunks}</code>` })}</p>
<form method="get" action="/console/comments" class="filters">
<label for="f-from">${t('console.comments.from')}</label> <input type="date" name="from" id="f-from" value="${f.from ?? ''}">
<label for="f-to">${t('console.comments.to')}</label> <input type="date" name="to" id="f-to" value="${f.to ?? ''}">
<label for="f-team">${t('console.comments.team')}</label> <select name="subteamId" id="f-team">${scoped ? '' : html`<option value="">${t('console.comments.wholeOption')}</option>`}${teams.map(
      (x) => html`<option value="${x.id}"${x.id === f.subteamId ? html` selected` : ''}>${x.name}</option>`,
    )}</select>
<button type="submit">${t('console.comments.show')}</button>
</form>
<p><a href="${href(week(monday - 7 * DAY_MS))}">${t('console.comments.previousWeek')}</a>${monday + 7 * DAY_MS <= thisWeek.getTime() ? html` · <a href="${href(week(monday + 7 * DAY_MS))}">${t('console.comments.nextWeek')}</a>` : ''}</p>
<h2>${sp.rich(
      'console.comments.heading',
      { scope: team ? 'team' : 'org', team: team?.name ?? '', from: sp.day(list.from), to: sp.day(list.to) },
      { bdi: (chunks) => html`<bdi>${chunks}</bdi>` },
    )}</h2>
<dl class="facts">
<dt>${t('console.comments.releasedThrough')}</dt><dd>${list.releasedThrough === null ? t('console.comments.releasedNone') : sp.day(list.releasedThrough)}</dd>
<dt>${t('console.comments.withheld')}</dt><dd>${list.suppressed ? t('console.comments.withheldYes') : t('console.comments.withheldNone')}</dd>
</dl>
${
  list.items.length === 0
    ? html`<p>${t('console.comments.none')}</p>`
    : html`<ol class="comments">${list.items.map((c, i) => html`<li><bdi>${c.comment}</bdi>${canChange ? change('hide', handles[i], i) : ''}</li>`)}</ol>`
}
${list.nextCursor ? html`<p><a href="${href({ ...back, cursor: list.nextCursor })}">${t('console.comments.nextPage')}</a></p>` : ''}
${f.cursor ? html`<p><a href="${href(back)}">${t('console.comments.firstPage')}</a></p>` : ''}
${
  canChange && hidden.length > 0
    ? html`<h2>${t('console.comments.hiddenHeading')}</h2>
<p>${sp.rich('console.comments.hiddenIntro', { org: html`<bdi>${s.orgName}</bdi>` })}</p>
<ol class="comments">${hidden.map((c, i) => html`<li><bdi>${c.comment}</bdi>${change('show', c.handle, i)}</li>`)}</ol>`
    : ''
}
${canChange ? '' : html`<p class="muted">${scoped ? t('console.comments.managers') : t('console.comments.viewers')}</p>`}`,
  };
}
