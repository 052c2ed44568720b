import type { Action } from '../../../contract/schemas/actions.js';
import type { Alert } from '../../../contract/schemas/alerts.js';
import type { DailyStats } from '../../../contract/schemas/stats.js';
import type { Figure, Insight, Rate, TeamTrend } from '../../../domain/insight.js';
import type { ConsoleSession } from '../../../domain/sessions.js';
import type { Overview } from '../../../domain/stats.js';
import { MINIMUM_SAMPLE, OVERVIEW_INLINE_TEAM_DAYS, OVERVIEW_MAX_DAYS } from '../../../domain/stats.js';
import { DAY_MS, startOfUtcDay, WEEK_MS, ymd } from '../../../domain/time.js';
import { assetHref } from '../../assets.js';
import { escapeHtml, html, Safe, type PageOptions } from '../../html.js';
import { navFor } from '../../views/nav.js';
import { NOUNS, PLAIN, type Speaker } from '../../words.js';
import { alertLines } from '../alerts/sentences.js';

const PRESETS = [7, 30, 90, OVERVIEW_MAX_DAYS] as const;
const MIN = MINIMUM_SAMPLE;

/** The page's words, in one place (English until the catalogue takes them). */
const W = {
  title: 'Overview',
  intro: (org: Safe, tz: string) =>
    html`How <bdi>${org}</bdi> is doing: who answered, how they feel, and how that changes. Days are UTC days; times are in ${tz}.`,
  introTeams: (tz: string) =>
    `How your teams are doing: who answered, how they feel, and how that changes. You see the teams you manage, never the organization as a whole or other teams. Days are UTC days; times are in ${tz}.`,
  noTeamRounds: `No check-in round for your teams this week or last. A team with fewer than ${MINIMUM_SAMPLE} people on the roster answers without a team, so its answers are not shown as the team's.`,
  teamChange: (t: TeamTrend, sp: Speaker) => {
    const { current: c, previous: p } = t.change;
    if (c === null) return `fewer than ${MIN} pulses came last week: too few to compare.`;
    const level = `the average level was ${sp.number(c.avg, 2)} from ${sp.count(c.count, NOUNS.pulse)}`;
    if (p === null) return `${level}; the four weeks before had fewer than ${MIN} pulses, so there is nothing to compare it with.`;
    const d = Math.round((c.avg - p.avg) * 100) / 100;
    const how = d === 0 ? 'the same as' : `${sp.number(Math.abs(d), 2)} ${d > 0 ? 'higher' : 'lower'} than`;
    return `${level}: ${how} the ${sp.number(p.avg, 2)} of the four weeks before (${sp.count(p.count, NOUNS.pulse)}).`;
  },
  teamHigh: (t: TeamTrend, sp: Speaker) =>
    t.high.share === null
      ? `The share of answers at 4 or 5 is not shown: fewer than ${MIN} pulses.`
      : `${sp.percent(t.high.share)} of its answers were 4 or 5${t.high.previousShare === null ? '.' : `, against ${sp.percent(t.high.previousShare)} in the four weeks before.`}`,
  teamTrendsIntro: (week: string, from: string) => `The week from ${week}, against the four weeks from ${from}, team by team:`,
  heatHiddenTeams: `A cell of fewer than ${MIN} pulses is hidden (“under ${MIN}”): in so few answers one person's could be told apart.`,
  now: 'This week and last',
  participationHeading: 'Participation',
  orgRate: (when: string, r: Rate | null, sp: Speaker) =>
    r === null
      ? `${when}: no check-in round.`
      : r.rate !== null
        ? `${when}: ${sp.number(r.answered!)} of ${sp.count(r.invited!, NOUNS.person)} answered (${sp.percent(r.rate)}).`
        : `${when}: ${r.invited === null ? `fewer than ${MIN} people were asked` : `${sp.count(r.invited, NOUNS.person)} asked`}, ${
            r.answered === null
              ? `and the answers are not shown: fewer than ${MIN}, or a team's count under ${MIN} could be told from the total`
              : `${sp.number(r.answered)} answered`
          }.`,
  thisWeek: (day: string) => `This week (from ${day})`,
  lastWeek: (day: string) => `Last week (from ${day})`,
  noRounds: 'No check-in round this week or last: participation comes from the check-ins (People page).',
  slotsCaption: 'Participation by team: answered of asked, this week and last',
  slotsColumns: { team: 'Team', thisWeek: 'This week', lastWeek: 'Last week' },
  noTeamSlot: 'Without a team (people without one, and teams under 5)',
  rate: (r: Rate | null, sp: Speaker) =>
    r === null
      ? 'no round'
      : r.rate !== null
        ? `${sp.percent(r.rate)} (${sp.number(r.answered!)} of ${sp.number(r.invited!)})`
        : `${r.answered === null ? `fewer than ${MIN} answered` : `${sp.number(r.answered)} answered`} of ${r.invited === null ? `fewer than ${MIN}` : sp.number(r.invited)}`,
  slotsNote: `A count under ${MIN} is not shown, and a rate only where both of its counts are.`,
  changeHeading: 'Mood: last week against the four before',
  change: (i: Insight, sp: Speaker) => {
    const { current: c, previous: p } = i.change;
    const last = `In the week from ${sp.day(i.change.week)}`;
    const before = `the four weeks from ${sp.day(i.change.previousFrom)}`;
    if (c === null) return `${last}, fewer than ${MIN} pulses came: too few to compare.`;
    const level = `the average level was ${sp.number(c.avg, 2)} from ${sp.count(c.count, NOUNS.pulse)}`;
    if (p === null) return `${last}, ${level}; ${before} had fewer than ${MIN} pulses, so there is nothing to compare it with.`;
    const d = Math.round((c.avg - p.avg) * 100) / 100;
    const how = d === 0 ? 'the same as' : `${sp.number(Math.abs(d), 2)} ${d > 0 ? 'higher' : 'lower'} than`;
    return `${last}, ${level}: ${how} the ${sp.number(p.avg, 2)} of ${before} (${sp.count(p.count, NOUNS.pulse)}).`;
  },
  high: (i: Insight, sp: Speaker) =>
    i.high.share === null
      ? `Fewer than ${MIN} pulses came last week: the share of answers at 4 or 5 is not shown.`
      : `${sp.percent(i.high.share)} of last week's answers were 4 or 5 (good or very good)${
          i.high.previousShare === null ? '.' : `, against ${sp.percent(i.high.previousShare)} in the four weeks before.`
        }`,
  heatHeading: 'Teams by week',
  heatIntro: (weeks: number, sp: Speaker) =>
    `The average level (1 to 5) of each team in each of the ${sp.count(weeks, NOUNS.week)} of the range, with the number of pulses under it. The colour follows the level; the figure is always written.`,
  heatHidden: `A cell of fewer than ${MIN} pulses is hidden (“under ${MIN}”): in so few answers one person's could be told apart. Those answers still count in the organization's row, as do the answers of teams with fewer than ${MIN} people on the roster, which answer without a team.`,
  heatCaption: (from: string, to: string) => `Average level and pulses per team and week, from ${from} to ${to}`,
  heatCorner: 'Team',
  heatOrg: 'Whole organization',
  heatUnder: `under ${MIN}`,
  heatCell: (f: NonNullable<Figure>, sp: Speaker) => ({ level: sp.number(f.avg, 1), pulses: sp.count(f.count, NOUNS.pulse) }),
  weekCol: (day: string) => `Week of ${day}`,
  dailyHeading: 'Day by day',
  dailyIntro: (org: Safe, from: string, to: string) =>
    html`The mood of <bdi>${org}</bdi> per day from ${from} to ${to}. A gap in a line is a day without a pulse.`,
  from: 'From',
  to: 'To',
  teamChart: 'Team chart',
  everyTeam: 'every team',
  noTeamChart: '(none)',
  show: 'Show',
  last: 'Last:',
  preset: (n: number) => (n === OVERVIEW_MAX_DAYS ? 'year' : `${n} days`),
  allOf: (org: string) => `All of ${org}`,
  teamOf: (t: string) => `Team ${t}`,
  noPulses: 'No pulses in this range.',
  noTeamDays: `No day of this team had ${MIN} pulses or more in this range.`,
  chartLabel: (title: string) => `Chart of ${title}: daily average level and pulse count, a gap on each day without pulses. The same figures are in the table.`,
  figures: (title: string) => `${title}: the figures as a table`,
  tableCaption: (title: string) => `${title}: pulses and average level per day`,
  teamTableCaption: (title: string) => `${title}: pulses and average level per day, days of ${MIN} pulses or more`,
  dayColumns: { date: 'Date', pulses: 'Pulses', avg: 'Average level' },
  unreadHeading: 'Unread alerts',
  noUnread: 'No unread alerts.',
  allAlerts: 'All alerts',
  actionsHeading: 'Open actions',
  noActions: 'No open actions.',
  until: (d: string) => `until ${d}`,
  allActions: 'All actions',
  moreOpen: (n: number) => ` (more than ${n} open)`,
  teamsHeading: 'Teams',
  teamsUnder: `A team's figures from fewer than ${MIN} pulses are not shown. Answers of teams under ${MIN} count in the organization's total: those of a team with fewer than ${MIN} people on the roster arrive without a team, and those of a team with fewer than ${MIN} pulses in the range are in the organization's figures above.`,
  teamsUnderTeams: `A team's figures from fewer than ${MIN} pulses are not shown: in so few answers one person's could be told apart. Those answers still count in the organization's total, which only owners, admins and viewers see.`,
  teamsCaption: (from: string, to: string) => `Teams from ${from} to ${to}: pulses and average level over the range`,
  teamsColumns: { team: 'Team', pulses: 'Pulses', avg: 'Average level', chart: 'Daily chart' },
  teamUnder: `fewer than ${MIN} pulses: counted in the organization's total only`,
  below: 'below',
  belowHidden: ': the daily chart of',
  showChart: 'show',
  showHidden: ' the daily chart of',
  notInline: (n: number) =>
    `Every team's chart is on the page while that is at most ${OVERVIEW_INLINE_TEAM_DAYS} days of figures (${n} teams over this range is more): choose a team above, or in its row.`,
  closeTeam: 'Close the team chart',
  developers: 'For developers',
  developersText: (from: string, to: string) =>
    html`<p>The organization's daily figures are the answer of <code>GET /v1/stats/daily?from=${from}&amp;to=${to}</code> (the days with at least one pulse). Its weekly figures, and the share at 4-5, are <code>GET /v1/pulses</code> over the same weeks, counted. Teams' figures come from their daily rollup, which the API does not answer; participation comes from the check-ins' unnamed links. Alerts are <code>GET /v1/alerts</code>, actions <code>GET /v1/actions</code>.</p>`,
};

