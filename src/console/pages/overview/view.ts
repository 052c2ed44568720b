import type { Action } from '../../../contract/schemas/actions.js';
import type { Alert } from '../../../contract/schemas/alerts.js';
import type { DailyStats } from '../../../contract/schemas/stats.js';
import type { Figure, Insight, Rate } from '../../../domain/insight.js';
import type { ConsoleSession } from '../../../domain/sessions.js';
import type { Overview } from '../../../domain/stats.js';
import { MINIMUM_SAMPLE, OVERVIEW_INLINE_TEAM_DAYS, OVERVIEW_MAX_DAYS } from '../../../domain/stats.js';
import { DAY_MS, startOfUtcDay, WEEK_MS, ymd } from '../../../domain/time.js';
import { assetHref } from '../../assets.js';
import { escapeHtml, html, Safe, type PageOptions } from '../../html.js';
import { navFor } from '../../views/nav.js';
import { PLAIN, type Speaker } from '../../words.js';
import { alertLines } from '../alerts/sentences.js';

const PRESETS = [7, 30, 90, OVERVIEW_MAX_DAYS] as const;
const MIN = MINIMUM_SAMPLE;

/** The overview's messages (src/i18n/locales, `console.overview.*`), with their figures formatted for the reader. */
const K = 'console.overview';

/** The values of a message. */
type Values = Record<string, string | number>;

/** The change of the week before this one against the four weeks before it: the values its messages take. */
function changeValues(change: { current: Figure; previous: Figure }, sp: Speaker): Values {
  const { current: c, previous: p } = change;
  if (c === null) return { state: 'few', min: MIN };
  const base = { min: MIN, avg: sp.number(c.avg, 2), pulses: c.count };
  if (p === null) return { ...base, state: 'alone' };
  const d = Math.round((c.avg - p.avg) * 100) / 100;
  return {
    ...base,
    state: 'compared',
    direction: d === 0 ? 'same' : d > 0 ? 'higher' : 'lower',
    diff: sp.number(Math.abs(d), 2),
    before: sp.number(p.avg, 2),
    beforePulses: p.count,
  };
}

/** A share at 4-5 (and the four weeks' before, when known): the values its messages take. */
const highValues = (h: { share: number | null; previousShare: number | null }, sp: Speaker): Values =>
  h.share === null
    ? { shown: 'no', min: MIN }
    : {
        shown: 'yes',
        high: sp.percent(h.share),
        compared: h.previousShare === null ? 'no' : 'yes',
        previous: h.previousShare === null ? '' : sp.percent(h.previousShare),
      };

