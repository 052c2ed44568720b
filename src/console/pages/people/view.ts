import type { ConsoleSession } from '../../../domain/sessions.js';
import type { RosterFile, RosterPage } from '../../../domain/checkins/roster.js';
import { MAX_LISTED_ERRORS, MIN_TEAM } from '../../../domain/checkins/roster.js';
import { csrfField, html, type PageOptions, type Safe } from '../../html.js';
import { navFor } from '../../views/nav.js';
import { PEOPLE_SOURCE_WORDS } from '../../words.js';
import { PAGE_SIZE, rosterHref, rosterQuery } from './form.js';

/** A roster file refused or waiting for its columns: what was sent is kept, and shown again. */
export interface UploadState {
  text: string;
  file: RosterFile;
}

export interface PeopleData {
  session: ConsoleSession;
  roster: RosterPage;
  query: { search: string | null; page: number };
  upload?: UploadState;
  message?: Safe;
}

const people = (n: number) => `${n} ${n === 1 ? 'person' : 'people'}`;

/** The words of moving and removing several people at once (issue 53: every control says whom it acts on). */
export const BULK_WORDS = {
  column: 'Choose',
  choose: (email: string) => `Choose ${email}`,
  legend: 'The people chosen in the table above',
  hint: 'Tick people in the table, then move them all to one team or remove them all. Only the people of this page can be chosen.',
  team: 'New team for the chosen people (empty: no team)',
  move: 'Move the chosen people',
  remove: 'Remove the chosen people',
  confirmTitle: 'Remove these people?',
  confirmLead: (n: number) => `${people(n)} will be removed from the roster:`,
  confirmButton: (n: number) => `Remove ${people(n)}`,
  cancel: 'Keep them and go back to the roster',
  moved: (n: number, team: string | null) => `${people(n)} moved to ${team === null ? 'no team' : `“${team}”`}.`,
  removed: (n: number) => `${people(n)} removed from the roster.`,
  fixed: (started: boolean) =>
    started
      ? "This week's round started already and stays as it was when it started (who is on it, and in which team): the change applies from next week's round. A removed person's link of this week keeps working until the week ends."
      : 'The change applies from the next round.',
};

function teamsTable(teams: RosterPage['teams']): Safe {
  if (teams.length === 0) return html``;
  return html`<div class="table-scroll" role="region" aria-labelledby="teams-caption" tabindex="0"><table>
<caption id="teams-caption">Teams on the roster</caption>
<thead><tr><th scope="col">Team</th><th scope="col">People</th><th scope="col">Joined in the last 4 weeks</th><th scope="col">Answers</th></tr></thead>
<tbody>${teams.map(
    (t) =>
      html`<tr><td>${t.id === null ? '(no team)' : html`<bdi>${t.name ?? ''}</bdi>`}</td><td>${t.respondents}</td><td>${t.recentJoins}</td><td>${
        t.answersAsTeam
          ? 'as the team'
          : t.id === null
            ? "in the organization's total, without a team"
            : `fewer than ${MIN_TEAM}: answers count in the organization's total, without a team`
      }</td></tr>`,
  )}</tbody></table></div>`;
}

function pager(r: RosterPage, q: PeopleData['query']): Safe {
  if (r.pages <= 1) return html``;
  const at = (page: number) => rosterHref({ search: q.search, page });
  return html`<nav aria-label="Roster pages" class="pager"><p>Page ${r.page} of ${r.pages}
${r.page > 1 ? html`<a href="${at(1)}">First page</a> <a href="${at(r.page - 1)}" rel="prev">Previous page</a>` : ''}
${r.page < r.pages ? html`<a href="${at(r.page + 1)}" rel="next">Next page</a> <a href="${at(r.pages)}">Last page</a>` : ''}</p></nav>`;
}

