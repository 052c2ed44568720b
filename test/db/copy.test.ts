import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import pg from 'pg';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildAdminApp } from '../../src/admin/app.js';
import { buildApp } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';
import { copyDatabase, tablesHoldingData } from '../../src/db/copy.js';
import { sql, type DatabaseExecutor } from '../../src/db/executor.js';
import { migrate } from '../../src/db/migrate.js';
import { openDatabase } from '../../src/db/open.js';
import { PgExecutor } from '../../src/db/pg.js';
import { createDemo } from '../../src/domain/demo.js';
import { WebhookWorker } from '../../src/jobs/webhooks.js';
import { runCliInProcess } from '../helpers/cli.js';
import { TEST_CITUS_URL } from '../helpers/db.js';
import { startReceiver, waitFor, type Receiver } from '../helpers/receiver.js';

/**
 * `climate-pulse db copy --to URL` (issue 29, "Moving up"): an embedded database holding the demo
 * organization, comments released and frozen, a late pool released and one pending, a moderated
 * released comment, an idempotent POST and a pending webhook delivery, copied to PostgreSQL (and,
 * with TEST_CITUS_URL, to Citus, distributed afterwards): every public answer is the same byte
 * for byte, and keys, replays and webhooks go on working.
 */
const PG_URL = process.env.TEST_DATABASE_URL || undefined;
const DAY = 86_400_000;
const NOW = new Date('2026-11-26T10:00:00.000Z');
const ENV = { LOG_LEVEL: 'silent', MAX_EVENT_LOOP_DELAY_MS: '0', COMMENTS_RELEASE_DELAY_HOURS: '0', WEBHOOK_ALLOW_PRIVATE: 'true' };
const TEAMS = ['team_engineering', 'team_support', 'team_sales', 'team_design', 'team_people'];
const ymd = (t: number) => new Date(t).toISOString().slice(0, 10);

/** A fresh, empty schema on `base` (not migrated: db copy migrates it), reached through search_path. */
async function emptySchema(base: string): Promise<{ url: string; drop(): Promise<void> }> {
  const schema = `copy_${randomBytes(6).toString('hex')}`;
  const c = new pg.Client({ connectionString: base });
  await c.connect();
  await c.query(`CREATE SCHEMA ${schema}`);
  await c.end();
  const url = new URL(base);
  url.searchParams.set('options', `-c search_path=${schema}`);
  return {
    url: url.toString(),
    async drop() {
      const d = new pg.Client({ connectionString: base });
      await d.connect();
      await d.query(`DROP SCHEMA ${schema} CASCADE`);
      await d.end();
    },
  };
}

interface Served {
  app: FastifyInstance;
  close(): Promise<void>;
}

async function serve(db: DatabaseExecutor): Promise<Served> {
  const app = await buildApp(loadConfig(ENV), { db, now: () => new Date(NOW) });
  return { app, close: () => app.close() };
}

/** A comments page with its (freshly encrypted) nextCursor shown as <cursor>. */
const withoutCursor = (body: string) => body.replace(/"nextCursor":"[^"]+"/, '"nextCursor":"<cursor>"');

type Answer = { url: string; status: number; body: string };

/**
 * Every public GET, following cursors. A comments cursor is encrypted with a fresh nonce each time
 * (the same request twice gives two cursors), so it is shown as <cursor> and followed as it is.
 */
