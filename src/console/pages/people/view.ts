import type { ConsoleSession } from '../../../domain/sessions.js';
import type { RosterFile, RosterIssue, RosterPage } from '../../../domain/checkins/roster.js';
import { MAX_LISTED_ERRORS, MIN_TEAM } from '../../../domain/checkins/roster.js';
import { invalid } from '../../../contract/errors.js';
import { csrfField, html, type PageOptions, type Safe } from '../../html.js';
import { navFor } from '../../views/nav.js';
import { PLAIN, type Speaker } from '../../words.js';
import { spoken } from '../checkins/said.js';
import { languageName, MAIL_LANGUAGES } from '../checkins/view.js';
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
  /** The organization's default language for its people's mails. */
  language?: string;
  upload?: UploadState;
  message?: Safe;
  speaker?: Speaker;
}

/** The notice of a change of several people: what was done, then when it applies. */
export function bulkNotice(sp: Speaker, done: { removed: number } | { moved: number; team: string | null }, started: boolean): string {
  const what =
    'removed' in done
      ? sp.t('console.people.bulkRemoved', { people: done.removed })
      : done.team === null
        ? sp.t('console.people.bulkMovedNoTeam', { people: done.moved })
        : sp.t('console.people.bulkMoved', { people: done.moved, team: done.team });
  return `${what} ${sp.t(started ? 'console.people.fixedStarted' : 'console.people.fixedNext')}`;
}

/** One error of a roster file in the reader's words; a cell's refusal as the forms say it. */
export function issueWords(i: RosterIssue, sp: Speaker): string {
  const line = String(i.line ?? '');
  switch (i.kind) {
    case 'nul':
      return sp.t('console.people.issueNul');
    case 'unparsable':
      return i.line ? sp.t('console.people.issueUnparsableLine', { line }) : sp.t('console.people.issueUnparsable');
    case 'noColumn':
      return sp.t('console.people.issueNoColumn', { name: i.name, what: i.what });
    case 'sameName':
      return sp.t('console.people.issueSameName', { name: i.name, count: i.count });
    case 'tooMany':
      return sp.t('console.people.issueTooMany', { max: i.max });
    case 'fields':
      return sp.t('console.people.issueFields', { line, found: i.found });
    case 'field':
      // The line, then the refusal of its cell as the forms say it (a sentence of its own).
      return `${sp.t('console.people.lineNo', { line })} ${spoken(invalid(i.message), sp).message}`;
    case 'duplicate':
      return sp.t('console.people.issueDuplicate', { line, email: i.email, first: String(i.first) });
  }
}

function teamsTable(teams: RosterPage['teams'], sp: Speaker): Safe {
  const { t } = sp;
  if (teams.length === 0) return html``;
  return html`<div class="table-scroll" role="region" aria-labelledby="teams-caption" tabindex="0"><table>
<caption id="teams-caption">${t('console.people.teamsCaption')}</caption>
<thead><tr><th scope="col">${t('console.people.colTeam')}</th><th scope="col">${t('console.people.colPeople')}</th><th scope="col">${t('console.people.colJoined')}</th><th scope="col">${t('console.people.colAnswers')}</th></tr></thead>
<tbody>${teams.map(
    (x) =>
      html`<tr><td>${x.id === null ? t('console.people.noTeam') : html`<bdi>${x.name ?? ''}</bdi>`}</td><td>${sp.number(x.respondents)}</td><td>${sp.number(x.recentJoins)}</td><td>${
        x.answersAsTeam ? t('console.people.asTeam') : x.id === null ? t('console.people.inOrgTotal') : t('console.people.tooSmall', { min: MIN_TEAM })
      }</td></tr>`,
  )}</tbody></table></div>`;
}

function pager(r: RosterPage, q: PeopleData['query'], sp: Speaker): Safe {
  const { t } = sp;
  if (r.pages <= 1) return html``;
  const at = (page: number) => rosterHref({ search: q.search, page });
  return html`<nav aria-label="${t('console.people.pagerLabel')}" class="pager"><p>${t('console.people.pageOf', { page: String(r.page), pages: String(r.pages) })}
${r.page > 1 ? html`<a href="${at(1)}">${t('console.people.firstPage')}</a> <a href="${at(r.page - 1)}" rel="prev">${t('console.people.prevPage')}</a>` : ''}
${r.page < r.pages ? html`<a href="${at(r.page + 1)}" rel="next">${t('console.people.nextPage')}</a> <a href="${at(r.pages)}">${t('console.people.lastPage')}</a>` : ''}</p></nav>`;
}

