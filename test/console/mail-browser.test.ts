import { createServer, type AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { acceptInvitation, BROWSER_MISSING, joinConsole, launchConsoleBrowser, type ConsoleBrowser } from '../helpers/browser.js';

/**
 * Issue 41, finding 5: invitations prove the address. With SMTP_URL and MAIL_FROM an invitation
 * made in the console goes by email through a real SMTP server (smtp-server, started here) and
 * its link is shown to nobody; Chromium opens the link from the received message and sets a
 * password.
 */
interface Received {
  from: string;
  to: string[];
  raw: string;
}

/** A message body as sent (quoted-printable soft breaks and escapes undone). */
const decoded = (raw: string) => raw.replace(/=\r?\n/g, '').replace(/=([0-9A-F]{2})/g, (_, h: string) => String.fromCharCode(parseInt(h, 16)));

const freePort = () =>
  new Promise<number>((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address() as AddressInfo;
      s.close(() => resolve(port));
    });
  });

describe.skipIf(BROWSER_MISSING)('invitations by email (SMTP)', () => {
  let t: TestApp;
  let base: string;
  let cb: ConsoleBrowser;
  let smtp: SMTPServer;
  const inbox: Received[] = [];

  beforeAll(async () => {
    smtp = new SMTPServer({
      authOptional: true,
      disabledCommands: ['STARTTLS', 'AUTH'],
      onData(stream, session, callback) {
        const chunks: Buffer[] = [];
        stream.on('data', (c: Buffer) => chunks.push(c));
        stream.on('end', () => {
          inbox.push({
            from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
            to: session.envelope.rcptTo.map((r) => r.address),
            raw: Buffer.concat(chunks).toString('utf8'),
          });
          callback();
        });
      },
    });
    await new Promise<void>((resolve) => smtp.listen(0, '127.0.0.1', () => resolve()));
    const smtpPort = (smtp.server.address() as AddressInfo).port;
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    t = await createTestApp({
      dataset: { organizations: [{ id: 'org_mail', name: 'Mail & Co', plan: 'business', createdAt: '2026-01-01T00:00:00.000Z' }] },
      env: { SMTP_URL: `smtp://127.0.0.1:${smtpPort}`, MAIL_FROM: 'Climate Pulse <console@mail.example.test>', PUBLIC_BASE_URL: base },
    });
    await t.app.listen({ host: '127.0.0.1', port });
    cb = await launchConsoleBrowser();
  }, 60_000);

  afterAll(async () => {
    await cb?.close();
    await t?.close();
    await new Promise<void>((resolve) => (smtp ? smtp.close(() => resolve()) : resolve()));
  }, 120_000);

  it('the invitation arrives by email, the page shows no link, and the link from the message lets the person set a password', async () => {
    const { page } = await joinConsole(cb, base, t.db, 'org_mail', { email: 'owner@mail.example.test', role: 'owner' });
    await page.goto(`${base}/console/members`);
    await page.getByLabel(/^email$/i).fill('hr.lead@mail.example.test');
    await page.getByLabel(/^role$/i).selectOption('admin');
    await page.getByRole('button', { name: /^invite$/i }).click();
    await page.getByText('Invitation sent by email to hr.lead@mail.example.test (admin).').waitFor();
    await cb.audit(page, 'members after an emailed invitation');
    expect(await page.content()).not.toContain('/console/invitations/');

    expect(inbox).toHaveLength(1);
    expect(inbox[0].from).toBe('console@mail.example.test');
    expect(inbox[0].to).toEqual(['hr.lead@mail.example.test']);
    const body = decoded(inbox[0].raw);
    expect(body).toMatch(/^Subject: Your invitation to Mail & Co on Climate Pulse$/m);
    const link = new RegExp(`${base.replace(/[.]/g, '\\.')}/console/invitations/[A-Za-z0-9_-]{32}`).exec(body)?.[0];
    expect(link, body).toBeDefined();

    const other = await (await cb.context()).newPage();
    await acceptInvitation(other, link!);
    expect(await other.locator('.who').textContent()).toBe('hr.lead@mail.example.test');
    expect(cb.violations).toEqual([]);
    expect(cb.leaving).toEqual([]);
  }, 120_000);
});
