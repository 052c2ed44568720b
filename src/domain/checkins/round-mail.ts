import { dirOf, format, type Locale, type MessageKey, PSEUDO_LOCALE, SOURCE_LOCALE, translator } from '../../i18n/index.js';
import { checkinClosesAt } from './week.js';

/**
 * The round's mails (CONTRACT.md section 11 amended, *Rounds you can see*): the first mail with
 * the person's link, and the reminder, each in plain text and in HTML (multipart/alternative),
 * sent in the organization's name (the sender's display name; the address stays MAIL_FROM's) and
 * saying when the link closes, in the organization's time zone. The console's preview and test
 * mail use these same functions, so they show exactly what the round sends.
 */

export type RoundMailKind = 'first' | 'resent' | 'reminder';

export interface RoundMail {
  subject: string;
  text: string;
  html: string;
  /** The sender's display name: the organization's (the mailer makes it safe for a header). */
  fromName: string;
  /** The mail's language (its Content-Language), the respondent's or the organization's. */
  language: Locale;
}

const escapeHtml = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&#39;');
/** Text between tags: its quotes need no escape (an apostrophe stays one, as the plain-text part has it). */
const escapeText = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

/**
 * An instant as a mail says it, in the zone given: "Thursday 3 December 2026 at 00:00 (UTC)" in
 * English, the language's own full date and time elsewhere ("Donnerstag, 3. Dezember 2026 um 00:00").
 */
export function mailInstant(t: Date, timeZone = 'UTC', locale: Locale = SOURCE_LOCALE): string {
  if (locale === SOURCE_LOCALE || locale === PSEUDO_LOCALE) {
    const day = new Intl.DateTimeFormat('en-GB', { timeZone, weekday: 'long', day: 'numeric', month: 'long', year: 'numeric' }).format(t);
    const time = new Intl.DateTimeFormat('en-GB', { timeZone, hour: '2-digit', minute: '2-digit', hourCycle: 'h23' }).format(t);
    return `${day.replace(',', '')} at ${time} (${timeZone})`;
  }
  return `${new Intl.DateTimeFormat(locale, { timeZone, dateStyle: 'full', timeStyle: 'short', hourCycle: 'h23' }).format(t)} (${timeZone})`;
}
const mailDay = (t: Date, timeZone: string, locale: Locale) =>
  locale === SOURCE_LOCALE || locale === PSEUDO_LOCALE
    ? mailInstant(t, timeZone).replace(/ at .*$/, '')
    : new Intl.DateTimeFormat(locale, { timeZone, dateStyle: 'full' }).format(t);

/** When the links of `week` stop working, as the mails say it. */
export const closingOf = (week: string, timeZone = 'UTC', locale: Locale = SOURCE_LOCALE) => mailInstant(checkinClosesAt(week), timeZone, locale);

export const subjectOf = (kind: RoundMailKind, orgName: string, locale: Locale = SOURCE_LOCALE) =>
  format(locale, kind === 'reminder' ? 'mail.reminderSubject' : 'mail.subject', { org: orgName });

/** The first mail's text (also a re-sent link's). */
export const mailText = (orgName: string, link: string, week: string, timeZone = 'UTC', locale: Locale = SOURCE_LOCALE) => {
  const t = translator(locale);
  return (
    `${t('mail.open', { org: orgName })}\n\n` +
    `${t('mail.askText')}\n${link}\n\n` +
    `${t('mail.yours')} ${t('mail.until', { closes: closingOf(week, timeZone, locale) })}\n`
  );
};

export const reminderText = (orgName: string, week: string, firstMailed: Date, timeZone = 'UTC', locale: Locale = SOURCE_LOCALE) => {
  const t = translator(locale);
  return (
    `${t('mail.reminderOpen', { org: orgName, closes: closingOf(week, timeZone, locale) })}\n\n` +
    `${t('mail.reminderWhy')}\n\n` +
    `${t('mail.reminderWhere', { subject: subjectOf('first', orgName, locale), day: mailDay(firstMailed, timeZone, locale), org: orgName })}\n`
  );
};

const page = (title: string, body: string, locale: Locale) =>
  `<!doctype html>\n<html lang="${locale === PSEUDO_LOCALE ? 'en' : locale}" dir="${dirOf(locale)}"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width"><title>${escapeHtml(title)}</title></head>\n<body>\n${body}\n</body></html>\n`;

export const mailHtml = (orgName: string, link: string, week: string, timeZone = 'UTC', locale: Locale = SOURCE_LOCALE) => {
  const t = (key: MessageKey, values?: Record<string, string>) => escapeText(format(locale, key, values));
  return page(
    subjectOf('first', orgName, locale),
    `<p>${t('mail.open', { org: orgName })}</p>\n` +
      `<p><strong>${t('mail.askHtml')}</strong> ${t('mail.askHtmlLead')} <a href="${escapeHtml(link)}">${t('mail.linkText')}</a>.</p>\n` +
      `<p>${t('mail.yours')}</p>\n` +
      `<p>${t('mail.until', { closes: '\u0000' }).replace('\u0000', `<strong>${escapeText(closingOf(week, timeZone, locale))}</strong>`)}</p>\n` +
      `<p>${t('mail.copy')}<br>${escapeText(link)}</p>`,
    locale,
  );
};

export const reminderHtml = (orgName: string, week: string, firstMailed: Date, timeZone = 'UTC', locale: Locale = SOURCE_LOCALE) =>
  page(
    subjectOf('reminder', orgName, locale),
    reminderText(orgName, week, firstMailed, timeZone, locale)
      .trimEnd()
      .split('\n\n')
      .map((p) => `<p>${escapeText(p)}</p>`)
      .join('\n'),
    locale,
  );

/** The link of a mail: its token, and after it the mail's language, both in the fragment no request carries. */
export const withLanguage = (link: string, locale: Locale) => (link.includes('#') ? `${link}&lang=${encodeURIComponent(locale)}` : link);

/**
 * A round's mail of `kind`, whole: subject, text, HTML, the sender's name and the language, which
 * is the respondent's (their roster language) or else the organization's.
 */
export function roundMail(
  kind: RoundMailKind,
  m: { orgName: string; week: string; timeZone: string; link?: string; firstMailed?: Date; locale?: Locale },
): RoundMail {
  const locale = m.locale ?? SOURCE_LOCALE;
  if (kind === 'reminder') {
    const first = m.firstMailed ?? new Date(`${m.week}T00:00:00.000Z`);
    return {
      subject: subjectOf(kind, m.orgName, locale),
      text: reminderText(m.orgName, m.week, first, m.timeZone, locale),
      html: reminderHtml(m.orgName, m.week, first, m.timeZone, locale),
      fromName: m.orgName,
      language: locale,
    };
  }
  const link = withLanguage(m.link ?? '', locale);
  return {
    subject: subjectOf(kind, m.orgName, locale),
    text: mailText(m.orgName, link, m.week, m.timeZone, locale),
    html: mailHtml(m.orgName, link, m.week, m.timeZone, locale),
    fromName: m.orgName,
    language: locale,
  };
}
