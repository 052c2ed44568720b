import { createHash } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readDataset } from '../fixtures/dataset.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { ConsoleClient } from '../helpers/console-client.js';
import { sql } from '../../src/db/executor.js';

/**
 * The fourth review's M3 and M4 (issue 52), closed by issue 51's links that name no one. M5 (a
 * team shrunk after the mails) is test/checkin/name-no-one.test.ts's "a team shrunk after the
 * mails keeps its week".
 * - M3: with mail on, a crafted POST /console/people/links returned the unopened links, and voided
 *   every mailed link not yet opened. Now it is refused, makes no link and voids none.
 * - M4: two downloads of the links file showed who opened their link in between (the second held
 *   only the unopened). Now a second file is made only when asked, for everyone of the round.
 */
describe('review 4, M3 and M4: the links file', () => {
  const csvOf = (page: string) => ConsoleClient.token(page);
  const q = (t: TestApp, text: string) =>
    t.db.query<{ n: number }>(sql(`t.r4c.${createHash('sha256').update(text).digest('hex').slice(0, 12)}`, text), ['org_acme']);

  describe('with mail on', () => {
    let t: TestApp;
    let smtp: SMTPServer;
    const received: string[] = [];
    let admin: ConsoleClient;
    beforeAll(async () => {
      smtp = new SMTPServer({
        authOptional: true,
        disabledCommands: ['STARTTLS', 'AUTH'],
        logger: false,
        onData(stream, session, callback) {
          stream.on('data', () => undefined);
          stream.on('end', () => {
            received.push(...session.envelope.rcptTo.map((r) => r.address));
            callback();
          });
        },
      });
      await new Promise<void>((resolve) => smtp.listen(0, '127.0.0.1', () => resolve()));
      const port = (smtp.server.address() as AddressInfo).port;
      t = await createTestApp({ dataset: readDataset(), env: { SMTP_URL: `smtp://127.0.0.1:${port}`, MAIL_FROM: 'Pulse <pulse@acme.test>' } });
      admin = await ConsoleClient.join(t.app, t.db, 'org_acme', 'hr@acme.test', 'admin');
      const csv = ['email,team', ...[1, 2, 3, 4, 5].map((i) => `w${i}@acme.test,Web`)].join('\n');
      await admin.submit('/console/people', '/console/people/replace', { csv });
    });
    afterAll(async () => {
      await t?.close();
      await new Promise<void>((resolve) => (smtp ? smtp.close(() => resolve()) : resolve()));
    });

    it('M3: a crafted links request is refused, makes no link, voids none and mails nothing', async () => {
      const page = await admin.get('/console/checkins');
      expect(page.statusCode).toBe(200);
      expect(page.body).not.toContain('action="/console/checkins/links"');
      const crafted = await admin.postOnly('/console/people/links', { _csrf: csvOf(page.body) });
      expect(crafted.statusCode).toBe(409);
      expect(crafted.headers['content-type']).toBe('text/html; charset=utf-8');
      expect(crafted.body).toContain(
        'This server mails the check-in links (SMTP_URL is set), so it makes no links file: a file would let whoever holds it answer in the place of others.',
      );
      expect(crafted.body).not.toMatch(/\/checkin\/o\/org_acme#/);
      const renew = await admin.postOnly('/console/people/links', { _csrf: csvOf(page.body), renew: '1' });
      expect(renew.statusCode).toBe(409);
      expect((await q(t, `SELECT count(*)::int AS n FROM checkin_round_links WHERE org_id = $1`))[0]!.n).toBe(0);
      expect((await q(t, `SELECT count(*)::int AS n FROM audit_events WHERE org_id = $1 AND action = 'checkin_links.exported'`))[0]!.n).toBe(0);
      expect(received).toEqual([]);
    });
  });

  describe('without mail', () => {
    let t: TestApp;
    let admin: ConsoleClient;
    beforeAll(async () => {
      t = await createTestApp({ dataset: readDataset() });
      admin = await ConsoleClient.join(t.app, t.db, 'org_acme', 'hr@acme.test', 'admin');
      const csv = ['email,team', ...[1, 2, 3, 4, 5, 6].map((i) => `w${i}@acme.test,Web`)].join('\n');
      await admin.submit('/console/people', '/console/people/replace', { csv });
    });
    afterAll(async () => t?.close());

    it('M4: a second file does not show who opened: refused until asked, then a new link for everyone, the earlier ones still working', async () => {
      const page = await admin.get('/console/checkins');
      const first = await admin.postOnly('/console/checkins/links', { _csrf: csvOf(page.body) });
      expect(first.statusCode).toBe(200);
      const rows = first.body.trim().split('\r\n').slice(1);
      expect(rows).toHaveLength(6);
      // w2 opens theirs.
      const w2 = rows.find((r) => r.startsWith('w2@'))!.split('#')[1]!;
      expect((await t.app.inject({ method: 'POST', url: '/checkin/o/org_acme/open', payload: { token: w2 } })).statusCode).toBe(200);
      const again = await admin.get('/console/checkins');
      expect(again.body).toContain('This week&#39;s links were handed out already, and the service keeps no copy of them.');
      expect(again.body).toContain('Make new links for everyone (CSV)');
      const second = await admin.postOnly('/console/checkins/links', { _csrf: csvOf(again.body) });
      expect(second.statusCode).toBe(409);
      expect(second.body).toContain('This week&#39;s links were handed out already. A new file makes a new link for each of the 6 people');
      const renewed = await admin.postOnly('/console/checkins/links', { _csrf: csvOf(again.body), renew: '1' });
      expect(renewed.statusCode).toBe(200);
      const renewedRows = renewed.body.trim().split('\r\n').slice(1);
      // Everyone, the one who opened too: the file says nothing of who opened.
      expect(renewedRows.map((r) => r.split(',')[0])).toEqual(rows.map((r) => r.split(',')[0]));
      // The first file's links still open.
      for (const r of rows) {
        expect((await t.app.inject({ method: 'POST', url: '/checkin/o/org_acme/open', payload: { token: r.split('#')[1] } })).statusCode).toBe(200);
      }
    });
  });
});
