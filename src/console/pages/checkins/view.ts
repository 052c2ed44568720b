import type { ConsoleSession } from '../../../domain/sessions.js';
import type { CheckinSettings } from '../../../domain/checkins/settings.js';
import type { RoundStatus } from '../../../domain/checkins/round-status.js';
import type { linksFileState, ParticipationCell, RoundNowState } from '../../../domain/checkins/rounds.js';
import { mailText, reminderText, subjectOf } from '../../../domain/checkins/rounds.js';
import { MIN_TEAM } from '../../../domain/checkins/roster.js';
import { checkinClosesAt } from '../../../domain/checkins/week.js';
import { CATALOGUES, dirOf, format, type Locale } from '../../../i18n/index.js';
import { csrfField, html, type PageOptions, type Safe } from '../../html.js';
import { navFor } from '../../views/nav.js';
import { PLAIN, type Speaker } from '../../words.js';
import { timeZones } from './form.js';

/** The languages a respondent's mails can be in (the written catalogues), each named in its own language. */
export const MAIL_LANGUAGES: readonly { locale: Locale; name: string }[] = Object.keys(CATALOGUES).map((locale) => ({
  locale,
  name: format(locale, 'meta.name'),
}));
/** A locale's name in its own language (the pseudo-locale's too). */
export const languageName = (locale: Locale) => format(locale, 'meta.name');

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
  /** The organization's default language for its people's mails. */
  language?: Locale;
  message?: Safe;
  speaker?: Speaker;
}

/** A weekday (1 Monday .. 7 Sunday) in the reader's language. */
const weekday = (sp: Speaker, d: number) =>
  new Intl.DateTimeFormat(sp.locale, { weekday: 'long', timeZone: 'UTC' }).format(new Date(Date.UTC(2026, 10, 1 + d)));
const hh = (h: number) => `${String(h).padStart(2, '0')}:00`;
export const scheduleText = (s: CheckinSettings, sp: Speaker = PLAIN) =>
  s.reminderWeekday
    ? sp.t('console.checkins.scheduleReminder', {
        weekday: weekday(sp, s.weekday),
        hour: hh(s.hour),
        zone: s.timeZone,
        reminder: weekday(sp, s.reminderWeekday),
      })
    : sp.t('console.checkins.schedule', { weekday: weekday(sp, s.weekday), hour: hh(s.hour), zone: s.timeZone });

function statusCell(r: RoundStatus, sp: Speaker): string {
  if (r.delivery === 'file') return sp.t('console.checkins.statusFile');
  if (r.mailed === null) return sp.t('console.checkins.statusUncounted');
  return sp.t('console.checkins.statusMails', { sent: r.mailed, waiting: r.waiting, failed: r.failed });
}

function reminderCell(r: RoundStatus, sp: Speaker): string {
  if (r.delivery !== 'mail') return '–';
  if (r.remindersWaiting > 0 && r.reminderDue) return sp.t('console.checkins.reminderDue', { at: sp.when(r.reminderDue), people: r.remindersWaiting });
  if (r.reminded && r.reminded > 0) return sp.t('console.checkins.reminderSent', { people: r.reminded });
  return sp.t('console.checkins.reminderNone');
}

function roundsTable(rounds: RoundStatus[], sp: Speaker): Safe {
  const { t } = sp;
  if (rounds.length === 0) return html`<p>${t('console.checkins.noRound')}</p>`;
  const errors = rounds.filter((r) => r.lastError);
  return html`<div class="table-scroll" role="region" aria-labelledby="rounds-caption" tabindex="0"><table>
<caption id="rounds-caption">${t('console.checkins.roundsCaption')}</caption>
<thead><tr><th scope="col">${t('console.checkins.colWeekOf')}</th><th scope="col">${t('console.checkins.colStarted')}</th><th scope="col">${t('console.checkins.colPeople')}</th><th scope="col">${t('console.checkins.colMails')}</th><th scope="col">${t('console.checkins.colReminder')}</th><th scope="col">${t('console.checkins.colLinksClose')}</th></tr></thead>
<tbody>${rounds.map(
    (r) =>
      html`<tr><td>${r.week}</td><td>${sp.when(r.startedAt)}</td><td>${sp.number(r.people)}</td><td>${statusCell(r, sp)}</td><td>${reminderCell(r, sp)}</td><td>${r.open ? sp.when(r.closesAt) : t('console.checkins.linksClosed', { at: sp.when(r.closesAt) })}</td></tr>`,
  )}</tbody></table></div>
${errors.map(
  (r) =>
    html`<p class="notice error" role="note">${sp.rich(
      'console.checkins.relayRefused',
      { week: r.week, failed: r.failed, at: sp.when(r.lastErrorAt, t('console.checkins.never')), reason: r.lastError ?? '' },
      { q: (chunks) => html`<q class="wrap">${chunks}</q>` },
    )}</p>`,
)}`;
}