async function answerAll(app: FastifyInstance, key: string): Promise<Answer[]> {
  const out: Answer[] = [];
  const get = async (url: string) => {
    const res = await app.inject({ method: 'GET', url, headers: { authorization: `Bearer ${key}` } });
    return res;
  };
  const follow = async (base: string, pages: number, opaque: boolean) => {
    let url = base;
    for (let i = 0; i < pages; i++) {
      const res = await get(url);
      const body = res.json() as { nextCursor?: string | null };
      out.push({
        url: opaque && i > 0 ? `${base} (page ${i + 1})` : url,
        status: res.statusCode,
        body: opaque && body.nextCursor ? res.body.replace(body.nextCursor, '<cursor>') : res.body,
      });
      if (!body.nextCursor) break;
      url = `${base}${base.includes('?') ? '&' : '?'}cursor=${encodeURIComponent(body.nextCursor)}`;
    }
  };
  await follow('/v1/pulses?limit=100', 4, false);
  await follow(`/v1/pulses?limit=50&subteamId=team_support&from=${new Date(NOW.getTime() - 40 * DAY).toISOString()}`, 3, false);
  for (const url of [
    '/v1/stats',
    '/api/v1/stats',
    '/v1/stats/daily',
    `/v1/stats/daily?from=${new Date(NOW.getTime() - 119 * DAY).toISOString()}`,
    '/v1/alerts',
    '/v1/alerts?limit=50',
    '/v1/actions',
    '/v1/teams',
  ]) {
    const res = await get(url);
    out.push({ url, status: res.statusCode, body: res.body });
  }
  const whole = `from=${ymd(NOW.getTime() - 119 * DAY)}&to=${ymd(NOW.getTime())}`;
  await follow('/v1/comments', 5, true);
  await follow(`/v1/comments?${whole}&limit=100`, 20, true);
  await follow(`/v1/comments?from=${ymd(NOW.getTime() - 40 * DAY)}&to=${ymd(NOW.getTime() - 20 * DAY)}&limit=7`, 20, true);
  for (const team of TEAMS) await follow(`/v1/comments?${whole}&subteamId=${team}&limit=50`, 20, true);
  await follow(`/v1/comments?${whole}&subteamId=team_unknown`, 1, true);
  return out;
}

const PULSE = (id: string, at: number, team: string, comment: string) => ({
  id,
  level: 2 + (at % 3),
  reason: 'workload',
  comment,
  moderationStatus: 'CLEAN',
  subteamId: team,
  createdAt: new Date(at).toISOString(),
});

const targets = [
  { name: 'PostgreSQL', base: TEST_CITUS_URL ? undefined : PG_URL, citus: false },
  { name: 'Citus (distributed after the copy)', base: TEST_CITUS_URL, citus: true },
];

