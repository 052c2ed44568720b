/**
 * Issue 43 (the third security review): one regression test per finding of items 2 and 5 that
 * this file's commits fixed, each named after what broke. docs/security.md ("Third review") cites
 * them. The embedded-database ones run in every pass (they make their own DATA_DIR).
 */
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { chmodSync, createWriteStream, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
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
import { createAdminTest, TOKEN as ADMIN_TEST_TOKEN, type AdminTest } from '../admin/helpers.js';
import { runCliInProcess } from '../helpers/cli.js';
import { createTestDatabase, EMBEDDED_RAN, TEST_DATABASE_URL, TEST_REDIS_URL, type TestDatabase } from '../helpers/db.js';
import pg from 'pg';

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

describe.skipIf(EMBEDDED_RAN)('finding 2: a backup of the embedded database never stalls the server', () => {
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
        ...EMBEDDED,
        PORT: '0',
        HOST: '127.0.0.1',
        MAX_EVENT_LOOP_DELAY_MS: '0',
        ALERTS_INTERVAL_MINUTES: '0',
        WEBHOOK_POLL_MS: '60000',
        DATA_DIR: dataDir,
        ADMIN_TOKEN: TOKEN,
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
    const r = await runCliInProcess(['restore', file], { ...EMBEDDED, DATA_DIR: restored });
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

describe.skipIf(EMBEDDED_RAN)('finding 2: a backup whose reader never reads is ended, and keeps no later one waiting', () => {
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
    const query = async <T>(text: string) => (await db.db.query<T>(text)).rows;
    const never = new Writable({ highWaterMark: 1024, write: () => {} }); // takes one chunk, never the next
    const err = await streamBackup(join(root, 'data'), query, never, { stallMs: 300 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(BackupError);
    expect((err as Error).message).toBe("the backup's reader took nothing for 300 ms; the backup was ended");
    let bytes = 0;
    await streamBackup(
      join(root, 'data'),
      query,
      new Writable({
        write: (c: Buffer, _e, cb) => {
          bytes += c.length;
          cb();
        },
      }),
      { stallMs: 300 },
    );
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
    const stream = new Writable({
      write: (chunk, _e, cb) => {
        lines.push(chunk.toString());
        cb();
      },
    });
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
    {
      name: 'operator key creation',
      face: 'admin',
      url: '/admin/v1/organizations/org_acme/keys',
      body: `{"name":"${lone('key')}","scope":"read"}`,
      field: 'name',
    },
    {
      name: 'an invitation',
      face: 'admin',
      url: '/admin/v1/organizations/org_acme/invitations',
      body: `{"email":"${lone('a')}@example.com","role":"viewer"}`,
      field: 'email',
    },
    {
      name: 'a nested value (pulse ingestion)',
      face: 'admin',
      url: '/admin/v1/organizations/org_acme/pulses',
      body: `{"pulses":[{"comment":"${lone('c')}"}]}`,
      field: 'pulses[0].comment',
    },
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
    expect(res.json()).toEqual({
      error: { code: 'invalid_request', message: `Body field '${field}' must be Unicode text (it holds a lone UTF-16 surrogate).` },
    });
  });

  it('a field name with a lone surrogate: 400, and the name is not repeated', async () => {
    const res = await app.inject({
      method: 'POST',
      url: '/v1/teams',
      headers: { authorization: `Bearer ${KEYS.acme}`, 'content-type': 'application/json', 'idempotency-key': 'review3-keyname' },
      payload: `{"name":"ok","${lone('k')}":1}`,
    });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({
      error: { code: 'invalid_request', message: 'The body field has a field name that is not Unicode text (a lone UTF-16 surrogate).' },
    });
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

  it("no log line carries the client's text", () => {
    expect(lines.length).toBeGreaterThan(0);
    expect(lines.filter((l) => l.includes(MARK))).toEqual([]);
    expect(lines.filter((l) => /"level":50/.test(l))).toEqual([]);
  });
});

const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

describe('finding 5: restore and db copy fail in one line and leave nothing', () => {
  const root = mkdtempSync(join(tmpdir(), 'cp-review3-restore-'));
  const source = join(root, 'source');
  const good = join(root, 'good.tar.gz');
  const v16 = join(root, 'pg16.tar.gz');
  const sockets: Socket[] = [];
  const servers: Server[] = [];

  /** A TCP server on 127.0.0.1 that does `onData` with what a client sends; resolves with its port. */
  const fakeServer = async (onData: (socket: Socket) => void) => {
    const server = createServer((socket) => {
      sockets.push(socket);
      socket.on('error', () => {});
      socket.once('data', () => onData(socket));
    });
    servers.push(server);
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    return (server.address() as { port: number }).port;
  };

  beforeAll(async () => {
    const db = await openDatabase(loadConfig({ ...EMBEDDED, DATA_DIR: source }));
    try {
      await migrate(db);
    } finally {
      await db.close();
    }
    const made = await runCliInProcess(['backup', good], { ...EMBEDDED, DATA_DIR: source });
    expect(made.stderr).toBe('');
    // The same backup, as if taken by a PGlite of PostgreSQL 16: its files unpacked, PG_VERSION changed, packed again.
    const files = join(root, 'pg16');
    mkdirSync(files);
    execFileSync('tar', ['-xzf', good, '-C', files]);
    writeFileSync(join(files, 'PG_VERSION'), '16\n');
    execFileSync('tar', ['--format=ustar', '-czf', v16, '-C', files, ...readdirSync(files)]);
  }, 120_000);
  afterAll(() => {
    for (const s of sockets) s.destroy();
    for (const s of servers) s.close();
    rmSync(root, { recursive: true, force: true });
  });

  it.skipIf(EMBEDDED_RAN)(
    'restore refuses an empty directory others can write (a link planted in it during the unpack was followed), and writes nothing',
    async () => {
      const open = join(root, 'world-writable');
      mkdirSync(open);
      chmodSync(open, 0o777);
      const r = await runCliInProcess(['restore', good], { ...EMBEDDED, DATA_DIR: open });
      expect(r.code).toBe(1);
      expect(r.stderr).toBe(
        `climate-pulse: ${open} can be written by others (mode 777), who could plant a link in it during the restore; chmod 700 it or name a new directory (nothing was restored)\n`,
      );
      expect(readdirSync(open)).toEqual([]);
    },
    60_000,
  );

  it.skipIf(EMBEDDED_RAN)(
    'restore refuses a backup this PGlite cannot open in one line, and leaves no files (new and existing empty directory)',
    async () => {
      const fresh = join(root, 'from-pg16');
      const r = await runCliInProcess(['restore', v16], { ...EMBEDDED, DATA_DIR: fresh });
      expect(r.code).toBe(1);
      expect(r.stdout).toBe('');
      expect(r.stderr).toMatch(
        new RegExp(`^climate-pulse: ${escapeRegExp(v16)} holds a database this PGlite cannot open \\(PostgreSQL 16 files: [^\\n]+\\); nothing was restored\n$`),
      );
      expect(existsSync(fresh)).toBe(false);
      const empty = join(root, 'empty-0700');
      mkdirSync(empty, { mode: 0o700 });
      const again = await runCliInProcess(['restore', v16], { ...EMBEDDED, DATA_DIR: empty });
      expect(again.code).toBe(1);
      expect(again.stderr.split('\n')).toHaveLength(2);
      expect(readdirSync(empty)).toEqual([]);
    },
    60_000,
  );

  it.skipIf(EMBEDDED_RAN)(
    'db copy to a server that has no TLS where the URL asks for it: one line',
    async () => {
      const port = await fakeServer((s) => s.write('N')); // the answer to an SSLRequest: no TLS here
      const url = `postgres://someone@127.0.0.1:${port}/target?sslmode=verify-full`;
      const r = await runCliInProcess(['db', 'copy', '--to', url], { ...EMBEDDED, DATA_DIR: source });
      expect(r.code).toBe(1);
      expect(r.stderr).toBe(`climate-pulse: cannot use the target database ${url}: The server does not support SSL connections; nothing was copied\n`);
    },
    60_000,
  );

  it.skipIf(EMBEDDED_RAN)(
    'db copy to a port where something else listens and never answers: one line after the connection timeout',
    async () => {
      const port = await fakeServer(() => {});
      const url = `postgres://someone@127.0.0.1:${port}/target`;
      const r = await runCliInProcess(['db', 'copy', '--to', url], { ...EMBEDDED, DATA_DIR: source });
      expect(r.code).toBe(1);
      expect(r.stderr).toBe(`climate-pulse: cannot use the target database ${url}: Connection terminated due to connection timeout; nothing was copied\n`);
    },
    60_000,
  );

  it.skipIf(!TEST_DATABASE_URL)(
    'db copy to a read-only target: one line with the SQLSTATE, and nothing written there',
    async () => {
      const schema = `t_review3_${randomBytes(4).toString('hex')}`;
      const admin = new pg.Client({ connectionString: TEST_DATABASE_URL });
      await admin.connect();
      try {
        await admin.query(`CREATE SCHEMA ${schema}`);
        const url = new URL(TEST_DATABASE_URL!);
        url.searchParams.set('options', `-c search_path=${schema} -c default_transaction_read_only=on`);
        const r = await runCliInProcess(['db', 'copy', '--to', url.toString()], { ...EMBEDDED, DATA_DIR: source });
        expect(r.code).toBe(1);
        expect(r.stderr).toMatch(
          /^climate-pulse: cannot use the target database postgres:\/\/[^ ]+: cannot execute CREATE TABLE in a read-only transaction \(SQLSTATE 25006\); nothing was copied\n$/,
        );
        const [{ n }] = (await admin.query<{ n: number }>(`SELECT count(*)::int AS n FROM pg_class WHERE relnamespace = '${schema}'::regnamespace`)).rows;
        expect(n).toBe(0);
      } finally {
        await admin.query(`DROP SCHEMA ${schema} CASCADE`);
        await admin.end();
      }
    },
    60_000,
  );
});

describe('finding 5: the operator API refuses a body where it takes none, and a change to a deleted organization', () => {
  let t: AdminTest;
  beforeAll(async () => {
    t = await createAdminTest({ dataset: readDataset() });
  }, 60_000);
  afterAll(async () => t?.close());

  const send = (method: 'GET' | 'POST' | 'DELETE', url: string, payload?: string) =>
    t.admin.inject({
      method,
      url,
      headers: { authorization: `Bearer ${ADMIN_TEST_TOKEN}`, ...(payload === undefined ? {} : { 'content-type': 'application/json' }) },
      ...(payload === undefined ? {} : { payload }),
    });
  const NO_BODY = { error: { code: 'invalid_request', message: 'This operation takes no body; send none.' } };

  it('POST, DELETE and GET without a body schema: a JSON body is 400 invalid_request and changes nothing; without one they answer as before', async () => {
    const keys = (await send('GET', '/admin/v1/organizations/org_acme/keys')).json() as { items: { id: string; revokedAt: string | null }[] };
    const live = keys.items.find((k) => k.revokedAt === null)!;
    const revoke = await send('DELETE', `/admin/v1/organizations/org_acme/keys/${live.id}`, '{"reason":"ignored before"}');
    expect(revoke.statusCode).toBe(400);
    expect(revoke.json()).toEqual(NO_BODY);
    const still = (await send('GET', '/admin/v1/organizations/org_acme/keys')).json() as typeof keys;
    expect(still.items.find((k) => k.id === live.id)?.revokedAt).toBeNull();
    for (const [method, url] of [
      ['GET', '/admin/v1/organizations'],
      ['GET', '/admin/v1/organizations/org_acme'],
      ['DELETE', '/admin/v1/organizations/org_beta'],
      ['POST', '/admin/v1/backup'],
    ] as const) {
      const res = await send(method, url, '{}');
      expect(res.statusCode, `${method} ${url}`).toBe(400);
      expect(res.json(), `${method} ${url}`).toEqual(NO_BODY);
    }
    expect((await send('GET', '/admin/v1/organizations/org_beta')).json().deletedAt).toBeNull();
    expect((await send('GET', '/admin/v1/organizations/org_acme')).statusCode).toBe(200);
    expect((await send('DELETE', `/admin/v1/organizations/org_acme/keys/${live.id}`)).statusCode).toBe(200);
  });

  it('PATCH of a soft-deleted organization is 404 not_found, as every other operation on it, and renames nothing', async () => {
    const res = await t.call('PATCH', '/admin/v1/organizations/org_gone', { name: 'Renamed after its deletion' });
    expect(res.statusCode).toBe(404);
    expect(res.json()).toEqual({ error: { code: 'not_found', message: 'no organization "org_gone" (or it is deleted)' } });
    const org = (await t.call('GET', '/admin/v1/organizations/org_gone')).json() as { name: string; deletedAt: string | null };
    expect(org.name).toBe('Gone');
    expect(org.deletedAt).not.toBeNull();
  });
});
