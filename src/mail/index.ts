import nodemailer from 'nodemailer';

/**
 * Mail from the service (CONTRACT.md section 11, "invitations prove the address"): through the
 * deployment's relay, SMTP_URL (smtp:// or smtps://, credentials in the URL), from MAIL_FROM.
 */
export interface Mailer {
  send(message: { to: string; subject: string; text: string }): Promise<void>;
  /** Closes the pooled connections (at shutdown). */
  close(): void;
}

/** How many mails one process has in flight at once, each over a connection of its pool. */
export const MAIL_CONNECTIONS = 4;

/**
 * A pooled transport: a round of check-ins mails every respondent at once, and one new SMTP
 * connection per mail (TCP, greeting, EHLO, and TLS for smtps) held a process to about 15 mails a
 * second (the check-in bench, issue 45). The pool keeps up to MAIL_CONNECTIONS connections open
 * and sends up to 100 mails over each before opening a new one. A relay that stalls must not hold
 * a console request for minutes: hence the timeouts.
 */
export function smtpMailer(smtpUrl: string, from: string): Mailer {
  const transport = nodemailer.createTransport({
    url: smtpUrl,
    pool: true,
    maxConnections: MAIL_CONNECTIONS,
    maxMessages: 100,
    connectionTimeout: 10_000,
    greetingTimeout: 10_000,
    socketTimeout: 20_000,
  });
  return {
    async send({ to, subject, text }) {
      await transport.sendMail({ from, to, subject, text });
    },
    close() {
      transport.close();
    },
  };
}