function rosterTable(s: ConsoleSession, r: RosterPage, q: PeopleData['query']): Safe {
  const csrf = csrfField(s.csrfToken);
  const back = html`<input type="hidden" name="back" value="${rosterHref(q).replace(/^\/console\/people\??/, '')}">`;
  const first = (r.page - 1) * PAGE_SIZE + 1;
  const caption =
    r.matching === 0
      ? ''
      : q.search
        ? `${people(r.matching)} of ${r.rosterSize} match “${q.search}”`
        : `${people(r.rosterSize)} on the roster${r.pages > 1 ? `; ${first}-${first + r.respondents.length - 1} shown` : ''}`;
  return html`<form method="get" action="/console/people" class="inline" role="search">
<label for="q">Search by email or team</label> <input type="search" name="q" id="q" value="${q.search ?? ''}" maxlength="254"> <button type="submit" class="secondary">Search</button>
</form>
${q.search ? html`<p><a href="/console/people">Show everyone</a></p>` : ''}
${
  r.matching === 0
    ? html`<p>${q.search ? `No one matches “${q.search}”.` : 'No one yet. Add people below, or upload the roster from a file.'}</p>`
    : html`<div class="table-scroll" role="region" aria-labelledby="roster-caption" tabindex="0"><table>
<caption id="roster-caption">${caption}</caption>
<thead><tr><th scope="col">${BULK_WORDS.column}</th><th scope="col">Email</th><th scope="col">Team</th><th scope="col">${PEOPLE_SOURCE_WORDS.heading}</th><th scope="col">Answers as</th><th scope="col">Change</th></tr></thead>
<tbody>${r.respondents.map(
        (
          p,
        ) => html`<tr><td>${p.source === 'scim' ? '' : html`<input type="checkbox" name="pick-${p.id}" form="bulk" aria-label="${BULK_WORDS.choose(p.email)}">`}</td><td class="wrap"><bdi>${p.email}</bdi></td><td><bdi>${p.teamName ?? ''}</bdi></td><td>${PEOPLE_SOURCE_WORDS[p.source]}</td><td>${p.answersWithTeam ? 'the team' : 'the organization (no team)'}</td><td>
${
  p.source === 'scim'
    ? html`<p>${PEOPLE_SOURCE_WORDS.scimOwned}</p>`
    : html`<form method="post" action="/console/people/${encodeURIComponent(p.id)}/move">${csrf}${back}<input name="team" value="${p.teamName ?? ''}" maxlength="80" aria-label="New team for ${p.email}"><button type="submit" class="secondary" aria-label="Move ${p.email}">Move</button></form>`
}
<form method="post" action="/console/people/${encodeURIComponent(p.id)}/resend">${csrf}${back}<button type="submit" class="secondary" aria-label="New link for ${p.email}">New link</button></form>
${p.source === 'scim' ? '' : html`<button type="submit" form="bulk" name="removeOne" value="${p.id}" class="danger" aria-label="Remove ${p.email}">Remove</button>`}
</td></tr>`,
      )}</tbody></table></div>
<form method="post" action="/console/people/bulk" id="bulk" class="stack">${csrf}${back}
<fieldset><legend>${BULK_WORDS.legend}</legend>
<p>${BULK_WORDS.hint}</p>
<label for="b-team">${BULK_WORDS.team}</label> <input name="team" id="b-team" maxlength="80">
<button type="submit" name="do" value="move" class="secondary">${BULK_WORDS.move}</button>
<button type="submit" name="do" value="remove" class="danger">${BULK_WORDS.remove}</button>
</fieldset></form>
${pager(r, q)}`
}`;
}

function columnSelect(id: string, name: string, label: string, header: string[], none: string | null): Safe {
  return html`<label for="${id}">${label}</label> <select name="${name}" id="${id}" required>
<option value="" disabled selected hidden>Choose a column</option>
${none ? html`<option value="">${none}</option>` : ''}
${header.map((h) => html`<option value="${h}">${h === '' ? '(unnamed column)' : h}</option>`)}
</select>`;
}