function thisWeek(d: CheckinsData, sp: Speaker): Safe {
  const { t } = sp;
  const csrf = csrfField(d.session.csrfToken);
  const s = d.now;
  if (s.startedAt) {
    return html`<p>${t('console.checkins.startedFixed', { week: s.week, started: sp.when(s.startedAt), closes: sp.when(checkinClosesAt(s.week).toISOString()) })}</p>`;
  }
  if (!d.mails) {
    return html`<p>${t('console.checkins.noMail', { started: d.links.started ? 'yes' : 'no' })}</p>
${d.canChange ? html`<form method="post" action="/console/checkins/links">${csrf}<button type="submit">${t('console.checkins.downloadLinks')}</button></form>` : ''}`;
  }
  return html`<p>${t('console.checkins.notStarted', { week: s.week, at: sp.when(s.scheduledAt), people: s.people })}</p>
${d.canChange && s.people > 0 ? html`<p><a class="button" href="/console/checkins/send">${t('console.checkins.sendNowLink')}</a></p>` : ''}`;
}

function linksAgain(d: CheckinsData, sp: Speaker): Safe {
  if (d.mails || !d.canChange || !d.links.handedOut || d.links.people === 0) return html``;
  const csrf = csrfField(d.session.csrfToken);
  return html`<p>${sp.t('console.checkins.linksAgain', { people: d.links.people })}</p>
<form method="post" action="/console/checkins/links">${csrf}<input type="hidden" name="renew" value="1"><button type="submit">${sp.t('console.checkins.renewLinks')}</button></form>`;
}

function settingsForm(d: CheckinsData, sp: Speaker): Safe {
  const { t } = sp;
  const s = d.settings;
  if (!d.canChange) return html`<p>${t('console.checkins.roundGoesOn', { schedule: scheduleText(s, sp) })}</p>`;
  const csrf = csrfField(d.session.csrfToken);
  const days = [1, 2, 3, 4, 5, 6, 7].map((i) => ({ i, name: weekday(sp, i) }));
  return html`<form method="post" action="/console/checkins/settings" class="stack">
${csrf}
<label for="s-weekday">${t('console.checkins.labelWeekday')}</label> <select name="weekday" id="s-weekday">${days.map((w) => html`<option value="${w.i}"${w.i === s.weekday ? html` selected` : ''}>${w.name}</option>`)}</select>
<label for="s-hour">${t('console.checkins.labelHour')}</label> <input type="number" name="hour" id="s-hour" min="0" max="23" value="${s.hour}" required>
<label for="s-tz">${t('console.checkins.labelZone')}</label> <input name="timeZone" id="s-tz" value="${s.timeZone}" required maxlength="64" list="zones" autocomplete="off">
<datalist id="zones">${timeZones().map((z) => html`<option value="${z.zone}">${z.zone === 'UTC' ? t('console.checkins.utcNoZone') : z.city}</option>`)}</datalist>
<label for="s-reminder">${t('console.checkins.labelReminder')}</label> <select name="reminderWeekday" id="s-reminder"><option value="">${t('console.checkins.noReminder')}</option>${days.map((w) => html`<option value="${w.i}"${w.i === s.reminderWeekday ? html` selected` : ''}>${w.name}</option>`)}</select>
<label for="s-reasons">${t('console.checkins.labelReasons')}</label> <textarea name="reasons" id="s-reasons" rows="4">${s.reasons.join('\n')}</textarea>
<label for="s-words">${t('console.checkins.labelFlagWords')}</label> <textarea name="flagWords" id="s-words" rows="4">${s.flagWords.join('\n')}</textarea>
<button type="submit">${t('console.checkins.saveSettings')}</button>
</form>`;
}

