import type { ConsoleSession } from '../../../domain/sessions.js';
import type { Roster } from '../../../domain/checkins/roster.js';
import { MIN_TEAM } from '../../../domain/checkins/roster.js';
import type { CheckinSettings } from '../../../domain/checkins/settings.js';
import type { ParticipationCell, linksFileState } from '../../../domain/checkins/rounds.js';
import { csrfField, html, type PageOptions, type Safe } from '../../html.js';
import { navFor } from '../../views/nav.js';

export const WEEKDAYS = ['Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday', 'Sunday'];

export interface PeopleData {
  session: ConsoleSession;
  roster: Roster;
  settings: CheckinSettings;
  counts: ParticipationCell[];
  /** The week's links file: whether the round started, how many links wait to be handed out, its people. */
  links: Awaited<ReturnType<typeof linksFileState>>;
  /** Whether this server mails the links (SMTP_URL set); without it the page offers them as a CSV file. */
  mails: boolean;
  message?: Safe;
}

/**
 * The People page (CONTRACT.md section 12): the check-in roster, the round's settings and word
 * list, the week's links without SMTP, and participation counts shown only from 5.
 */
export function peopleView({ session: s, roster, settings, counts, links, mails, message }: PeopleData): PageOptions {
  const csrf = csrfField(s.csrfToken);
  const count = (n: number | null) => (n === null ? `fewer than ${MIN_TEAM}` : String(n));
  return {
    title: 'People',
    nav: navFor(s, '/console/people'),
    body: html`<h1>People</h1>
${message ?? ''}
<p>The people asked the weekly check-in “How was your week?”. They are not members of the console: each gets a personal link by email every week, and answers anonymously (<a href="/checkin/about">how it works</a>).</p>
<p class="notice ok" role="note">A team with fewer than ${MIN_TEAM} people on this roster answers without a team: its answers count for the whole organization and show no team, since in a team that small the answers could be told apart.</p>
<p>Each week is fixed when its round starts: who is on it, in which team, and the reasons and flag words. Changes you make here apply from the next round, so that nobody can be singled out by a change made while answers arrive.</p>
<h2>Roster</h2>
${
  roster.respondents.length === 0
    ? html`<p>No one yet. Add people below, or replace the roster from a CSV file.</p>`
    : html`<div class="table-scroll" role="region" aria-labelledby="roster-caption" tabindex="0"><table>
<caption id="roster-caption">${roster.respondents.length} people on the roster</caption>
<thead><tr><th scope="col">Email</th><th scope="col">Team</th><th scope="col">Answers as</th><th scope="col">Change</th></tr></thead>
<tbody>${roster.respondents.map(
        (
          r,
          i,
        ) => html`<tr><td class="wrap"><bdi>${r.email}</bdi></td><td><bdi>${r.teamName ?? ''}</bdi></td><td>${r.answersWithTeam ? html`team <bdi>${r.teamName ?? ''}</bdi>` : 'the organization (no team)'}</td><td>
<form method="post" action="/console/people/${encodeURIComponent(r.id)}/move">${csrf}<label class="visually-hidden" for="m-${i}">New team for ${r.email}</label><input name="team" id="m-${i}" value="${r.teamName ?? ''}" maxlength="80"><button type="submit" class="secondary">Move</button></form>
<form method="post" action="/console/people/${encodeURIComponent(r.id)}/resend">${csrf}<button type="submit" class="secondary" aria-label="Send a new link to ${r.email}">New link</button></form>
<form method="post" action="/console/people/${encodeURIComponent(r.id)}/remove" data-confirm="Remove ${r.email} from the roster?">${csrf}<button type="submit" class="danger" aria-label="Remove ${r.email}">Remove</button></form>
</td></tr>`,
      )}</tbody></table></div>`
}
${
  roster.teams.length > 0
    ? html`<table><caption>Teams on the roster</caption><thead><tr><th scope="col">Team</th><th scope="col">People</th><th scope="col">Answers</th></tr></thead>
<tbody>${roster.teams.map((t) => html`<tr><td><bdi>${t.name}</bdi></td><td>${t.respondents}</td><td>${t.answersAsTeam ? 'as the team' : `without a team (fewer than ${MIN_TEAM})`}</td></tr>`)}</tbody></table>`
    : ''
}
<h2>Add a person</h2>
<form method="post" action="/console/people" class="stack">
${csrf}
<label for="p-email">Email</label> <input type="email" name="email" id="p-email" required maxlength="254" autocomplete="off">
<label for="p-team">Team (optional)</label> <input name="team" id="p-team" maxlength="80">
<button type="submit">Add person</button>
</form>
<h2>Replace the roster from CSV</h2>
<form method="post" action="/console/people/replace" class="stack">
${csrf}
<label for="p-csv">CSV, one <code>email,team</code> per line (a header line <code>email,team</code> is allowed). The whole file is checked before anything changes.</label>
<textarea name="csv" id="p-csv" rows="6" required></textarea>
<button type="submit">Replace roster</button>
</form>
<h2>This week's links</h2>
${
  mails
    ? html`<p>Links go by email on ${WEEKDAYS[settings.weekday - 1]} at ${String(settings.hour).padStart(2, '0')}:00 (${settings.timeZone}). A reminder goes to everyone of the round, since the service cannot know who answered. Someone who lost their link can get a new one with “New link” in the roster.</p>`
    : links.handedOut && links.people > 0
      ? html`<p>This server sends no mail. This week's links were handed out already, and the service keeps no copy of them. A new file makes a new link for each of the ${links.people} ${links.people === 1 ? 'person' : 'people'} of this week's round; the links of the earlier file keep working, and each team still gives no more answers than it has people. Whoever holds the file can answer in someone's place, though still learn no answer.</p>
<form method="post" action="/console/people/links">${csrf}<input type="hidden" name="renew" value="1"><button type="submit">Make new links for everyone (CSV)</button></form>`
      : html`<p>This server sends no mail. Download the week's links as a CSV file for your own mail tool${links.started ? html` (a link for each of the ${links.people} ${links.people === 1 ? 'person' : 'people'} of this week's round)` : " (this starts this week's round)"}. The file is the only copy: the service keeps none of the links. Whoever holds the file can answer in someone's place, though still learn no answer.</p>
<form method="post" action="/console/people/links">${csrf}<button type="submit">Download this week's links (CSV)</button></form>`
}
<h2>Check-in settings</h2>
<form method="post" action="/console/people/settings" class="stack">
${csrf}
<label for="s-weekday">Day of the round</label> <select name="weekday" id="s-weekday">${WEEKDAYS.map((d, i) => html`<option value="${i + 1}"${i + 1 === settings.weekday ? html` selected` : ''}>${d}</option>`)}</select>
<label for="s-hour">Hour (0-23)</label> <input type="number" name="hour" id="s-hour" min="0" max="23" value="${settings.hour}" required>
<label for="s-tz">Time zone</label> <input name="timeZone" id="s-tz" value="${settings.timeZone}" required maxlength="64">
<label for="s-reminder">Reminder day</label> <select name="reminderWeekday" id="s-reminder"><option value="">No reminder</option>${WEEKDAYS.map((d, i) => html`<option value="${i + 1}"${i + 1 === settings.reminderWeekday ? html` selected` : ''}>${d}</option>`)}</select>
<label for="s-reasons">Reasons offered, one per line (optional)</label> <textarea name="reasons" id="s-reasons" rows="4">${settings.reasons.join('\n')}</textarea>
<label for="s-words">Words that make an answer arrive flagged, one per line</label> <textarea name="flagWords" id="s-words" rows="4">${settings.flagWords.join('\n')}</textarea>
<button type="submit">Save check-in settings</button>
</form>
<h2>Participation</h2>
${
  counts.length === 0
    ? html`<p>No round yet.</p>`
    : html`<div class="table-scroll" role="region" aria-labelledby="participation-caption" tabindex="0"><table><caption id="participation-caption">Participation per week and team; each count shown only from ${MIN_TEAM}</caption>
<thead><tr><th scope="col">Week of</th><th scope="col">Team</th><th scope="col">Invited</th><th scope="col">Opened</th><th scope="col">Answered</th></tr></thead>
<tbody>${counts.map((c) => html`<tr><td>${c.week}</td><td><bdi>${c.teamName ?? '(no team)'}</bdi></td><td>${count(c.invited)}</td><td>${count(c.opened)}</td><td>${count(c.answered)}</td></tr>`)}</tbody></table></div>`
}`,
  };
}