/** A participation rate (answered of asked, each shown from MIN): the values its messages take. */
const rateValues = (r: Rate | null, sp: Speaker): Values =>
  r === null
    ? { state: 'none', min: MIN }
    : {
        state: r.rate !== null ? 'rate' : 'partial',
        min: MIN,
        rate: r.rate === null ? '' : sp.percent(r.rate),
        answeredKnown: r.answered === null ? 'no' : 'yes',
        answered: r.answered === null ? '' : sp.number(r.answered),
        invitedKnown: r.invited === null ? 'no' : 'yes',
        invited: r.invited ?? 0,
        invitedText: r.invited === null ? '' : sp.number(r.invited),
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

/** A daily series: the organization's, or a team's (its messages choose their words by `kind`). */
interface SeriesOf {
  kind: 'org' | 'team';
  name: string;
}

/**
 * One chart with its table (the chart's text alternative, and its data: the console's script draws
 * the chart from the table's cells, a gap on every day of [from, to] the table does not list). The
 * chart's own words (its axes and legend) are data attributes in the reader's language.
 */
function series(id: string, of: SeriesOf, days: DailyStats['days'], range: { from: string; to: string }, sp: Speaker): Safe {
  const { t } = sp;
  const title = t(`${K}.seriesTitle`, { ...of });
  return html`<figure class="series" id="${id}-figure">
<figcaption>${title}</figcaption>
${
  days.length === 0
    ? html`<p class="muted">${of.kind === 'org' ? t(`${K}.noPulses`) : t(`${K}.noTeamDays`, { min: MIN })}</p>`
    : html`<div class="chart" data-chart-for="${id}" data-from="${range.from}" data-to="${range.to}" data-locale="${sp.locale}" data-label-day="${t(`${K}.colDate`)}" data-label-level="${t(`${K}.colAverage`)}" data-label-pulses="${t(`${K}.colPulses`)}" role="img" aria-label="${t(`${K}.chartLabel`, { ...of })}"></div>
<details><summary>${t(`${K}.figures`, { ...of })}</summary><div class="table-scroll" role="region" aria-labelledby="${id}-caption" tabindex="0"><table id="${id}" data-chart-table>
<caption id="${id}-caption">${of.kind === 'org' ? t(`${K}.tableCaption`, { ...of }) : t(`${K}.teamTableCaption`, { ...of, min: MIN })}</caption>
<thead><tr><th scope="col">${t(`${K}.colDate`)}</th><th scope="col">${t(`${K}.colPulses`)}</th><th scope="col">${t(`${K}.colAverage`)}</th></tr></thead>
<tbody>${dayRows(days, sp)}</tbody>
</table></div></details>`
}
</figure>`;
}

/** A heatmap cell's colour class (h1-h5): five bands of the level, each light enough for dark text (AA); h0 is hidden. */
const band = (avg: number) => (avg < 2 ? 1 : avg < 2.75 ? 2 : avg < 3.5 ? 3 : avg < 4.25 ? 4 : 5);

/**
 * A heatmap row's cells without a template per cell (50 teams over a year is 2,650 of them). Only
 * numbers and the page's own words go in: the team's name is its row header, escaped by the template.
 */
function heatCells(cells: readonly Figure[], sp: Speaker, words: ReturnType<typeof heatWords>): Safe {
  // Short classes and no optional end tags (HTML's own rule): a year of 50 teams was 330 KB.
  const hidden = `<td class="h h0">${escapeHtml(sp.t(`${K}.heatUnder`, { min: MIN }))}`;
  let out = '';
  for (const f of cells) {
    if (f === null) {
      out += hidden;
      continue;
    }
    out += `<td class="h h${band(f.avg)}"><b>${words.level(f.avg)}</b> ${words.pulses(f.count)}`;
  }
  return new Safe(out);
}

/**
 * A heatmap's numbers in words, each worded once per page: a year of 50 teams asked the formatters
 * 2,650 times each for a few hundred distinct counts and levels (an average has two decimals).
 */
function heatWords(sp: Speaker) {
  const once = (say: (n: number) => string) => {
    const seen = new Map<number, string>();
    return (n: number): string => {
      let w = seen.get(n);
      if (w === undefined) seen.set(n, (w = escapeHtml(say(n))));
      return w;
    };
  };
  return {
    pulses: once((count) => sp.t(`${K}.pulses`, { pulses: count })),
    level: once((avg) => sp.number(avg, 1)),
  };
}

function heatmap(i: Insight, sp: Speaker): Safe {
  const { t } = sp;
  const h = i.heatmap;
  const words = heatWords(sp);
  const lastDay = ymd(new Date(Date.parse(`${h.weeks[h.weeks.length - 1]}T00:00:00.000Z`) + WEEK_MS - DAY_MS));
  return html`<section aria-labelledby="heat-heading">
<h2 id="heat-heading">${t(`${K}.heatHeading`)}</h2>
<p>${t(`${K}.heatIntro`, { weeks: h.weeks.length })}</p>
<p class="note">${i.scoped ? t(`${K}.heatHiddenTeams`, { min: MIN }) : t(`${K}.heatHidden`, { min: MIN })}</p>
<div class="table-scroll" role="region" aria-labelledby="heat-caption" tabindex="0"><table class="heatmap" id="heatmap">
<caption id="heat-caption">${t(`${K}.heatCaption`, { from: sp.day(h.weeks[0]), to: sp.day(lastDay) })}</caption>
<thead><tr><th scope="col">${t(`${K}.colTeam`)}</th>${h.weeks.map((w) => html`<th scope="col"><span aria-hidden="true">${sp.shortDay(w)}</span><span class="visually-hidden">${t(`${K}.weekOf`, { day: sp.day(w) })}</span></th>`)}</tr></thead>
<tbody>
${i.scoped ? '' : html`<tr class="whole"><th scope="row">${t(`${K}.heatOrg`)}</th>${heatCells(h.organization, sp, words)}</tr>`}
${h.teams.map((row) => html`<tr><th scope="row"><bdi>${row.name}</bdi></th>${heatCells(row.cells, sp, words)}</tr>`)}
</tbody>
</table></div>
</section>`;
}

function participation(i: Insight, sp: Speaker): Safe {
  const { t } = sp;
  const p = i.participation;
  if (i.scoped && p.slots.length === 0) return html`<p>${t(`${K}.noTeamRounds`, { min: MIN })}</p>`;
  if (!i.scoped && p.organization.thisWeek === null && p.organization.lastWeek === null) return html`<p>${t(`${K}.noRounds`)}</p>`;
  return html`${
    i.scoped
      ? ''
      : html`<ul class="figures">
<li>${t(`${K}.orgRate`, { week: 'this', day: sp.day(i.thisWeek), ...rateValues(p.organization.thisWeek, sp) })}</li>
<li>${t(`${K}.orgRate`, { week: 'last', day: sp.day(i.lastWeek), ...rateValues(p.organization.lastWeek, sp) })}</li>
</ul>`
  }
<div class="table-scroll" role="region" aria-labelledby="slots-caption" tabindex="0"><table id="participation">
<caption id="slots-caption">${t(`${K}.slotsCaption`)}</caption>
<thead><tr><th scope="col">${t(`${K}.colTeam`)}</th><th scope="col">${t(`${K}.colThisWeek`)}</th><th scope="col">${t(`${K}.colLastWeek`)}</th></tr></thead>
<tbody>${p.slots.map(
    (s) =>
      html`<tr><th scope="row">${s.teamId === null ? t(`${K}.noTeamSlot`, { min: MIN }) : html`<bdi>${s.teamName ?? s.teamId}</bdi>`}</th><td>${t(`${K}.rate`, rateValues(s.thisWeek, sp))}</td><td>${t(`${K}.rate`, rateValues(s.lastWeek, sp))}</td></tr>`,
  )}</tbody>
</table></div>
<p class="muted">${t(`${K}.slotsNote`, { min: MIN })}</p>`;
}

/** Days of a team's series from MIN pulses: a day of fewer is left out (a gap), as every team figure under MIN. */
const shownDays = (days: DailyStats['days']) => days.filter((d) => d.count >= MIN);

/** The overview: insight first (participation, change, share at 4-5, heatmap), then alerts, actions and the daily charts. */
export function overviewView({ session: s, at, stats: o, insight, unread, open, moreOpen, speaker: sp = PLAIN }: OverviewData): PageOptions {
  const { t } = sp;
  const today = ymd(startOfUtcDay(at));
  const withTeam = (q: Record<string, string>, team: string | null) => new URLSearchParams(team ? { ...q, team } : q).toString();
  const preset = (n: number) => withTeam({ from: ymd(new Date(startOfUtcDay(at).getTime() - (n - 1) * DAY_MS)), to: today }, o.team);
  const range = { from: o.fromDate, to: o.toDate };
  const charted = o.teams.map((team, i) => ({ ...team, i })).filter((team) => team.days !== null);
  const lines = alertLines(unread, sp);
  const org = html`<bdi>${s.orgName}</bdi>`;
  const bdi = (chunks: Safe) => html`<bdi>${chunks}</bdi>`;
  const code = (chunks: Safe) => html`<code>${chunks}</code>`;
  return {
    title: t(`${K}.title`),
    speaker: sp,
    nav: navFor(s, '/console/overview'),
    scripts: [assetHref('uplot.js'), assetHref('charts.js')],
    styles: [assetHref('uplot.css')],
    body: html`<h1>${t(`${K}.title`)}</h1>
<p>${insight.scoped ? t(`${K}.introTeams`, { tz: sp.timeZone }) : sp.rich(`${K}.intro`, { org, tz: sp.timeZone })}</p>
<section aria-labelledby="now-heading">
<h2 id="now-heading">${t(`${K}.now`)}</h2>
<h3>${t(`${K}.participationHeading`)}</h3>
${participation(insight, sp)}
<h3>${t(`${K}.changeHeading`)}</h3>
${
  insight.scoped
    ? html`<p>${t(`${K}.teamTrendsIntro`, { week: sp.day(insight.change.week), from: sp.day(insight.change.previousFrom) })}</p>
<ul id="team-trends">${(insight.teamTrends ?? []).map(
        (tr) =>
          html`<li>${sp.rich(`${K}.teamChange`, { team: tr.name, ...changeValues(tr.change, sp) }, { bdi })} ${t(`${K}.teamHigh`, highValues(tr.high, sp))}</li>`,
      )}</ul>`
    : html`<p id="change">${t(`${K}.change`, { week: sp.day(insight.change.week), from: sp.day(insight.change.previousFrom), ...changeValues(insight.change, sp) })}</p>
<p id="high-share">${t(`${K}.high`, highValues(insight.high, sp))}</p>`
}
</section>
<section aria-labelledby="unread-heading">
<h2 id="unread-heading">${t(`${K}.unreadHeading`)}</h2>
${lines.length === 0 ? html`<p>${t(`${K}.noUnread`)}</p>` : html`<ul>${lines.map((l) => html`<li>${l.sentence} <span class="muted">(${sp.when(l.createdAt)})</span></li>`)}</ul>`}
<p><a href="/console/alerts">${t(`${K}.allAlerts`)}</a></p>
</section>
${heatmap(insight, sp)}
<section aria-labelledby="actions-heading">
<h2 id="actions-heading">${t(`${K}.actionsHeading`)}</h2>
${
  open.length === 0
    ? html`<p>${t(`${K}.noActions`)}</p>`
    : html`<ul>${open.map((a) => html`<li><bdi>${a.title}</bdi>${a.subteamName ? html` <span class="muted">(<bdi>${a.subteamName}</bdi>)</span>` : ''}${a.endDate ? html` <span class="muted">${t(`${K}.until`, { day: sp.day(a.endDate.slice(0, 10)) })}</span>` : ''}</li>`)}</ul>`
}
<p><a href="/console/actions">${t(`${K}.allActions`)}</a>${moreOpen ? html` ${t(`${K}.moreOpen`, { open: open.length })}` : ''}</p>
</section>
<section aria-labelledby="daily-heading">
<h2 id="daily-heading">${t(`${K}.dailyHeading`)}</h2>
${insight.scoped ? '' : html`<p>${sp.rich(`${K}.dailyIntro`, { org, from: sp.day(o.fromDate), to: sp.day(o.toDate) })}</p>`}
<form method="get" action="/console/overview" class="filters">
<label for="f-from">${t(`${K}.from`)}</label> <input type="date" name="from" id="f-from" value="${o.fromDate}" required>
<label for="f-to">${t(`${K}.to`)}</label> <input type="date" name="to" id="f-to" value="${o.toDate}" required>
${
  o.teams.length > 0
    ? html`<label for="f-team">${t(`${K}.teamChart`)}</label> <select name="team" id="f-team"><option value="">${o.inline ? t(`${K}.everyTeam`) : t(`${K}.noTeamChart`)}</option>${o.teams.map(
        (team) => html`<option value="${team.id}"${team.id === o.team ? html` selected` : ''}>${team.name}</option>`,
      )}</select>`
    : ''
}
<button type="submit">${t(`${K}.show`)}</button>
</form>
<p>${t(`${K}.last`)} ${PRESETS.map((n, i) => html`${i > 0 ? ' · ' : ''}<a href="/console/overview?${preset(n)}">${n === OVERVIEW_MAX_DAYS ? t(`${K}.presetYear`) : t(`${K}.presetDays`, { days: n })}</a>`)}</p>
${insight.scoped ? '' : series('days-org', { kind: 'org', name: s.orgName }, o.organization.days, range, sp)}
</section>
${
  o.teams.length > 0
    ? html`<section aria-labelledby="teams-heading">
<h2 id="teams-heading">${t(`${K}.teamsHeading`)}</h2>
<p class="note">${insight.scoped ? t(`${K}.teamsUnderTeams`, { min: MIN }) : t(`${K}.teamsUnder`, { min: MIN })}</p>
<div class="table-scroll" role="region" aria-labelledby="teams-caption" tabindex="0"><table id="teams-summary">
<caption id="teams-caption">${t(`${K}.teamsCaption`, { from: sp.day(o.fromDate), to: sp.day(o.toDate) })}</caption>
<thead><tr><th scope="col">${t(`${K}.colTeam`)}</th><th scope="col">${t(`${K}.colPulses`)}</th><th scope="col">${t(`${K}.colAverage`)}</th><th scope="col">${t(`${K}.colChart`)}</th></tr></thead>
<tbody>${o.teams.map(
        (team, i) =>
          html`<tr><td><bdi>${team.name}</bdi></td>${
            team.count >= MIN && team.avg !== null
              ? html`<td>${sp.number(team.count)}</td><td>${sp.number(team.avg, 2)}</td>`
              : html`<td colspan="2">${t(`${K}.teamUnder`, { min: MIN })}</td>`
          }<td>${
            team.days !== null
              ? html`<a href="#days-team-${i}-figure">${sp.rich(`${K}.below`, { team: team.name }, { hidden: (c) => html`<span class="visually-hidden">${c}</span>`, bdi })}</a>`
              : html`<a href="/console/overview?${withTeam(range, team.id)}#days-team-${i}-figure">${sp.rich(`${K}.showChart`, { team: team.name }, { hidden: (c) => html`<span class="visually-hidden">${c}</span>`, bdi })}</a>`
          }</td></tr>`,
      )}</tbody>
</table></div>
${o.inline || insight.scoped ? '' : html`<p>${t(`${K}.notInline`, { days: OVERVIEW_INLINE_TEAM_DAYS, teams: o.teams.length })}${o.team ? html` <a href="/console/overview?${withTeam(range, null)}">${t(`${K}.closeTeam`)}</a>` : ''}</p>`}
${charted.map((team) => series(`days-team-${team.i}`, { kind: 'team', name: team.name }, shownDays(team.days!), range, sp))}
</section>`
    : ''
}
${
  insight.scoped
    ? ''
    : html`<details class="developers" id="for-developers"><summary>${t(`${K}.developers`)}</summary><p>${sp.rich(
        `${K}.developersText`,
        {
          daily: `GET /v1/stats/daily?from=${o.organization.from}&to=${o.organization.to}`,
          pulses: 'GET /v1/pulses',
          alerts: 'GET /v1/alerts',
          actions: 'GET /v1/actions',
        },
        { code },
      )}</p></details>`
}`,
  };
}
