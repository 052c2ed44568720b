import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCliDatabase } from '../helpers/cli.js';
import { TEST_DATABASE_URL } from '../helpers/db.js';
import { startServerProcess, type ServerProcess } from '../helpers/process.js';
import { PgExecutor } from '../../src/db/pg.js';
import { sql } from '../../src/db/executor.js';
import { operatorActor } from '../../src/domain/audit.js';
import { createOrganization } from '../../src/domain/orgs.js';
import { replaceRoster } from '../../src/domain/checkins/roster.js';
import { updateCheckinSettings } from '../../src/domain/checkins/settings.js';

/**
 * Issue 45, "one mail per respondent with N=2 server processes", and issue 51's outbox: two real
 * `climate-pulse serve` processes on one PostgreSQL database, each with its round job, run the
 * week's round through an SMTP server started here. Each process has its own MAIL_FROM, so the
 * server knows who sent what. The round starts once (the database decides), and its links' tokens
 * wait sealed by the memory of the process that started it, which alone can send them: every
 * respondent gets exactly one mail, all from one process, and the database then holds every link,
 * no waiting link and no lease. Not timed. The embedded database serves one process, so PostgreSQL
 * only.
 */
const N = 120; // more than two claims of 50 (src/domain/checkins/rounds.ts)
const ORG = 'org_two';

describe.skipIf(!TEST_DATABASE_URL)('a round sent by two server processes at once (PostgreSQL)', { timeout: 240_000 }, () => {
  let cdb: Awaited<ReturnType<typeof createCliDatabase>>;
  let smtp: SMTPServer;
  const servers: ServerProcess[] = [];
  const mails: { from: string; to: string }[] = [];

  beforeAll(async () => {
    cdb = await createCliDatabase();
    const db = new PgExecutor({ connectionString: cdb.env.DATABASE_URL, max: 2 });
    try {
      const op = operatorActor(null);
      const now = new Date();
      await createOrganization(db, { id: ORG, name: 'Two', plan: 'business' }, op, now);
      const csv = ['email,team', ...Array.from({ length: N }, (_, i) => `p${i}@two.test,Team ${1 + (i % 3)}`)].join('\n');
      expect((await replaceRoster(db, ORG, csv, op, now)).added).toBe(N);
      // Monday 00:00 UTC: the week's round is due whenever the test runs; no reminder.
      await updateCheckinSettings(db, ORG, { weekday: 1, hour: 0, timeZone: 'UTC', reminderWeekday: null }, op, now);
    } finally {
      await db.close();
    }
    smtp = new SMTPServer({
      authOptional: true,
      disabledCommands: ['STARTTLS', 'AUTH'],
      logger: false,
      onData(stream, session, callback) {
        stream.on('data', () => undefined);
        stream.on('end', () => {
          const from = session.envelope.mailFrom ? session.envelope.mailFrom.address : '';
          for (const r of session.envelope.rcptTo) mails.push({ from, to: r.address });
          callback();
        });
      },
    });
    await new Promise<void>((resolve) => smtp.listen(0, '127.0.0.1', () => resolve()));
  }, 120_000);

  afterAll(async () => {
    for (const s of servers) await s.stop();
    await new Promise<void>((resolve) => (smtp ? smtp.close(() => resolve()) : resolve()));
    await cdb?.close();
  });

  it('every respondent gets exactly one mail, from the process whose memory sealed the links', async () => {
    const smtpUrl = `smtp://127.0.0.1:${(smtp.server.address() as AddressInfo).port}`;
    const env = (p: number) => ({ ...cdb.env, SMTP_URL: smtpUrl, MAIL_FROM: `p${p}@sender.test`, ALERTS_INTERVAL_MINUTES: '0' });
    servers.push(...(await Promise.all([startServerProcess(env(1)), startServerProcess(env(2))])));
    // Each process's first run falls within 10 s of its start, the next a minute later.
    for (const until = Date.now() + 120_000; new Set(mails.map((m) => m.to)).size < N && Date.now() < until; ) await new Promise((r) => setTimeout(r, 200));
    await new Promise((r) => setTimeout(r, 2_000)); // a duplicate sent late would arrive here
    const perRecipient = new Map<string, number>();
    for (const m of mails) perRecipient.set(m.to, (perRecipient.get(m.to) ?? 0) + 1);
    expect(perRecipient.size).toBe(N);
    expect([...perRecipient].filter(([, n]) => n !== 1)).toEqual([]);
    expect(mails).toHaveLength(N);
    const p1 = mails.filter((m) => m.from === 'p1@sender.test').length;
    const p2 = mails.filter((m) => m.from === 'p2@sender.test').length;
    expect(p1 + p2).toBe(N);
    expect(Math.max(p1, p2), `split ${p1} + ${p2}`).toBe(N);

    const db = new PgExecutor({ connectionString: cdb.env.DATABASE_URL, max: 1 });
    try {
      const [row] = await db.query<{ waiting: number; leased: number; links: number }>(
        sql(
          't.two',
          `SELECT (SELECT count(*) FROM checkin_round_links WHERE org_id = $1)::int AS links,
                  (SELECT count(*) FROM checkin_outbox WHERE org_id = $1)::int AS waiting,
                  (SELECT count(*) FROM checkin_outbox WHERE org_id = $1 AND lease_until IS NOT NULL)::int AS leased`,
        ),
        [ORG],
      );
      expect(row).toEqual({ links: N, waiting: 0, leased: 0 });
    } finally {
      await db.close();
    }
    // Neither process logged a failed run (the log says how many mails went, never to whom).
    for (const s of servers) expect(s.output()).not.toContain('check-in round run failed');
  });
});