export interface OverviewData {
  session: ConsoleSession;
  /** The page's time: the presets end today (UTC). */
  at: Date;
  stats: Overview;
  insight: Insight;
  unread: Alert[];
  open: Action[];
  /** More actions are open than `open` lists. */
  moreOpen: boolean;
  speaker?: Speaker;
}

/**
 * A daily table's rows without a template per row (a year is 365 of them): the day as a `time`
 * whose `datetime` the chart reads, its words in the reader's locale; the pulses; the average.
 */
function dayRows(days: DailyStats['days'], sp: Speaker): Safe {
  let out = '';
  for (const d of days) out += `<tr><td><time datetime="${d.date}">${escapeHtml(sp.day(d.date))}</time><td>${d.count}<td>${d.avg.toFixed(2)}`;
  return new Safe(out);
}

/**
 * One chart with its table (the chart's text alternative, and its data: the console's script draws
 * the chart from the table's cells, a gap on every day of [from, to] the table does not list).
 */
function series(id: string, title: string, days: DailyStats['days'], range: { from: string; to: string }, sp: Speaker, empty: string, caption: string): Safe {
  return html`<figure class="series" id="${id}-figure">
<figcaption>${title}</figcaption>
${
  days.length === 0
    ? html`<p class="muted">${empty}</p>`
    : html`<div class="chart" data-chart-for="${id}" data-from="${range.from}" data-to="${range.to}" data-locale="${sp.locale}" role="img" aria-label="${W.chartLabel(title)}"></div>
<details><summary>${W.figures(title)}</summary><table id="${id}" data-chart-table>
<caption>${caption}</caption>
<thead><tr><th scope="col">${W.dayColumns.date}</th><th scope="col">${W.dayColumns.pulses}</th><th scope="col">${W.dayColumns.avg}</th></tr></thead>
<tbody>${dayRows(days, sp)}</tbody>
</table></details>`
}
</figure>`;
}

