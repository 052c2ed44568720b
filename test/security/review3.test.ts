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
import { loadConfig } from '../../src/config.js';
import { BackupError, streamBackup } from '../../src/db/backup.js';
import { sql } from '../../src/db/executor.js';
import { migrate } from '../../src/db/migrate.js';
import { openDatabase } from '../../src/db/open.js';
import { PgliteExecutor } from '../../src/db/pglite.js';
import { createDemo } from '../../src/domain/demo.js';
import { startServer, type RunningServer } from '../../src/server.js';
import { runCli } from '../helpers/cli.js';

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
