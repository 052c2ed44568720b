import type { Action } from '../../../contract/schemas/actions.js';
import type { Alert } from '../../../contract/schemas/alerts.js';
import type { ConsoleSession } from '../../../domain/sessions.js';
import type { Overview } from '../../../domain/stats.js';
import { OVERVIEW_INLINE_TEAM_DAYS, OVERVIEW_MAX_DAYS } from '../../../domain/stats.js';
import { DAY_MS, startOfUtcDay, ymd } from '../../../domain/time.js';
import type { DailyStats } from '../../../contract/schemas/stats.js';
import { html, tableRows, type PageOptions, type Safe } from '../../html.js';
import { assetHref } from '../../assets.js';
import { navFor } from '../../views/nav.js';
import { when } from '../../views/layout.js';

const PRESETS = [7, 30, 90, OVERVIEW_MAX_DAYS] as const;

export interface OverviewData {
  session: ConsoleSession;
  /** The page's time: the presets end today (UTC). */
  at: Date;
  stats: Overview;
  unread: Alert[];
  open: Action[];
  /** More actions are open than `open` lists. */
  moreOpen: boolean;
}

/**
 * One chart with its table (the chart's text alternative, and its data: the console's script draws
 * the chart from the table's cells, so the two cannot disagree).
 */
function series(id: string, title: string, days: DailyStats['days']): Safe {
  const table = html`<table id="${id}" data-chart-table>
<caption>${title}: pulses and average level per day</caption>
<thead><tr><th scope="col">Date</th><th scope="col">Pulses</th><th scope="col">Average level</th></tr></thead>
<tbody>${tableRows(days.length, (i) => [days[i].date, days[i].count, days[i].avg.toFixed(2)])}</tbody>
</table>`;
  return html`<figure class="series" id="${id}-figure">
<figcaption>${title}</figcaption>
${
  days.length === 0
    ? html`<p class="muted">No pulses in this range.</p>`
    : html`<div class="chart" data-chart-for="${id}" role="img" aria-label="Chart of ${title}: daily average level and pulse count. The same figures are in the table."></div>
<details><summary>${title}: the figures as a table</summary>${table}</details>`
}
</figure>`;
}

/** The overview: mood per day for the organization and each team (charts and their tables), unread alerts, open actions. */
export function overviewView({ session: s, at, stats: o, unread, open, moreOpen }: OverviewData): PageOptions {
  const today = ymd(startOfUtcDay(at));
  const withTeam = (q: Record<string, string>, team: string | null) => new URLSearchParams(team ? { ...q, team } : q).toString();
  const preset = (n: number) => withTeam({ from: ymd(new Date(startOfUtcDay(at).getTime() - (n - 1) * DAY_MS)), to: today }, o.team);
  const range = { from: o.fromDate, to: o.toDate };
  const charted = o.teams.map((t, i) => ({ ...t, i })).filter((t) => t.days !== null);
  return {
    title: 'Overview',
    nav: navFor(s, '/console/overview'),
    scripts: [assetHref('uplot.js'), assetHref('charts.js')],
    styles: [assetHref('uplot.css')],
    body: html`<h1>Overview</h1>
<p>Mood of ${s.orgName} per day (UTC), from ${o.fromDate} to ${o.toDate}: the same figures as <code>GET /v1/stats/daily?from=${o.organization.from}&amp;to=${o.organization.to}</code>.</p>
<form method="get" action="/console/overview" class="filters">
<label for="f-from">From</label> <input type="date" name="from" id="f-from" value="${o.fromDate}" required>
<label for="f-to">To</label> <input type="date" name="to" id="f-to" value="${o.toDate}" required>
${
  o.teams.length > 0
    ? html`<label for="f-team">Team chart</label> <select name="team" id="f-team"><option value="">${o.inline ? 'every team' : '(none)'}</option>${o.teams.map(
        (t) => html`<option value="${t.id}"${t.id === o.team ? html` selected` : ''}>${t.name}</option>`,
      )}</select>`
    : ''
}
<button type="submit">Show</button>
</form>
<p>Last: ${PRESETS.map((n, i) => html`${i > 0 ? ' · ' : ''}<a href="/console/overview?${preset(n)}">${n === OVERVIEW_MAX_DAYS ? 'year' : `${n} days`}</a>`)}</p>
<h2>${s.orgName}</h2>
${series('days-org', `All of ${s.orgName}`, o.organization.days)}
<section aria-labelledby="unread-heading">
<h2 id="unread-heading">Unread alerts</h2>
${
  unread.length === 0
    ? html`<p>No unread alerts.</p>`
    : html`<ul>${unread.map((a) => html`<li><bdi>${a.message}</bdi> <span class="muted">(${a.type}${a.subteamName ? html`, <bdi>${a.subteamName}</bdi>` : ''}, ${when(a.createdAt)})</span></li>`)}</ul>`
}
<p><a href="/console/alerts">All alerts</a></p>
</section>
<section aria-labelledby="actions-heading">
<h2 id="actions-heading">Open actions</h2>
${
  open.length === 0
    ? html`<p>No open actions.</p>`
    : html`<ul>${open.map((a) => html`<li><bdi>${a.title}</bdi>${a.subteamName ? html` <span class="muted">(<bdi>${a.subteamName}</bdi>)</span>` : ''}${a.endDate ? html` <span class="muted">until ${when(a.endDate)}</span>` : ''}</li>`)}</ul>`
}
<p><a href="/console/actions">All actions</a>${moreOpen ? ` (more than ${open.length} open)` : ''}</p>
</section>
${
  o.teams.length > 0
    ? html`<section aria-labelledby="teams-heading">
<h2 id="teams-heading">Teams</h2>
<table id="teams-summary">
<caption>Teams from ${o.fromDate} to ${o.toDate}: pulses and average level over the range</caption>
<thead><tr><th scope="col">Team</th><th scope="col">Pulses</th><th scope="col">Average level</th><th scope="col">Daily chart</th></tr></thead>
<tbody>${o.teams.map(
        (t, i) =>
          html`<tr><td><bdi>${t.name}</bdi></td><td>${t.count}</td><td>${t.avg === null ? '–' : t.avg.toFixed(2)}</td><td>${
            t.days !== null
              ? html`<a href="#days-team-${i}-figure">below<span class="visually-hidden">: the daily chart of <bdi>${t.name}</bdi></span></a>`
              : html`<a href="/console/overview?${withTeam(range, t.id)}#days-team-${i}-figure">show<span class="visually-hidden"> the daily chart of <bdi>${t.name}</bdi></span></a>`
          }</td></tr>`,
      )}</tbody>
</table>
${o.inline ? '' : html`<p>Every team's chart is on the page while that is at most ${OVERVIEW_INLINE_TEAM_DAYS} days of figures (${o.teams.length} teams over this range is more): choose a team above, or in its row.${o.team ? html` <a href="/console/overview?${withTeam(range, null)}">Close the team chart</a>` : ''}</p>`}
${charted.map((t) => series(`days-team-${t.i}`, `Team ${t.name}`, t.days!))}
</section>`
    : ''
}`,
  };
}