/** A heatmap cell's colour class (h1-h5): five bands of the level, each light enough for dark text (AA); h0 is hidden. */
const band = (avg: number) => (avg < 2 ? 1 : avg < 2.75 ? 2 : avg < 3.5 ? 3 : avg < 4.25 ? 4 : 5);

/**
 * A heatmap row's cells without a template per cell (50 teams over a year is 2,650 of them). Only
 * numbers and the page's own words go in: the team's name is its row header, escaped by the template.
 */
function heatCells(cells: readonly Figure[], sp: Speaker): Safe {
  // Short classes and no optional end tags (HTML's own rule): a year of 50 teams was 330 KB.
  const hidden = `<td class="h h0">${escapeHtml(W.heatUnder)}`;
  let out = '';
  for (const f of cells) {
    if (f === null) {
      out += hidden;
      continue;
    }
    const c = W.heatCell(f, sp);
    out += `<td class="h h${band(f.avg)}"><b>${escapeHtml(c.level)}</b> ${escapeHtml(c.pulses)}`;
  }
  return new Safe(out);
}

function heatmap(i: Insight, sp: Speaker): Safe {
  const h = i.heatmap;
  const lastDay = ymd(new Date(Date.parse(`${h.weeks[h.weeks.length - 1]}T00:00:00.000Z`) + WEEK_MS - DAY_MS));
  return html`<section aria-labelledby="heat-heading">
<h2 id="heat-heading">${W.heatHeading}</h2>
<p>${W.heatIntro(h.weeks.length, sp)}</p>
<p class="note">${i.scoped ? W.heatHiddenTeams : W.heatHidden}</p>
<div class="table-scroll" role="region" aria-labelledby="heat-caption" tabindex="0"><table class="heatmap" id="heatmap">
<caption id="heat-caption">${W.heatCaption(sp.day(h.weeks[0]), sp.day(lastDay))}</caption>
<thead><tr><th scope="col">${W.heatCorner}</th>${h.weeks.map((w) => html`<th scope="col"><span aria-hidden="true">${sp.shortDay(w)}</span><span class="visually-hidden">${W.weekCol(sp.day(w))}</span></th>`)}</tr></thead>
<tbody>
${i.scoped ? '' : html`<tr class="whole"><th scope="row">${W.heatOrg}</th>${heatCells(h.organization, sp)}</tr>`}
${h.teams.map((t) => html`<tr><th scope="row"><bdi>${t.name}</bdi></th>${heatCells(t.cells, sp)}</tr>`)}
</tbody>
</table></div>
</section>`;
}

