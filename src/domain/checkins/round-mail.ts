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
}

const escapeHtml = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&#39;');

/** An instant as a mail says it: "Thursday 3 December 2026 at 00:00 (UTC)", in the zone given. */
export function mailInstant(t: Date, timeZone = 'UTC'): string {
  const day = new Intl.DateTimeFormat('en-GB', { timeZone, weekday: 'long', day: 'numeric', month: 'long', year: 'numeric' }).format(t);
  const time = new Intl.DateTimeFormat('en-GB', { timeZone, hour: '2-digit', minute: '2-digit', hourCycle: 'h23' }).format(t);
  return `${day.replace(',', '')} at ${time} (${timeZone})`;
}

/** When the links of `week` stop working, as the mails say it. */
export const closingOf = (week: string, timeZone = 'UTC') => mailInstant(checkinClosesAt(week), timeZone);

export const subjectOf = (kind: RoundMailKind, orgName: string) => `${kind === 'reminder' ? 'Reminder: ' : ''}How was your week? (${orgName})`;

/** The first mail's text (also a re-sent link's). */
export const mailText = (orgName: string, link: string, week: string, timeZone = 'UTC') =>
  `This week's check-in of ${orgName} is open.\n\n` +
  `How was your week? Answer in a few seconds here:\n${link}\n\n` +
  `The link is yours and gives one answer. Your answer reaches the service without it: the service can ` +
  `tell that someone answered, never who. The link works until ${closingOf(week, timeZone)}.\n`;

export const reminderText = (orgName: string, week: string, firstMailed: Date, timeZone = 'UTC') =>
  `A reminder: this week's check-in of ${orgName} is open until ${closingOf(week, timeZone)}.\n\n` +
  `If you have answered already, thank you, and ignore this mail. Everyone on the check-in gets this reminder, ` +
  `because the service cannot know who answered: it never learns whose answer is whose.\n\n` +
  `Your personal link is in the mail "How was your week? (${orgName})" of ${mailInstant(firstMailed, timeZone).replace(/ at .*$/, '')}. ` +
  `If you cannot find it, ask the people who run the check-ins at ${orgName} to send you a new one.\n`;

const page = (title: string, body: string) =>
  `<!doctype html>\n<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width"><title>${escapeHtml(title)}</title></head>\n<body>\n${body}\n</body></html>\n`;

export const mailHtml = (orgName: string, link: string, week: string, timeZone = 'UTC') => {
  const org = escapeHtml(orgName);
  return page(
    subjectOf('first', orgName),
    `<p>This week's check-in of ${org} is open.</p>\n` +
      `<p><strong>How was your week?</strong> Answer in a few seconds: <a href="${escapeHtml(link)}">answer this week's check-in</a>.</p>\n` +
      `<p>The link is yours and gives one answer. Your answer reaches the service without it: the service can tell that someone answered, never who.</p>\n` +
      `<p>The link works until <strong>${escapeHtml(closingOf(week, timeZone))}</strong>.</p>\n` +
      `<p>If the link does not open, copy this address into your browser:<br>${escapeHtml(link)}</p>`,
  );
};

export const reminderHtml = (orgName: string, week: string, firstMailed: Date, timeZone = 'UTC') =>
  page(
    subjectOf('reminder', orgName),
    reminderText(orgName, week, firstMailed, timeZone)
      .trimEnd()
      .split('\n\n')
      .map((p) => `<p>${escapeHtml(p)}</p>`)
      .join('\n'),
  );

/** A round's mail of `kind`, whole: subject, text, HTML and the sender's name. */
export function roundMail(kind: RoundMailKind, m: { orgName: string; week: string; timeZone: string; link?: string; firstMailed?: Date }): RoundMail {
  if (kind === 'reminder') {
    const first = m.firstMailed ?? new Date(`${m.week}T00:00:00.000Z`);
    return {
      subject: subjectOf(kind, m.orgName),
      text: reminderText(m.orgName, m.week, first, m.timeZone),
      html: reminderHtml(m.orgName, m.week, first, m.timeZone),
      fromName: m.orgName,
    };
  }
  const link = m.link ?? '';
  return {
    subject: subjectOf(kind, m.orgName),
    text: mailText(m.orgName, link, m.week, m.timeZone),
    html: mailHtml(m.orgName, link, m.week, m.timeZone),
    fromName: m.orgName,
  };
}
