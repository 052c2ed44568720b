import nodemailer from 'nodemailer';

/**
 * Mail from the service (CONTRACT.md section 11, "invitations prove the address"): through the
 * deployment's relay, SMTP_URL (smtp:// or smtps://, credentials in the URL), from MAIL_FROM.
 */
export interface Mailer {
  send(message: { to: string; subject: string; text: string }): Promise<void>;
}

export function smtpMailer(smtpUrl: string, from: string): Mailer {
  // A relay that stalls must not hold a console request for minutes.
  const transport = nodemailer.createTransport(
    `${smtpUrl}${smtpUrl.includes('?') ? '&' : '?'}connectionTimeout=10000&greetingTimeout=10000&socketTimeout=20000`,
  );
  return {
    async send({ to, subject, text }) {
      await transport.sendMail({ from, to, subject, text });
    },
  };
}
