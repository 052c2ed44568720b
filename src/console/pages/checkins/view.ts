import type { ConsoleSession } from '../../../domain/sessions.js';
import type { CheckinSettings } from '../../../domain/checkins/settings.js';
import type { RoundStatus } from '../../../domain/checkins/round-status.js';
import type { linksFileState, ParticipationCell, RoundNowState } from '../../../domain/checkins/rounds.js';
import { mailText, reminderText, subjectOf } from '../../../domain/checkins/rounds.js';
import { MIN_TEAM } from '../../../domain/checkins/roster.js';
import { checkinClosesAt } from '../../../domain/checkins/week.js';
import { csrfField, html, type PageOptions, type Safe } from '../../html.js';
import { navFor } from '../../views/nav.js';
import { when } from '../../views/layout.js';
import { timeZones } from './form.js';

export const WEEKDAYS = ['Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday', 'Sunday'];
/** What the previews show in place of a person's link (the round puts theirs there). */
export const LINK_PLACEHOLDER = '[their personal link]';

export interface CheckinsData {
  session: ConsoleSession;
  settings: CheckinSettings;
  now: RoundNowState;
  rounds: RoundStatus[];
  counts: ParticipationCell[];
  links: Awaited<ReturnType<typeof linksFileState>>;
  /** Whether this server mails the links (SMTP_URL set). */
  mails: boolean;
  canChange: boolean;
  message?: Safe;
}

const people = (n: number) => `${n} ${n === 1 ? 'person' : 'people'}`;
const mails = (n: number) => `${n} ${n === 1 ? 'mail' : 'mails'}`;
const hh = (h: number) => `${String(h).padStart(2, '0')}:00`;
export const scheduleText = (s: CheckinSettings) =>
  `${WEEKDAYS[s.weekday - 1]} at ${hh(s.hour)} (${s.timeZone})${s.reminderWeekday ? `, with a reminder on ${WEEKDAYS[s.reminderWeekday - 1]} at the same hour` : ', with no reminder'}`;

function statusCell(r: RoundStatus): string {
  if (r.delivery === 'file') return 'links handed out as a file';
  if (r.mailed === null) return 'started before rounds were counted';
  const parts = [`${mails(r.mailed)} sent`];
  if (r.waiting > 0) parts.push(`${r.waiting} waiting`);
  if (r.failed > 0) parts.push(`${r.failed} failed`);
  return parts.join(', ');
}

function reminderCell(r: RoundStatus): string {
  if (r.delivery !== 'mail') return '–';
  if (r.remindersWaiting > 0 && r.reminderDue) return `due ${when(r.reminderDue)} (${people(r.remindersWaiting)})`;
  if (r.reminded && r.reminded > 0) return `sent to ${people(r.reminded)}`;
  return 'none';
}

function roundsTable(rounds: RoundStatus[]): Safe {
  if (rounds.length === 0) return html`<p>No round yet.</p>`;
  const errors = rounds.filter((r) => r.lastError);
  return html`<div class="table-scroll" role="region" aria-labelledby="rounds-caption" tabindex="0"><table>
<caption id="rounds-caption">Rounds of the last 8 weeks: counts per round, never per person</caption>
<thead><tr><th scope="col">Week of</th><th scope="col">Started</th><th scope="col">People</th><th scope="col">Mails</th><th scope="col">Reminder</th><th scope="col">Links close</th></tr></thead>
<tbody>${rounds.map(
    (r) =>
      html`<tr><td>${r.week}</td><td>${when(r.startedAt)}</td><td>${r.people}</td><td>${statusCell(r)}</td><td>${reminderCell(r)}</td><td>${when(r.closesAt)}${r.open ? '' : ' (closed)'}</td></tr>`,
  )}</tbody></table></div>
${errors.map(
  (r) =>
    html`<p class="notice error" role="note">Week of ${r.week}: the mail relay refused ${r.failed > 0 ? `${mails(r.failed)}, tried again every minute until the links close` : 'a mail, sent since'}. Its last reason (${when(r.lastErrorAt)}): <q class="wrap">${r.lastError ?? ''}</q></p>`,
)}`;
}