for (const target of targets) {
  describe.skipIf(!target.base)(
    `db copy from the embedded database to ${target.name}${target.base ? '' : ' (skipped: set TEST_DATABASE_URL, or TEST_CITUS_URL for Citus)'}`,
    () => {
      let dataDir: string;
      let empty: { url: string; drop(): Promise<void> };
      let rx: Receiver;
      let key: string;
      let orgId: string;
      let before: Answer[];
      let replay: { idem: string; body: unknown; status: number };
      let secret: string;
      let sourceCursor: { url: string; page2: string };
      let copied = '';

      beforeAll(async () => {
        dataDir = mkdtempSync(join(tmpdir(), 'cp-copy-'));
        empty = await emptySchema(target.base!);
        rx = await startReceiver();
        const config = loadConfig({ ...ENV, DATA_DIR: dataDir, DATABASE_URL: '' });
        const db = await openDatabase(config);
        try {
          await migrate(db);
          ({ orgId, key } = await createDemo(db, NOW));
          const { app, close } = await serve(db);
          const admin = await buildAdminApp(loadConfig(ENV), { db, now: () => new Date(NOW) });
          try {
            // Every released week is frozen by the first answer that covers it.
            const whole = `from=${ymd(NOW.getTime() - 119 * DAY)}&to=${ymd(NOW.getTime())}`;
            expect((await app.inject({ url: `/v1/comments?${whole}`, headers: { authorization: `Bearer ${key}` } })).statusCode).toBe(200);
            // Late pulses into a frozen week: six make a late pool that the next answer releases, two more stay pending.
            const monday = Date.UTC(2026, 9, 26, 9); // 2026-10-26, a released week
            const late = (n: number, from: number) =>
              Array.from({ length: n }, (_, i) => PULSE(`p_late_${from + i}`, monday + (from + i) * 3_600_000, 'team_design', `late comment ${from + i}`));
            let r = await admin.inject({ method: 'POST', url: `/admin/v1/organizations/${orgId}/pulses`, payload: { pulses: late(6, 0) } });
            expect(r.json()).toMatchObject({ inserted: 6, inFrozenWeeks: 6 });
            expect((await app.inject({ url: `/v1/comments?${whole}`, headers: { authorization: `Bearer ${key}` } })).statusCode).toBe(200);
            r = await admin.inject({ method: 'POST', url: `/admin/v1/organizations/${orgId}/pulses`, payload: { pulses: late(2, 6) } });
            expect(r.json()).toMatchObject({ inserted: 2, inFrozenWeeks: 2 });
            // A released comment's pulse moderated: that comment leaves every answer.
            r = await admin.inject({ method: 'PATCH', url: `/admin/v1/organizations/${orgId}/pulses/p_late_0`, payload: { moderationStatus: 'FLAGGED' } });
            expect(r.statusCode).toBe(200);
            // An idempotent POST, replayed after the move.
            const idem = 'copy-replay-1';
            r = await app.inject({
              method: 'POST',
              url: '/v1/actions',
              payload: { title: 'Before the move', subteamId: 'team_support' },
              headers: { authorization: `Bearer ${key}`, 'idempotency-key': idem },
            });
            expect(r.statusCode).toBe(200);
            replay = { idem, body: r.json(), status: r.statusCode };
            // A webhook endpoint, and a delivery still pending when the source stops.
            r = await admin.inject({
              method: 'POST',
              url: `/admin/v1/organizations/${orgId}/webhook-endpoints`,
              payload: { url: `${rx.url}/hook`, eventTypes: ['action.created'] },
            });
            expect(r.statusCode).toBe(201);
            secret = r.json().secret as string;
            r = await app.inject({
              method: 'POST',
              url: '/v1/actions',
              payload: { title: 'Pending delivery' },
              headers: { authorization: `Bearer ${key}`, 'idempotency-key': 'copy-pending-hook' },
            });
            expect(r.statusCode).toBe(200);
            before = await answerAll(app, key);
            // A comments cursor made by the source, to be followed on the target.
            const url = `/v1/comments?${whole}&limit=5`;
            const first = (await app.inject({ url, headers: { authorization: `Bearer ${key}` } })).json() as { nextCursor: string };
            const page2 = await app.inject({ url: `${url}&cursor=${encodeURIComponent(first.nextCursor)}`, headers: { authorization: `Bearer ${key}` } });
            sourceCursor = { url: `${url}&cursor=${encodeURIComponent(first.nextCursor)}`, page2: withoutCursor(page2.body) };
          } finally {
            await admin.close();
            await close();
          }
        } finally {
          await db.close();
        }
      }, 120_000);

      afterAll(async () => {
        await rx?.close();
        await empty?.drop().catch(() => {});
        if (dataDir) rmSync(dataDir, { recursive: true, force: true });
      });

      it('the source answers what the test expects: frozen and late cells, a pending late pool, comments over several pages', () => {
        const comments = before.filter((a) => a.url.startsWith('/v1/comments'));
        expect(comments.length).toBeGreaterThan(10);
        expect(comments.every((a) => a.status === 200)).toBe(true);
        const all = comments.map((a) => a.body).join('\n');
        expect(all).toContain('late comment 1');
        expect(all).not.toContain('late comment 0'); // moderated after its release
        expect(all).not.toContain('late comment 6'); // its late pool holds 2: not released
        expect(before.filter((a) => a.status !== 200).map((a) => `${a.url}: ${a.status} ${a.body}`)).toEqual([]);
      });

      it('copies every table, prints rows and checksums per table, and every public answer is the same byte for byte', async () => {
        const res = await runCliInProcess(['db', 'copy', '--to', empty.url], { DATA_DIR: dataDir, DATABASE_URL: '' });
        expect(res.stderr).toBe('');
        expect(res.code).toBe(0);
        const lines = res.stdout.trim().split('\n');
        expect(lines[0]).toMatch(/^TABLE\s+ROWS\s+CHECKSUM$/);
        expect(lines.some((l) => /^pulses\s+\d{4,}\s+[0-9a-f]{16}$/.test(l))).toBe(true);
        expect(lines.some((l) => /^service_secrets\s+[1-9]\d*\s/.test(l))).toBe(true);
        expect(lines.some((l) => /^comment_release_members\s+[1-9]\d*\s/.test(l))).toBe(true);
        copied = res.stdout;
        // The summary, then the next commands, naming the copy (issue 54, item 1).
        const summary = lines.findIndex((l) => l.startsWith('copied '));
        expect(lines[summary]).toMatch(/^copied \d+ rows in \d+ tables to postgres.* rows and checksums match on both sides$/);
        expect(lines[summary + 1]).toBe('Next: serve the copy (its keys, members and organizations came with it), and name it in every command:');
        expect(lines.slice(summary + 2, -1).every((l) => l.startsWith('  DATABASE_URL='))).toBe(true);

        if (target.citus) {
          const d = await runCliInProcess(['citus', 'distribute', '--shard-count', '4'], { DATABASE_URL: empty.url, DATA_DIR: '' });
          expect(d.stderr).toBe('');
          expect(d.code).toBe(0);
        }

        const db = new PgExecutor({ connectionString: empty.url, max: 4 });
        const { app, close } = await serve(db);
        const worker = new WebhookWorker(db, { pollMs: 20, timeoutMs: 2000, retryScheduleMs: [200], allowPrivate: true });
        try {
          const after = await answerAll(app, key);
          expect(after.map((a) => a.url)).toEqual(before.map((a) => a.url));
          for (let i = 0; i < before.length; i++) expect(after[i], before[i].url).toEqual(before[i]);

          // A cursor the source made reads the same next page from the target (the cursor secret moved).
          const page2 = await app.inject({ url: sourceCursor.url, headers: { authorization: `Bearer ${key}` } });
          expect(page2.statusCode).toBe(200);
          expect(withoutCursor(page2.body)).toBe(sourceCursor.page2);

          // The idempotent POST is replayed, not made again.
          const again = await app.inject({
            method: 'POST',
            url: '/v1/actions',
            payload: { title: 'Before the move', subteamId: 'team_support' },
            headers: { authorization: `Bearer ${key}`, 'idempotency-key': replay.idem },
          });
          expect(again.statusCode).toBe(replay.status);
          expect(again.headers['idempotent-replayed']).toBe('true');
          expect(again.json()).toEqual(replay.body);

          // The delivery left pending by the source goes out, signed with the endpoint's secret; a new action too.
          worker.start();
          const fresh = await app.inject({
            method: 'POST',
            url: '/v1/actions',
            payload: { title: 'After the move' },
            headers: { authorization: `Bearer ${key}`, 'idempotency-key': 'copy-after-1' },
          });
          expect(fresh.statusCode).toBe(200);
          expect(await waitFor(() => rx.on('/hook').length >= 2)).toBe(true);
          const titles = rx
            .on('/hook')
            .map((r) => (new Webhook(secret).verify(r.body, r.headers as Record<string, string>) as { data: { title: string } }).data.title);
          expect(titles.sort()).toEqual(['After the move', 'Pending delivery']);
        } finally {
          await worker.close();
          await close();
          await db.close();
        }
      }, 180_000);

      it.skipIf(target.citus)(
        'copies from PostgreSQL too (DATABASE_URL as the source), with the same checksums',
        async () => {
          const next = await emptySchema(target.base!);
          try {
            const res = await runCliInProcess(['db', 'copy', '--to', next.url], { DATABASE_URL: empty.url, DATA_DIR: '' });
            expect(res.stderr).toBe('');
            expect(res.code).toBe(0);
            const again = await runCliInProcess(['db', 'copy', '--to', next.url], { DATABASE_URL: empty.url, DATA_DIR: '' });
            expect(again.code).toBe(1); // now it holds data
            const pulses = (out: string) => out.split('\n').find((l) => l.startsWith('pulses '));
            expect(pulses(res.stdout)).toMatch(/^pulses\s+\d{4,}\s+[0-9a-f]{16}$/);
            expect(pulses(res.stdout)).toBe(pulses(copied));
          } finally {
            await next.drop();
          }
        },
        60_000,
      );

      it('rolls everything back when a table differs after the copy, and refuses a target of other migrations', async () => {
        const other = await emptySchema(target.base!);
        const source = await openDatabase(loadConfig({ ...ENV, DATA_DIR: dataDir, DATABASE_URL: '' }));
        const dst = new PgExecutor({ connectionString: other.url, max: 2 });
        try {
          await migrate(dst);
          // A target that changes a row as it arrives: the checksum of teams tells, and nothing stays.
          await dst.exec(`CREATE FUNCTION copy_test_rename() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN NEW.name := NEW.name || '!'; RETURN NEW; END $$;
          CREATE TRIGGER copy_test_rename BEFORE INSERT ON teams FOR EACH ROW EXECUTE FUNCTION copy_test_rename()`);
          await expect(copyDatabase(source, dst)).rejects.toThrow(
            /^table teams differs after the copy \(source 5 rows, checksum [0-9a-f]{16}; target 5 rows, checksum [0-9a-f]{16}\); rolled back, nothing was copied$/,
          );
          expect(await tablesHoldingData(dst)).toEqual([]);
          await dst.exec('DROP TRIGGER copy_test_rename ON teams');
          // Another schema version: refused before anything is written.
          await dst.query(sql('test.copy.ledger', `INSERT INTO schema_migrations (version, name, checksum) VALUES (9999, '9999_later.sql', 'x')`));
          await expect(copyDatabase(source, dst)).rejects.toThrow(
            /^the target database is at migration 9999, the source at \d+: both must have the same migrations; nothing was copied$/,
          );
          expect(await tablesHoldingData(dst)).toEqual([]);
        } finally {
          await dst.close();
          await source.close();
          await other.drop();
        }
      }, 60_000);

      it('refuses a target that holds data, in one line, and leaves it unchanged', async () => {
        const count = async () => {
          const c = new pg.Client({ connectionString: empty.url });
          await c.connect();
          const r = await c.query(
            `SELECT (SELECT count(*) FROM pulses) AS pulses, (SELECT count(*) FROM actions) AS actions, (SELECT string_agg(value::text, ',' ORDER BY name) FROM service_secrets) AS secrets`,
          );
          await c.end();
          return r.rows[0];
        };
        const was = await count();
        const res = await runCliInProcess(['db', 'copy', '--to', empty.url], { DATA_DIR: dataDir, DATABASE_URL: '' });
        expect(res.code).toBe(1);
        expect(res.stdout).toBe('');
        expect(res.stderr).toMatch(
          /^climate-pulse: the target database .* already holds data \(.*\): db copy fills only a migrated, empty database; nothing was copied\n$/,
        );
        expect(res.stderr).not.toContain('unexpected');
        expect(await count()).toEqual(was);
      }, 60_000);
    },
  );
}