function participation(i: Insight, sp: Speaker): Safe {
  const p = i.participation;
  if (i.scoped && p.slots.length === 0) return html`<p>${W.noTeamRounds}</p>`;
  if (!i.scoped && p.organization.thisWeek === null && p.organization.lastWeek === null) return html`<p>${W.noRounds}</p>`;
  return html`${
    i.scoped
      ? ''
      : html`<ul class="figures">
<li>${W.orgRate(W.thisWeek(sp.day(i.thisWeek)), p.organization.thisWeek, sp)}</li>
<li>${W.orgRate(W.lastWeek(sp.day(i.lastWeek)), p.organization.lastWeek, sp)}</li>
</ul>`
  }
<div class="table-scroll" role="region" aria-labelledby="slots-caption" tabindex="0"><table id="participation">
<caption id="slots-caption">${W.slotsCaption}</caption>
<thead><tr><th scope="col">${W.slotsColumns.team}</th><th scope="col">${W.slotsColumns.thisWeek}</th><th scope="col">${W.slotsColumns.lastWeek}</th></tr></thead>
<tbody>${p.slots.map(
    (s) =>
      html`<tr><th scope="row">${s.teamId === null ? W.noTeamSlot : html`<bdi>${s.teamName ?? s.teamId}</bdi>`}</th><td>${W.rate(s.thisWeek, sp)}</td><td>${W.rate(s.lastWeek, sp)}</td></tr>`,
  )}</tbody>
</table></div>
<p class="muted">${W.slotsNote}</p>`;
}

