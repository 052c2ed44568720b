/**
 * Issue 43 (the third security review): one regression test per finding of items 2 and 5 that
 * this file's commits fixed, each named after what broke. docs/security.md ("Third review") cites
 * them. The embedded-database ones run in every pass (they make their own DATA_DIR).
 */
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { createWriteStream, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { request, type IncomingMessage } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildAdminApp } from '../../src/admin/app.js';
import { buildApp } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';
import { BackupError, streamBackup } from '../../src/db/backup.js';
import { sql } from '../../src/db/executor.js';
import { migrate } from '../../src/db/migrate.js';
import { openDatabase } from '../../src/db/open.js';
import { PgliteExecutor } from '../../src/db/pglite.js';
import { loadDataset } from '../../src/domain/dataset.js';
import { createDemo } from '../../src/domain/demo.js';
import { startServer, type RunningServer } from '../../src/server.js';
import { KEYS, NOW, readDataset } from '../fixtures/dataset.js';
import { runCli } from '../helpers/cli.js';
import { createTestDatabase, TEST_REDIS_URL, type TestDatabase } from '../helpers/db.js';

const TOKEN = 'review3-operator-token-0123456789abcdef';
const EMBEDDED = { DATABASE_URL: '', LOG_LEVEL: 'silent', COMMENTS_RELEASE_DELAY_HOURS: '0' };

/** POST /admin/v1/backup over the operator socket; resolves with the answer's head, its body unread. */
function startBackup(socketPath: string): Promise<{ res: IncomingMessage; abort: () => void }> {
  return new Promise((resolve, reject) => {
    const req = request({ socketPath, method: 'POST', path: '/admin/v1/backup', headers: { authorization: `Bearer ${TOKEN}` } }, (res) => {
      resolve({ res, abort: () => req.destroy() });
    });
    req.on('error', reject);
    req.end();
  });
}

/** Leftovers of a backup in this process's temporary directory (what the old copy aside left). */
const leftovers = () => readdirSync(tmpdir()).filter((n) => n.startsWith(`climate-pulse-backup-${process.pid}-`));

describe('finding 2: a backup of the embedded database never stalls the server', () => {
  const root = mkdtempSync(join(tmpdir(), 'cp-review3-backup-'));
  const dataDir = join(root, 'data');
  let server: RunningServer;
  let key: string;

  const timed = async (path: string, init: RequestInit = {}) => {
    const t0 = performance.now();
    const res = await fetch(`${server.address}${path}`, { ...init, headers: { authorization: `Bearer ${key}`, ...init.headers } });
    const body = await res.text();
    return { status: res.status, body, ms: performance.now() - t0 };
  };

  beforeAll(async () => {
    const db = await openDatabase(loadConfig({ ...EMBEDDED, DATA_DIR: dataDir }));
    try {
      await migrate(db);
      ({ key } = await createDemo(db, new Date()));
    } finally {
      await db.close();
    }
    // Large enough that streaming it takes a while: 48 MiB that gzip cannot shrink, in the database's directory.
    writeFileSync(join(dataDir, 'base', 'ballast'), randomBytes(48 << 20), { mode: 0o600 });
    server = await startServer(
      loadConfig({
        ...EMBEDDED, PORT: '0', HOST: '127.0.0.1', MAX_EVENT_LOOP_DELAY_MS: '0', ALERTS_INTERVAL_MINUTES: '0', WEBHOOK_POLL_MS: '60000',
        DATA_DIR: dataDir, ADMIN_TOKEN: TOKEN,
      }),
    );
  }, 180_000);

  afterAll(async () => {
    await server?.close();
    rmSync(root, { recursive: true, force: true });
  });

  it('serves /healthz, reads and writes at once while a backup streams, and the write made meanwhile is in the restore', async () => {
    const { res } = await startBackup(server.adminSocket!);
    expect(res.statusCode).toBe(200);
    // The reader takes one chunk and stops: the backup is under way, and stays so.
    res.pause();
    await once(res, 'readable');
    const health = await timed('/healthz');
    const teams = await timed('/v1/teams');
    const write = await timed('/v1/actions', {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'idempotency-key': 'during-the-backup' },
      body: JSON.stringify({ title: 'written during the backup' }),
    });
    expect([health.status, teams.status, write.status]).toEqual([200, 200, 200]);
    // Nothing waited for the archive (the old copy held the event loop 3 s and the database longer).
    expect(Math.max(health.ms, teams.ms, write.ms)).toBeLessThan(3_000);
    expect(leftovers()).toEqual([]);
    const file = join(root, 'during.tar.gz');
    await pipeline(res, createWriteStream(file));
    expect(statSync(file).size).toBeGreaterThan(48 << 20);

    const restored = join(root, 'restored');
    const r = await runCli(['restore', file], { ...EMBEDDED, DATA_DIR: restored });
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const db = await openDatabase(loadConfig({ ...EMBEDDED, DATA_DIR: restored }));
    try {
      const rows = await db.query<{ title: string }>(sql('t.during', `SELECT title FROM actions WHERE title = 'written during the backup'`));
      expect(rows).toEqual([{ title: 'written during the backup' }]);
    } finally {
      await db.close();
    }
  }, 240_000);

  it('a reader that goes midway leaves nothing behind, and the next backup is whole', async () => {
    const first = await startBackup(server.adminSocket!);
    first.res.pause();
    await once(first.res, 'readable');
    const closed = new Promise((r) => first.res.on('close', r));
    first.res.on('error', () => {}); // 'aborted': this reader is the one that goes
    first.abort();
    await closed;
    expect(leftovers()).toEqual([]);
    const next = await startBackup(server.adminSocket!);
    expect(next.res.statusCode).toBe(200);
    let bytes = 0;
    await pipeline(
      next.res,
      new Writable({
        write(chunk: Buffer, _e, cb) {
          bytes += chunk.length;
          cb();
        },
      }),
    );
    expect(bytes).toBeGreaterThan(48 << 20);
    expect(leftovers()).toEqual([]);
  }, 120_000);
});