const SOURCE_KEYS = { file: 'console.people.sourceFile', console: 'console.people.sourceConsole', scim: 'console.people.sourceScim' } as const;

/**
 * A person's mail language ("default": the organization's), a link to the page that changes it
 * unless SCIM keeps them: a select of every language on each row would make the page twice its size.
 */
function languageCell(p: RosterPage['respondents'][number], back: string, sp: Speaker): Safe {
  const mine = p.language ?? null;
  const words = mine ? languageName(mine) : sp.t('console.people.defaultShort');
  const shown = mine ? html`<span lang="${mine}">${words}</span>` : words;
  if (p.source === 'scim') return html`${shown}`;
  const href = `/console/people/${encodeURIComponent(p.id)}/language${back ? `?back=${encodeURIComponent(back)}` : ''}`;
  return html`<a href="${href}" aria-label="${sp.t('console.people.languageLink', { email: p.email, language: words })}">${shown}</a>`;
}

/** The page that sets one person's mail language: the offered languages, or the organization's default. */
export function languageView(
  s: ConsoleSession,
  person: { id: string; email: string; language: string | null },
  orgDefault: string,
  back: string,
  sp: Speaker = PLAIN,
): PageOptions {
  const { t } = sp;
  const mine = person.language;
  const offered =
    mine === null || MAIL_LANGUAGES.some((l) => l.locale === mine) ? MAIL_LANGUAGES : [...MAIL_LANGUAGES, { locale: mine, name: languageName(mine) }];
  const title = t('console.people.languageSelectLabel', { email: person.email });
  return {
    title,
    speaker: sp,
    nav: navFor(s, '/console/people'),
    body: html`<h1>${title}</h1>
<p>${sp.rich('console.people.languageHelp', { language: languageName(orgDefault) }, { checkins: (chunks) => html`<a href="/console/checkins">${chunks}</a>` })}</p>
<form method="post" action="/console/people/${encodeURIComponent(person.id)}/language" class="stack">${csrfField(s.csrfToken)}<input type="hidden" name="back" value="${back}">
<label for="l-language">${t('console.people.colLanguage')}</label> <select name="language" id="l-language"><option value=""${mine === null ? html` selected` : ''}>${t('console.people.orgDefault', { language: languageName(orgDefault) })}</option>${offered.map(
      (l) => html`<option value="${l.locale}" lang="${l.locale}"${l.locale === mine ? html` selected` : ''}>${l.name}</option>`,
    )}</select>
<button type="submit">${t('console.people.saveLanguage')}</button>
</form>
<p><a href="${rosterHref(rosterQueryOf(back))}">${t('console.people.backToRoster')}</a></p>`,
  };
}