function thisWeek(d: CheckinsData): Safe {
  const csrf = csrfField(d.session.csrfToken);
  const s = d.now;
  if (s.startedAt) {
    return html`<p>This week's round (week of ${s.week}) started ${when(s.startedAt)}. It is fixed now: who is on it, in which team, its reasons and flag words. Its links close ${when(checkinClosesAt(s.week).toISOString())}.</p>`;
  }
  if (!d.mails) {
    return html`<p>This server sends no mail (SMTP_URL is not set). ${
      d.links.started ? '' : "This week's round starts when you download its links."
    } The file is the only copy of the links: the service keeps none. Whoever holds the file can answer in someone's place, though still learn no answer.</p>
${d.canChange ? html`<form method="post" action="/console/checkins/links">${csrf}<button type="submit">Download this week's links (CSV)</button></form>` : ''}`;
  }
  return html`<p>This week's round (week of ${s.week}) has not started. By its schedule it starts ${when(s.scheduledAt)}, for the ${people(s.people)} on the roster then.</p>
${d.canChange && s.people > 0 ? html`<p><a class="button" href="/console/checkins/send">Send this week's round now…</a></p>` : ''}`;
}

function linksAgain(d: CheckinsData): Safe {
  if (d.mails || !d.canChange || !d.links.handedOut || d.links.people === 0) return html``;
  const csrf = csrfField(d.session.csrfToken);
  return html`<p>This week's links were handed out already, and the service keeps no copy of them. A new file makes a new link for each of the ${people(d.links.people)} of this week's round; the links of the earlier file keep working, and each team still gives no more answers than it has people.</p>
<form method="post" action="/console/checkins/links">${csrf}<input type="hidden" name="renew" value="1"><button type="submit">Make new links for everyone (CSV)</button></form>`;
}

function settingsForm(d: CheckinsData): Safe {
  const s = d.settings;
  if (!d.canChange) return html`<p>The round goes on ${scheduleText(s)}.</p>`;
  const csrf = csrfField(d.session.csrfToken);
  return html`<form method="post" action="/console/checkins/settings" class="stack">
${csrf}
<label for="s-weekday">Day of the round</label> <select name="weekday" id="s-weekday">${WEEKDAYS.map((w, i) => html`<option value="${i + 1}"${i + 1 === s.weekday ? html` selected` : ''}>${w}</option>`)}</select>
<label for="s-hour">Hour (0-23)</label> <input type="number" name="hour" id="s-hour" min="0" max="23" value="${s.hour}" required>
<label for="s-tz">Time zone (type a city, such as Paris)</label> <input name="timeZone" id="s-tz" value="${s.timeZone}" required maxlength="64" list="zones" autocomplete="off">
<datalist id="zones">${timeZones().map((z) => html`<option value="${z.zone}">${z.city}</option>`)}</datalist>
<label for="s-reminder">Reminder day</label> <select name="reminderWeekday" id="s-reminder"><option value="">No reminder</option>${WEEKDAYS.map((w, i) => html`<option value="${i + 1}"${i + 1 === s.reminderWeekday ? html` selected` : ''}>${w}</option>`)}</select>
<label for="s-reasons">Reasons offered, one per line (optional)</label> <textarea name="reasons" id="s-reasons" rows="4">${s.reasons.join('\n')}</textarea>
<label for="s-words">Words that make an answer arrive flagged, one per line</label> <textarea name="flagWords" id="s-words" rows="4">${s.flagWords.join('\n')}</textarea>
<button type="submit">Save check-in settings</button>
</form>`;
}

/** The answer page as a person of the round sees it, from the round's own parts (the page itself is the check-in face's). */
export function answerPagePreview(orgName: string, settings: CheckinSettings, week: string): Safe {
  return html`<div class="preview" role="group" aria-label="Preview of the answer page">
<p><strong>Weekly check-in</strong>: ${orgName} asks “How was your week?”, with five answers from 1 (very bad) to 5 (very good).</p>
<p>The page names the person's team when it has ${MIN_TEAM} or more people on the round (else the answer counts in the organization's total, without a team), says how many people the team has and how many joined it in the last four weeks, and always offers “Don't attach my team”.</p>
${settings.reasons.length > 0 ? html`<p>Reasons offered (optional): ${settings.reasons.join(', ')}.</p>` : html`<p>No reasons are offered (none are set).</p>`}
<p>An optional comment of at most 2,000 characters, and one sentence of what is kept. The link works until ${when(checkinClosesAt(week).toISOString())}.</p>
</div>`;
}