/** Days of a team's series from MIN pulses: a day of fewer is left out (a gap), as every team figure under MIN. */
const shownDays = (days: DailyStats['days']) => days.filter((d) => d.count >= MIN);

/** The overview: insight first (participation, change, share at 4-5, heatmap), then alerts, actions and the daily charts. */
export function overviewView({ session: s, at, stats: o, insight, unread, open, moreOpen, speaker: sp = PLAIN }: OverviewData): PageOptions {
  const today = ymd(startOfUtcDay(at));
  const withTeam = (q: Record<string, string>, team: string | null) => new URLSearchParams(team ? { ...q, team } : q).toString();
  const preset = (n: number) => withTeam({ from: ymd(new Date(startOfUtcDay(at).getTime() - (n - 1) * DAY_MS)), to: today }, o.team);
  const range = { from: o.fromDate, to: o.toDate };
  const charted = o.teams.map((t, i) => ({ ...t, i })).filter((t) => t.days !== null);
  const lines = alertLines(unread, sp);
  const org = html`${s.orgName}`;
  return {
    title: W.title,
    nav: navFor(s, '/console/overview'),
    scripts: [assetHref('uplot.js'), assetHref('charts.js')],
    styles: [assetHref('uplot.css')],
    body: html`<h1>${W.title}</h1>
<p>${insight.scoped ? W.introTeams(sp.timeZone) : W.intro(org, sp.timeZone)}</p>
<section aria-labelledby="now-heading">
<h2 id="now-heading">${W.now}</h2>
<h3>${W.participationHeading}</h3>
${participation(insight, sp)}
<h3>${W.changeHeading}</h3>
${
  insight.scoped
    ? html`<p>${W.teamTrendsIntro(sp.day(insight.change.week), sp.day(insight.change.previousFrom))}</p>
<ul id="team-trends">${(insight.teamTrends ?? []).map((t) => html`<li><bdi>${t.name}</bdi>: ${W.teamChange(t, sp)} ${W.teamHigh(t, sp)}</li>`)}</ul>`
    : html`<p id="change">${W.change(insight, sp)}</p>
<p id="high-share">${W.high(insight, sp)}</p>`
}
</section>
<section aria-labelledby="unread-heading">
<h2 id="unread-heading">${W.unreadHeading}</h2>
${lines.length === 0 ? html`<p>${W.noUnread}</p>` : html`<ul>${lines.map((l) => html`<li>${l.sentence} <span class="muted">(${sp.when(l.createdAt)})</span></li>`)}</ul>`}
<p><a href="/console/alerts">${W.allAlerts}</a></p>
</section>
${heatmap(insight, sp)}
<section aria-labelledby="actions-heading">
<h2 id="actions-heading">${W.actionsHeading}</h2>
${
  open.length === 0
    ? html`<p>${W.noActions}</p>`
    : html`<ul>${open.map((a) => html`<li><bdi>${a.title}</bdi>${a.subteamName ? html` <span class="muted">(<bdi>${a.subteamName}</bdi>)</span>` : ''}${a.endDate ? html` <span class="muted">${W.until(sp.day(a.endDate.slice(0, 10)))}</span>` : ''}</li>`)}</ul>`
}
<p><a href="/console/actions">${W.allActions}</a>${moreOpen ? W.moreOpen(open.length) : ''}</p>
</section>
<section aria-labelledby="daily-heading">
<h2 id="daily-heading">${W.dailyHeading}</h2>
${insight.scoped ? '' : html`<p>${W.dailyIntro(org, sp.day(o.fromDate), sp.day(o.toDate))}</p>`}
<form method="get" action="/console/overview" class="filters">
<label for="f-from">${W.from}</label> <input type="date" name="from" id="f-from" value="${o.fromDate}" required>
<label for="f-to">${W.to}</label> <input type="date" name="to" id="f-to" value="${o.toDate}" required>
${
  o.teams.length > 0
    ? html`<label for="f-team">${W.teamChart}</label> <select name="team" id="f-team"><option value="">${o.inline ? W.everyTeam : W.noTeamChart}</option>${o.teams.map(
        (t) => html`<option value="${t.id}"${t.id === o.team ? html` selected` : ''}>${t.name}</option>`,
      )}</select>`
    : ''
}
<button type="submit">${W.show}</button>
</form>
<p>${W.last} ${PRESETS.map((n, i) => html`${i > 0 ? ' · ' : ''}<a href="/console/overview?${preset(n)}">${W.preset(n)}</a>`)}</p>
${insight.scoped ? '' : series('days-org', W.allOf(s.orgName), o.organization.days, range, sp, W.noPulses, W.tableCaption(W.allOf(s.orgName)))}
</section>
${
  o.teams.length > 0
    ? html`<section aria-labelledby="teams-heading">
<h2 id="teams-heading">${W.teamsHeading}</h2>
<p class="note">${insight.scoped ? W.teamsUnderTeams : W.teamsUnder}</p>
<table id="teams-summary">
<caption>${W.teamsCaption(sp.day(o.fromDate), sp.day(o.toDate))}</caption>
<thead><tr><th scope="col">${W.teamsColumns.team}</th><th scope="col">${W.teamsColumns.pulses}</th><th scope="col">${W.teamsColumns.avg}</th><th scope="col">${W.teamsColumns.chart}</th></tr></thead>
<tbody>${o.teams.map(
        (t, i) =>
          html`<tr><td><bdi>${t.name}</bdi></td>${
            t.count >= MIN && t.avg !== null ? html`<td>${sp.number(t.count)}</td><td>${sp.number(t.avg, 2)}</td>` : html`<td colspan="2">${W.teamUnder}</td>`
          }<td>${
            t.days !== null
              ? html`<a href="#days-team-${i}-figure">${W.below}<span class="visually-hidden">${W.belowHidden} <bdi>${t.name}</bdi></span></a>`
              : html`<a href="/console/overview?${withTeam(range, t.id)}#days-team-${i}-figure">${W.showChart}<span class="visually-hidden">${W.showHidden} <bdi>${t.name}</bdi></span></a>`
          }</td></tr>`,
      )}</tbody>
</table>
${o.inline || insight.scoped ? '' : html`<p>${W.notInline(o.teams.length)}${o.team ? html` <a href="/console/overview?${withTeam(range, null)}">${W.closeTeam}</a>` : ''}</p>`}
${charted.map((t) => series(`days-team-${t.i}`, W.teamOf(t.name), shownDays(t.days!), range, sp, W.noTeamDays, W.teamTableCaption(W.teamOf(t.name))))}
</section>`
    : ''
}
${insight.scoped ? '' : html`<details class="developers" id="for-developers"><summary>${W.developers}</summary>${W.developersText(o.organization.from, o.organization.to)}</details>`}`,
  };
}