function rosterTable(s: ConsoleSession, r: RosterPage, q: PeopleData['query'], sp: Speaker): Safe {
  const { t } = sp;
  const csrf = csrfField(s.csrfToken);
  const backQuery = rosterHref(q).replace(/^\/console\/people\??/, '');
  const back = html`<input type="hidden" name="back" value="${backQuery}">`;
  const first = (r.page - 1) * PAGE_SIZE + 1;
  const caption =
    r.matching === 0
      ? ''
      : q.search
        ? t('console.people.captionMatch', { people: r.matching, total: String(r.rosterSize), search: q.search })
        : r.pages > 1
          ? t('console.people.captionShown', { people: r.rosterSize, first: String(first), last: String(first + r.respondents.length - 1) })
          : t('console.people.captionAll', { people: r.rosterSize });
  return html`<form method="get" action="/console/people" class="inline" role="search">
<label for="q">${t('console.people.searchLabel')}</label> <input type="search" name="q" id="q" value="${q.search ?? ''}" maxlength="254"> <button type="submit" class="secondary">${t('console.people.search')}</button>
</form>
${q.search ? html`<p><a href="/console/people">${t('console.people.showEveryone')}</a></p>` : ''}
${
  r.matching === 0
    ? html`<p>${q.search ? t('console.people.noMatch', { search: q.search }) : t('console.people.noOne')}</p>`
    : html`<div class="table-scroll" role="region" aria-labelledby="roster-caption" tabindex="0"><table>
<caption id="roster-caption">${caption}</caption>
<thead><tr><th scope="col">${t('console.people.colChoose')}</th><th scope="col">${t('console.people.colEmail')}</th><th scope="col">${t('console.people.colTeam')}</th><th scope="col">${t('console.people.colFrom')}</th><th scope="col">${t('console.people.colAnswersAs')}</th><th scope="col">${t('console.people.colLanguage')}</th><th scope="col">${t('console.people.colChange')}</th></tr></thead>
<tbody>${r.respondents.map(
        (
          p,
        ) => html`<tr><td>${p.source === 'scim' ? '' : html`<input type="checkbox" name="pick-${p.id}" form="bulk" aria-label="${t('console.people.chooseLabel', { email: p.email })}">`}</td><td class="wrap"><bdi>${p.email}</bdi></td><td><bdi>${p.teamName ?? ''}</bdi></td><td>${t(SOURCE_KEYS[p.source])}</td><td>${p.answersWithTeam ? t('console.people.answersTeam') : t('console.people.answersOrg')}</td><td>${languageCell(p, backQuery, sp)}</td><td>
${
  p.source === 'scim'
    ? html`<p>${t('console.people.scimOwned')}</p>`
    : html`<form method="post" action="/console/people/${encodeURIComponent(p.id)}/move">${csrf}${back}<input name="team" value="${p.teamName ?? ''}" maxlength="80" aria-label="${t('console.people.moveTeamLabel', { email: p.email })}"><button type="submit" class="secondary" aria-label="${t('console.people.moveLabel', { email: p.email })}">${t('console.people.move')}</button></form>`
}
<form method="post" action="/console/people/${encodeURIComponent(p.id)}/resend">${csrf}${back}<button type="submit" class="secondary" aria-label="${t('console.people.newLinkLabel', { email: p.email })}">${t('console.people.newLink')}</button></form>
${p.source === 'scim' ? '' : html`<button type="submit" form="bulk" name="removeOne" value="${p.id}" class="danger" aria-label="${t('console.people.removeLabel', { email: p.email })}">${t('console.people.remove')}</button>`}
</td></tr>`,
      )}</tbody></table></div>
<form method="post" action="/console/people/bulk" id="bulk" class="stack">${csrf}${back}
<fieldset><legend>${t('console.people.bulkLegend')}</legend>
<p>${t('console.people.bulkHint')}</p>
<label for="b-team">${t('console.people.bulkTeam')}</label> <input name="team" id="b-team" maxlength="80">
<button type="submit" name="do" value="move" class="secondary">${t('console.people.bulkMove')}</button>
<button type="submit" name="do" value="remove" class="danger">${t('console.people.bulkRemove')}</button>
</fieldset></form>
${pager(r, q, sp)}`
}`;
}

function columnSelect(id: string, name: string, label: string, header: string[], none: string | null, sp: Speaker): Safe {
  return html`<label for="${id}">${label}</label> <select name="${name}" id="${id}" required>
<option value="" disabled selected hidden>${sp.t('console.people.chooseColumn')}</option>
${none ? html`<option value="">${none}</option>` : ''}
${header.map((h) => html`<option value="${h}">${h === '' ? sp.t('console.people.unnamedColumn') : h}</option>`)}
</select>`;
}

/** The header names a people file's columns are found by (src/domain/checkins/roster.ts): code, the same in every language. */
const FILE_COLUMN_NAMES = html`<code>email</code>, <code>e-mail</code>, <code>mail</code>; <code>team</code>, <code>department</code>, <code>group</code>; <code>language</code> (<code>de</code>, <code>fr</code>, <code>pt-BR</code>…)`;

