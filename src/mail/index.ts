import { createRequire } from 'node:module';
import type nodemailer from 'nodemailer';
import addressparser from 'nodemailer/lib/addressparser/index.js';

/**
 * Mail from the service (CONTRACT.md section 11, "invitations prove the address"): through the
 * deployment's relay, SMTP_URL (smtp:// or smtps://, credentials in the URL), from MAIL_FROM.
 */
export interface MailMessage {
  to: string;
  subject: string;
  text: string;
  /** The same words as formatted mail: the message is then multipart/alternative (text first). */
  html?: string;
  /** The sender's display name (the organization's), in place of MAIL_FROM's; its address stays MAIL_FROM's. */
  fromName?: string;
  /** The mail's language, sent as its Content-Language header (a BCP 47 tag). */
  language?: string;
}

export interface Mailer {
  send(message: MailMessage): Promise<void>;
  /** Closes the pooled connections (at shutdown). */
  close(): void;
}

/** How many mails one process has in flight at once, each over a connection of its pool. */
export const MAIL_CONNECTIONS = 4;

/** The longest display name put in a From header (an organization's name may be longer). */
export const MAX_DISPLAY_NAME = 78;

/**
 * A header's text made safe: no control character (CR and LF would start a header of their own),
 * no line or paragraph separator, no bidirectional override that would make the name read as
 * something else, whitespace runs as one space. Nodemailer then encodes what is not plain ASCII
 * (RFC 2047) and quotes a display name's specials, so a name such as `"Acme" <ceo@evil.test>`
 * stays a name and never becomes an address.
 */
export function headerText(raw: string, max = 998): string {
  const clean = raw
    .normalize('NFC')
    // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what this removes
    .replace(/[\u0000-\u001f\u007f-\u009f\u2028\u2029\u200e\u200f\u202a-\u202e\u2066-\u2069]/g, ' ')
    .replace(/\s+/g, ' ')
    .trim();
  const chars = [...clean];
  return chars.length > max ? `${chars.slice(0, max - 1).join('')}…` : clean;
}

/** MAIL_FROM's address (it may be `Name <address>` or a bare address). */
export function fromAddress(mailFrom: string): string {
  const first = addressparser(mailFrom, { flatten: true })[0];
  return first?.address || mailFrom.trim();
}

/**
 * A pooled transport: a round of check-ins mails every respondent at once, and one new SMTP
 * connection per mail (TCP, greeting, EHLO, and TLS for smtps) held a process to about 15 mails a
 * second (the check-in bench, issue 45). The pool keeps up to MAIL_CONNECTIONS connections open
 * and sends up to 100 mails over each before opening a new one. A relay that stalls must not hold
 * a console request for minutes: hence the timeouts.
 */
export function smtpMailer(smtpUrl: string, from: string): Mailer {
  // Loaded here, when SMTP_URL is set: a server without a relay never loads the library (docs/decisions.md).
  const { createTransport } = createRequire(import.meta.url)('nodemailer') as typeof nodemailer;
  const transport = createTransport({
    url: smtpUrl,
    pool: true,
    maxConnections: MAIL_CONNECTIONS,
    maxMessages: 100,
    connectionTimeout: 10_000,
    greetingTimeout: 10_000,
    socketTimeout: 20_000,
  });
  const address = fromAddress(from);
  return {
    async send({ to, subject, text, html, fromName, language }) {
      const name = fromName === undefined ? '' : headerText(fromName, MAX_DISPLAY_NAME);
      await transport.sendMail({
        from: name ? { name, address } : from,
        to,
        subject: headerText(subject),
        text,
        ...(html === undefined ? {} : { html }),
        ...(language === undefined ? {} : { headers: { 'Content-Language': headerText(language, 35) } }),
      });
    },
    close() {
      transport.close();
    },
  };
}