function previews(d: CheckinsData): Safe {
  const org = d.session.orgName;
  const week = d.now.week;
  const csrf = csrfField(d.session.csrfToken);
  return html`<h3>The mail</h3>
<p>From: <q>${org}</q> (the sender's address stays this server's). Subject: <q>${subjectOf('first', org)}</q>. Sent as text and as a formatted mail with the same words.</p>
<pre class="wrap" aria-label="Preview of the mail">${mailText(org, LINK_PLACEHOLDER, week, d.settings.timeZone)}</pre>
<h3>The reminder</h3>
<p>Subject: <q>${subjectOf('reminder', org)}</q></p>
<pre class="wrap" aria-label="Preview of the reminder">${reminderText(org, week, new Date(d.now.startedAt ?? d.now.scheduledAt), d.settings.timeZone)}</pre>
<h3>The answer page</h3>
${answerPagePreview(org, d.settings, week)}
${
  d.canChange && d.mails
    ? html`<form method="post" action="/console/checkins/test-mail">${csrf}<button type="submit" class="secondary">Send a test mail to me (${d.session.member.email})</button></form>`
    : ''
}`;
}

/**
 * The Check-ins page (CONTRACT.md section 11 amended, *Rounds you can see*): this week's round
 * (send it now, after a confirmation), each round's status, the schedule, previews of the mail
 * and the answer page with a test mail, and participation. Viewers read it; owners and admins change it.
 */
export function checkinsView(d: CheckinsData): PageOptions {
  const count = (n: number | null) => (n === null ? `fewer than ${MIN_TEAM}` : String(n));
  return {
    title: 'Check-ins',
    nav: navFor(d.session, '/console/checkins'),
    body: html`<h1>Check-ins</h1>
${d.message ?? ''}
<p>Every week the people on the <a href="/console/people">roster</a> get a personal link by email and answer “How was your week?” anonymously (<a href="/checkin/about">how it works</a>). A round is fixed when it starts; changes made during its week apply from the next round.</p>
<h2>This week</h2>
${thisWeek(d)}
${linksAgain(d)}
<h2>Rounds</h2>
${roundsTable(d.rounds)}
<h2>Schedule</h2>
${settingsForm(d)}
<h2>Preview</h2>
${previews(d)}
<h2>Participation</h2>
${
  d.counts.length === 0
    ? html`<p>No round yet.</p>`
    : html`<div class="table-scroll" role="region" aria-labelledby="participation-caption" tabindex="0"><table><caption id="participation-caption">Participation per week and team; each count shown only from ${MIN_TEAM}</caption>
<thead><tr><th scope="col">Week of</th><th scope="col">Team</th><th scope="col">Invited</th><th scope="col">Opened</th><th scope="col">Answered</th></tr></thead>
<tbody>${d.counts.map((c) => html`<tr><td>${c.week}</td><td><bdi>${c.teamName ?? '(no team)'}</bdi></td><td>${count(c.invited)}</td><td>${count(c.opened)}</td><td>${count(c.answered)}</td></tr>`)}</tbody></table></div>`
}`,
  };
}

/** The confirmation before "send this week's round now": to how many people, and what it does. */
export function sendNowView(session: ConsoleSession, s: RoundNowState, settings: CheckinSettings): PageOptions {
  return {
    title: "Send this week's round now",
    nav: navFor(session, '/console/checkins'),
    body: html`<h1>Send this week's round now?</h1>
<p>This mails this week's check-in (week of ${s.week}) to the ${people(s.people)} on the roster now, within a minute, instead of ${when(s.scheduledAt)} as scheduled (${scheduleText(settings)}).</p>
<p>The round is then fixed: who is on it, in which team, its reasons and flag words. It is not sent again at the scheduled hour. ${
      s.reminderAt ? `The reminder goes to everyone of the round ${when(s.reminderAt)}.` : 'No reminder goes this week (none is set, or its time has passed).'
    } The links close ${when(checkinClosesAt(s.week).toISOString())}.</p>
<form method="post" action="/console/checkins/send" class="stack">
${csrfField(session.csrfToken)}
<button type="submit">Send to ${people(s.people)}</button>
</form>
<p><a href="/console/checkins">Cancel: back to Check-ins</a></p>`,
  };
}

/** What the link of a test mail opens: a page that says it is a test, and the answer page's preview. */
export function testLinkView(session: ConsoleSession, settings: CheckinSettings, week: string): PageOptions {
  return {
    title: 'A test link',
    nav: navFor(session, '/console/checkins'),
    body: html`<h1>This is a test link</h1>
<p class="notice ok" role="note">You opened the link of a test mail. It gives no answer and is no one's link: in a real round's mail, each person's own link opens the check-in page below, for their team.</p>
${answerPagePreview(session.orgName, settings, week)}
<p><a href="/console/checkins">Back to Check-ins</a></p>`,
  };
}