function uploadForm(s: ConsoleSession, upload: UploadState | undefined, sp: Speaker): Safe {
  const { t } = sp;
  const csrf = csrfField(s.csrfToken);
  const f = upload?.file;
  const choose = f?.choose && f.header ? f.header : null;
  return html`<h2 id="upload">${t('console.people.hUpload')}</h2>
${
  f && f.issues.length > 0
    ? html`<div class="notice error" role="alert"><p>${t('console.people.fileErrors', { count: f.issues.length })}</p>
<ul class="errors">${f.issues.slice(0, MAX_LISTED_ERRORS).map((e) => html`<li>${issueWords(e, sp)}</li>`)}</ul>${
        f.issues.length > MAX_LISTED_ERRORS ? html`<p>${t('console.people.andMore', { count: f.issues.length - MAX_LISTED_ERRORS })}</p>` : ''
      }</div>`
    : ''
}
${choose ? html`<p class="notice" role="status">${t('console.people.chooseColumns')}</p>` : ''}
<form method="post" action="/console/people/replace" enctype="multipart/form-data" class="stack">
${csrf}
${
  choose
    ? html`${f!.choose!.email ? columnSelect('u-email-col', 'emailColumn', t('console.people.emailColumn'), choose, null, sp) : ''}
${f!.choose!.team ? columnSelect('u-team-col', 'teamColumn', t('console.people.teamColumn'), choose, t('console.people.noTeamColumn'), sp) : ''}`
    : html`<label for="u-file">${sp.rich('console.people.fileLabel', { names: FILE_COLUMN_NAMES })}</label>
<input type="file" name="file" id="u-file" accept=".csv,text/csv,text/plain">`
}
<label for="p-csv">${choose ? t('console.people.sentLabel') : t('console.people.pasteLabel')}</label>
<textarea name="csv" id="p-csv" rows="6">${upload?.text ?? ''}</textarea>
<button type="submit">${choose ? t('console.people.useColumns') : t('console.people.replace')}</button>
</form>`;
}

/**
 * The People page (CONTRACT.md section 11 amended, *Rounds you can see*; issue 52, L9; issue 57):
 * the teams' summary first, then the roster a page at a time (searchable), each person's mail
 * language, then adding a person and uploading the roster. Its size does not grow with the
 * roster. The rounds, their settings and participation are on the Check-ins page.
 */
export function peopleView({ session: s, roster, query, language = 'en', upload, message, speaker: sp = PLAIN }: PeopleData): PageOptions {
  const { t } = sp;
  const csrf = csrfField(s.csrfToken);
  const checkins = (chunks: Safe) => html`<a href="/console/checkins">${chunks}</a>`;
  return {
    title: t('console.people.title'),
    speaker: sp,
    nav: navFor(s, '/console/people'),
    body: html`<h1>${t('console.people.title')}</h1>
${message ?? ''}
<p>${sp.rich('console.people.intro', {}, { about: (chunks) => html`<a href="/checkin/about">${chunks}</a>`, checkins })}</p>
<p class="notice ok" role="note">${t('console.people.smallTeams', { min: MIN_TEAM })}</p>
<p>${t('console.people.fixedWeek')}</p>
<p>${sp.rich('console.people.languageHelp', { language: languageName(language) }, { checkins })}</p>
<h2>${t('console.people.hTeams')}</h2>
${roster.rosterSize === 0 ? html`<p>${t('console.people.noTeams')}</p>` : teamsTable(roster.teams, sp)}
<h2>${t('console.people.hRoster')}</h2>
${rosterTable(s, roster, query, sp)}
<h2>${t('console.people.hAdd')}</h2>
<form method="post" action="/console/people" class="stack">
${csrf}
<label for="p-email">${t('console.people.colEmail')}</label> <input type="email" name="email" id="p-email" required maxlength="254" autocomplete="off">
<label for="p-team">${t('console.people.teamOptional')}</label> <input name="team" id="p-team" maxlength="80">
<button type="submit">${t('console.people.addPerson')}</button>
</form>
${uploadForm(s, upload, sp)}`,
  };
}

/** The confirmation of removing several people: who, and one button that says how many. */
export function removeChosenView(s: ConsoleSession, chosen: readonly { id: string; email: string }[], back: string, sp: Speaker = PLAIN): PageOptions {
  const { t } = sp;
  return {
    title: t('console.people.confirmTitle'),
    speaker: sp,
    nav: navFor(s, '/console/people'),
    body: html`<h1>${t('console.people.confirmTitle')}</h1>
<p>${t('console.people.confirmLead', { people: chosen.length })}</p>
<ul>${chosen.map((p) => html`<li><bdi>${p.email}</bdi></li>`)}</ul>
<form method="post" action="/console/people/bulk">${csrfField(s.csrfToken)}<input type="hidden" name="back" value="${back}"><input type="hidden" name="do" value="remove"><input type="hidden" name="confirm" value="1">
${chosen.map((p) => html`<input type="hidden" name="pick-${p.id}" value="1">`)}
<button type="submit" class="danger">${t('console.people.confirmButton', { people: chosen.length })}</button></form>
<p><a href="${rosterHref(rosterQueryOf(back))}">${t('console.people.cancel')}</a></p>`,
  };
}

const rosterQueryOf = (back: string) => rosterQuery(new URLSearchParams(back));