describe('db copy refusals that need no PostgreSQL', () => {
  const root = mkdtempSync(join(tmpdir(), 'cp-copy-refusals-'));
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  it('refuses, in one line each, a DATA_DIR without a database, a --to that is not a postgres:// URL, and a target it cannot reach', async () => {
    const missing = join(root, 'missing');
    let r = await runCliInProcess(['db', 'copy', '--to', 'postgres://nobody@127.0.0.1:1/none'], { DATA_DIR: missing, DATABASE_URL: '' });
    expect(r.stderr).toBe(`climate-pulse: there is no embedded database in ${missing} to copy (set DATA_DIR, or DATABASE_URL for a PostgreSQL source)\n`);
    expect(existsSync(missing)).toBe(false);
    r = await runCliInProcess(['db', 'copy', '--to', 'mysql://x@h/db'], { DATA_DIR: missing, DATABASE_URL: '' });
    expect(r.stderr).toBe('climate-pulse: --to must be a postgres:// URL of the target database\n');

    const dataDir = join(root, 'data');
    const db = await openDatabase(loadConfig({ ...ENV, DATA_DIR: dataDir, DATABASE_URL: '' }));
    await migrate(db);
    await db.close();
    r = await runCliInProcess(['db', 'copy', '--to', 'postgres://nobody:s3cret@127.0.0.1:1/none'], { DATA_DIR: dataDir, DATABASE_URL: '' });
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(
      /^climate-pulse: cannot use the target database postgres:\/\/nobody:\*\*\*@127\.0\.0\.1:1\/none: .*ECONNREFUSED.*; nothing was copied\n$/,
    );
    expect(r.stderr).not.toContain('s3cret');
  }, 60_000);
});