describe('finding 2: a backup whose reader never reads is ended, and keeps no later one waiting', () => {
  const root = mkdtempSync(join(tmpdir(), 'cp-review3-stall-'));
  let db: PgliteExecutor;
  beforeAll(async () => {
    db = await PgliteExecutor.open(join(root, 'data'));
    await migrate(db);
  }, 120_000);
  afterAll(async () => {
    await db?.close();
    rmSync(root, { recursive: true, force: true });
  });

  it('ends after the stall bound with a BackupError, and a backup after it completes', async () => {
    const query = async <T,>(text: string) => (await db.db.query<T>(text)).rows;
    const never = new Writable({ highWaterMark: 1024, write: () => {} }); // takes one chunk, never the next
    const err = await streamBackup(join(root, 'data'), query, never, { stallMs: 300 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(BackupError);
    expect((err as Error).message).toBe("the backup's reader took nothing for 300 ms; the backup was ended");
    let bytes = 0;
    await streamBackup(join(root, 'data'), query, new Writable({ write: (c: Buffer, _e, cb) => ((bytes += c.length), cb()) }), { stallMs: 300 });
    expect(bytes).toBeGreaterThan(1000);
  }, 60_000);
});

describe('finding 5: a lone UTF-16 surrogate in a JSON body is 400 naming the field, never a 500, and never logged', () => {
  let tdb: TestDatabase;
  let app: Awaited<ReturnType<typeof buildApp>>;
  let admin: Awaited<ReturnType<typeof buildAdminApp>>;
  const lines: string[] = [];
  const MARK = 'client-text-marker';

  beforeAll(async () => {
    tdb = await createTestDatabase();
    await loadDataset(tdb.db, readDataset());
    const stream = new Writable({ write: (chunk, _e, cb) => (lines.push(chunk.toString()), cb()) });
    const config = loadConfig({ MAX_EVENT_LOOP_DELAY_MS: '0', ...(TEST_REDIS_URL ? { REDIS_URL: TEST_REDIS_URL } : {}) });
    app = await buildApp(config, { db: tdb.db, logger: { level: 'debug', stream } as never, now: () => NOW, rateLimitNamespace: `review3-${Math.random()}:` });
    admin = await buildAdminApp(config, { db: tdb.db, token: TOKEN, logger: { level: 'debug', stream } as never });
  }, 60_000);
  afterAll(async () => {
    await app?.close();
    await admin?.close();
    await tdb?.close();
  });

  // The JSON text as a client sends it: a backslash escape of a surrogate with no pair.
  const lone = (text: string) => `${MARK}-${text}\\ud800`;
  const cases: { name: string; face: 'public' | 'admin'; url: string; body: string; field: string }[] = [
    { name: 'POST /v1/teams', face: 'public', url: '/v1/teams', body: `{"name":"${lone('team')}"}`, field: 'name' },
    { name: 'operator key creation', face: 'admin', url: '/admin/v1/organizations/org_acme/keys', body: `{"name":"${lone('key')}","scope":"read"}`, field: 'name' },
    { name: 'an invitation', face: 'admin', url: '/admin/v1/organizations/org_acme/invitations', body: `{"email":"${lone('a')}@example.com","role":"viewer"}`, field: 'email' },
    { name: 'a nested value (pulse ingestion)', face: 'admin', url: '/admin/v1/organizations/org_acme/pulses', body: `{"pulses":[{"comment":"${lone('c')}"}]}`, field: 'pulses[0].comment' },
    { name: 'an action', face: 'public', url: '/v1/actions', body: `{"title":"ok","description":"${lone('d')}"}`, field: 'description' },
  ];
  it.each(cases)('$name: 400 invalid_request naming $field', async ({ face, url, body, field }) => {
    const res = await (face === 'public' ? app : admin).inject({
      method: 'POST',
      url,
      headers: { authorization: `Bearer ${face === 'public' ? KEYS.acme : TOKEN}`, 'content-type': 'application/json', 'idempotency-key': `review3-${field}` },
      payload: body,
    });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({ error: { code: 'invalid_request', message: `Body field '${field}' must be Unicode text (it holds a lone UTF-16 surrogate).` } });
  });

  it('a field name with a lone surrogate: 400, and the name is not repeated', async () => {
    const res = await app.inject({
      method: 'POST',
      url: '/v1/teams',
      headers: { authorization: `Bearer ${KEYS.acme}`, 'content-type': 'application/json', 'idempotency-key': 'review3-keyname' },
      payload: `{"name":"ok","${lone('k')}":1}`,
    });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({ error: { code: 'invalid_request', message: 'The body field has a field name that is not Unicode text (a lone UTF-16 surrogate).' } });
  });

  it('a paired surrogate (an emoji written as two escapes) is text, and is stored', async () => {
    const res = await app.inject({
      method: 'POST',
      url: '/v1/teams',
      headers: { authorization: `Bearer ${KEYS.acme}`, 'content-type': 'application/json', 'idempotency-key': 'review3-emoji' },
      payload: '{"name":"Team \\ud83c\\udf0d"}',
    });
    expect(res.statusCode).toBe(200);
    expect(res.json().name).toBe('Team \u{1F30D}');
  });

  it('no log line carries the client\'s text', () => {
    expect(lines.length).toBeGreaterThan(0);
    expect(lines.filter((l) => l.includes(MARK))).toEqual([]);
    expect(lines.filter((l) => /"level":50/.test(l))).toEqual([]);
  });
});