function uploadForm(s: ConsoleSession, upload: UploadState | undefined): Safe {
  const csrf = csrfField(s.csrfToken);
  const f = upload?.file;
  const choose = f?.choose && f.header ? f.header : null;
  return html`<h2 id="upload">Upload the roster</h2>
${
  f && f.errors.length > 0
    ? html`<div class="notice error" role="alert"><p>${f.errors.length === 1 ? 'The file has 1 error' : `The file has ${f.errors.length} errors`}; nothing changed. Correct the file and upload it again (the text below is what you sent).</p>
<ul class="errors">${f.errors.slice(0, MAX_LISTED_ERRORS).map((e) => html`<li>${e}</li>`)}</ul>${
        f.errors.length > MAX_LISTED_ERRORS ? html`<p>And ${f.errors.length - MAX_LISTED_ERRORS} more.</p>` : ''
      }</div>`
    : ''
}
${choose ? html`<p class="notice" role="status">Which columns hold the email address and the team? The file's header row does not say it plainly.</p>` : ''}
<form method="post" action="/console/people/replace" enctype="multipart/form-data" class="stack">
${csrf}
${
  choose
    ? html`${f!.choose!.email ? columnSelect('u-email-col', 'emailColumn', 'Column with the email address', choose, null) : ''}
${f!.choose!.team ? columnSelect('u-team-col', 'teamColumn', 'Column with the team', choose, 'No team column (everyone without a team)') : ''}`
    : html`<label for="u-file">CSV file with a header row: a column of email addresses and one of teams (email, e-mail or mail; team, department or group). Other columns are ignored. The whole file is checked before anything changes.</label>
<input type="file" name="file" id="u-file" accept=".csv,text/csv,text/plain">`
}
<label for="p-csv">${choose ? 'The file you sent' : 'Or paste the CSV here'}</label>
<textarea name="csv" id="p-csv" rows="6">${upload?.text ?? ''}</textarea>
<button type="submit">${choose ? 'Use these columns and replace the roster' : 'Replace roster'}</button>
</form>`;
}

/**
 * The People page (CONTRACT.md section 11 amended, *Rounds you can see*; issue 52, L9): the teams'
 * summary first, then the roster a page at a time (searchable), then adding a person and
 * uploading the roster. Its size does not grow with the roster. The rounds, their settings and
 * participation are on the Check-ins page.
 */
export function peopleView({ session: s, roster, query, upload, message }: PeopleData): PageOptions {
  const csrf = csrfField(s.csrfToken);
  return {
    title: 'People',
    nav: navFor(s, '/console/people'),
    body: html`<h1>People</h1>
${message ?? ''}
<p>The people asked the weekly check-in “How was your week?”. They are not members of the console: each gets a personal link by email every week, and answers anonymously (<a href="/checkin/about">how it works</a>). The rounds, their schedule and participation are on the <a href="/console/checkins">Check-ins</a> page.</p>
<p class="notice ok" role="note">A team with fewer than ${MIN_TEAM} people on this roster answers without a team: its answers count in the organization's total and show no team, since in a team that small the answers could be told apart.</p>
<p>Each week is fixed when its round starts: who is on it, and in which team. Changes you make here apply from the next round, so that nobody can be singled out by a change made while answers arrive.</p>
<h2>Teams</h2>
${roster.rosterSize === 0 ? html`<p>No teams yet.</p>` : teamsTable(roster.teams)}
<h2>Roster</h2>
${rosterTable(s, roster, query)}
<h2>Add a person</h2>
<form method="post" action="/console/people" class="stack">
${csrf}
<label for="p-email">Email</label> <input type="email" name="email" id="p-email" required maxlength="254" autocomplete="off">
<label for="p-team">Team (optional)</label> <input name="team" id="p-team" maxlength="80">
<button type="submit">Add person</button>
</form>
${uploadForm(s, upload)}`,
  };
}

/** The confirmation of removing several people: who, and one button that says how many. */
export function removeChosenView(s: ConsoleSession, chosen: readonly { id: string; email: string }[], back: string): PageOptions {
  return {
    title: BULK_WORDS.confirmTitle,
    nav: navFor(s, '/console/people'),
    body: html`<h1>${BULK_WORDS.confirmTitle}</h1>
<p>${BULK_WORDS.confirmLead(chosen.length)}</p>
<ul>${chosen.map((p) => html`<li><bdi>${p.email}</bdi></li>`)}</ul>
<form method="post" action="/console/people/bulk">${csrfField(s.csrfToken)}<input type="hidden" name="back" value="${back}"><input type="hidden" name="do" value="remove"><input type="hidden" name="confirm" value="1">
${chosen.map((p) => html`<input type="hidden" name="pick-${p.id}" value="1">`)}
<button type="submit" class="danger">${BULK_WORDS.confirmButton(chosen.length)}</button></form>
<p><a href="${rosterHref(rosterQueryOf(back))}">${BULK_WORDS.cancel}</a></p>`,
  };
}

const rosterQueryOf = (back: string) => rosterQuery(new URLSearchParams(back));