/** The organization's default language (issue 57): owners and admins choose it; viewers read it. */
function languageForm(d: CheckinsData, sp: Speaker): Safe {
  const { t } = sp;
  const current = d.language ?? 'en';
  const people = (chunks: Safe) => html`<a href="/console/people">${chunks}</a>`;
  if (!d.canChange) return html`<p>${sp.rich('console.checkins.languageNow', { language: languageName(current) }, { people })}</p>`;
  const offered = MAIL_LANGUAGES.some((l) => l.locale === current) ? MAIL_LANGUAGES : [...MAIL_LANGUAGES, { locale: current, name: languageName(current) }];
  return html`<p>${sp.rich('console.checkins.languageIntro', {}, { people })}</p>
<form method="post" action="/console/checkins/language" class="stack">
${csrfField(d.session.csrfToken)}
<label for="s-language">${t('console.checkins.languageLabel')}</label> <select name="language" id="s-language">${offered.map(
    (l) => html`<option value="${l.locale}" lang="${l.locale}"${l.locale === current ? html` selected` : ''}>${l.name}</option>`,
  )}</select>
<button type="submit">${t('console.checkins.saveLanguage')}</button>
</form>`;
}

/** The answer page as a person of the round sees it, from the round's own parts (the page itself is the check-in face's). */
export function answerPagePreview(orgName: string, settings: CheckinSettings, week: string, sp: Speaker = PLAIN): Safe {
  const { t } = sp;
  return html`<div class="preview" role="group" aria-label="${t('console.checkins.previewAnswerLabel')}">
<p>${sp.rich('console.checkins.previewAnswer', { org: orgName }, { strong: (chunks) => html`<strong>${chunks}</strong>` })}</p>
<p>${t('console.checkins.previewTeam', { min: MIN_TEAM })}</p>
${settings.reasons.length > 0 ? html`<p>${t('console.checkins.previewReasons', { reasons: settings.reasons.join(', ') })}</p>` : html`<p>${t('console.checkins.previewNoReasons')}</p>`}
<p>${t('console.checkins.previewComment', { max: 2000, closes: sp.when(checkinClosesAt(week).toISOString()) })}</p>
</div>`;
}

function previews(d: CheckinsData, sp: Speaker): Safe {
  const { t } = sp;
  const org = d.session.orgName;
  const week = d.now.week;
  const csrf = csrfField(d.session.csrfToken);
  // The mails as the people without a language of their own get them: in the organization's default.
  const lang = d.language ?? 'en';
  // Marked with their language when it is not the page's (a screen reader then reads them in it).
  const dir = lang === sp.lang ? '' : html` lang="${lang}" dir="${dirOf(lang)}"`;
  const q = (chunks: Safe) => html`<q${dir}>${chunks}</q>`;
  const placeholder = format(lang, 'console.checkins.linkPlaceholder');
  return html`<p>${t('console.checkins.previewIn', { language: languageName(lang) })}</p>
<h3>${t('console.checkins.hMail')}</h3>
<p>${sp.rich('console.checkins.mailFrom', { org, subject: subjectOf('first', org, lang) }, { q })}</p>
<pre class="wrap"${dir} aria-label="${t('console.checkins.mailPreviewLabel')}">${mailText(org, placeholder, week, d.settings.timeZone, lang)}</pre>
<h3>${t('console.checkins.hReminder')}</h3>
<p>${sp.rich('console.checkins.subject', { subject: subjectOf('reminder', org, lang) }, { q })}</p>
<pre class="wrap"${dir} aria-label="${t('console.checkins.reminderPreviewLabel')}">${reminderText(org, week, new Date(d.now.startedAt ?? d.now.scheduledAt), d.settings.timeZone, lang)}</pre>
<h3>${t('console.checkins.hAnswerPage')}</h3>
${answerPagePreview(org, d.settings, week, sp)}
${
  d.canChange && d.mails
    ? html`<form method="post" action="/console/checkins/test-mail">${csrf}<button type="submit" class="secondary">${t('console.checkins.testMail', { email: d.session.member.email })}</button></form>`
    : ''
}`;
}

/**
 * The Check-ins page (CONTRACT.md section 11 amended, *Rounds you can see*): this week's round
 * (send it now, after a confirmation), each round's status, the schedule, the default language of
 * the mails, previews of the mail and the answer page with a test mail, and participation. Viewers
 * read it; owners and admins change it.
 */
export function checkinsView(d: CheckinsData): PageOptions {
  const sp = d.speaker ?? PLAIN;
  const { t } = sp;
  const count = (n: number | null) => (n === null ? t('console.checkins.fewerThan', { min: MIN_TEAM }) : sp.number(n));
  return {
    title: t('console.checkins.title'),
    speaker: sp,
    nav: navFor(d.session, '/console/checkins'),
    body: html`<h1>${t('console.checkins.title')}</h1>
${d.message ?? ''}
<p>${sp.rich(
      'console.checkins.intro',
      {},
      { roster: (chunks) => html`<a href="/console/people">${chunks}</a>`, about: (chunks) => html`<a href="/checkin/about">${chunks}</a>` },
    )}</p>
<h2>${t('console.checkins.hThisWeek')}</h2>
${thisWeek(d, sp)}
${linksAgain(d, sp)}
<h2>${t('console.checkins.hRounds')}</h2>
${roundsTable(d.rounds, sp)}
<h2>${t('console.checkins.hSchedule')}</h2>
${settingsForm(d, sp)}
<h2>${t('console.checkins.hLanguage')}</h2>
${languageForm(d, sp)}
<h2>${t('console.checkins.hPreview')}</h2>
${previews(d, sp)}
<h2>${t('console.checkins.hParticipation')}</h2>
${
  d.counts.length === 0
    ? html`<p>${t('console.checkins.noRound')}</p>`
    : html`<div class="table-scroll" role="region" aria-labelledby="participation-caption" tabindex="0"><table><caption id="participation-caption">${t('console.checkins.participationCaption', { min: MIN_TEAM })}</caption>
<thead><tr><th scope="col">${t('console.checkins.colWeekOf')}</th><th scope="col">${t('console.checkins.colTeam')}</th><th scope="col">${t('console.checkins.colInvited')}</th><th scope="col">${t('console.checkins.colOpened')}</th><th scope="col">${t('console.checkins.colAnswered')}</th></tr></thead>
<tbody>${d.counts.map((c) => html`<tr><td>${c.week}</td><td>${c.teamName === null ? t('console.checkins.noTeam') : html`<bdi>${c.teamName}</bdi>`}</td><td>${count(c.invited)}</td><td>${count(c.opened)}</td><td>${count(c.answered)}</td></tr>`)}</tbody></table></div>`
}`,
  };
}

/** The confirmation before "send this week's round now": to how many people, and what it does. */
export function sendNowView(session: ConsoleSession, s: RoundNowState, settings: CheckinSettings, sp: Speaker = PLAIN): PageOptions {
  const { t } = sp;
  const closes = sp.when(checkinClosesAt(s.week).toISOString());
  return {
    title: t('console.checkins.sendTitle'),
    speaker: sp,
    nav: navFor(session, '/console/checkins'),
    body: html`<h1>${t('console.checkins.sendHeading')}</h1>
<p>${t('console.checkins.sendLead', { week: s.week, people: s.people, at: sp.when(s.scheduledAt), schedule: scheduleText(settings, sp) })}</p>
<p>${s.reminderAt ? t('console.checkins.sendFixedReminder', { at: sp.when(s.reminderAt), closes }) : t('console.checkins.sendFixedNoReminder', { closes })}</p>
<form method="post" action="/console/checkins/send" class="stack">
${csrfField(session.csrfToken)}
<button type="submit">${t('console.checkins.sendButton', { people: s.people })}</button>
</form>
<p><a href="/console/checkins">${t('console.checkins.cancelBack')}</a></p>`,
  };
}

/** What the link of a test mail opens: a page that says it is a test, and the answer page's preview. */
export function testLinkView(session: ConsoleSession, settings: CheckinSettings, week: string, sp: Speaker = PLAIN): PageOptions {
  const { t } = sp;
  return {
    title: t('console.checkins.testTitle'),
    speaker: sp,
    nav: navFor(session, '/console/checkins'),
    body: html`<h1>${t('console.checkins.testHeading')}</h1>
<p class="notice ok" role="note">${t('console.checkins.testNote')}</p>
${answerPagePreview(session.orgName, settings, week, sp)}
<p><a href="/console/checkins">${t('console.checkins.backToCheckins')}</a></p>`,
  };
}
