/**
 * Issue 20: one regression test (or a few) per finding of the outside review, each named after
 * what broke. docs/security.md cites them. They run on both passes (PGlite, and PostgreSQL +
 * Redis); the file-mode ones concern the embedded data directory and run in every pass.
 */
import { execFile } from 'node:child_process';
import { chmodSync, lstatSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { lookup } from 'node:dns/promises';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { ConfigError, EnvSchema, isSecretVariable, loadConfig } from '../../src/config.js';
import type { DatabaseExecutor } from '../../src/db/executor.js';
import { initializeDataDir } from '../../src/db/pglite-init.js';
import { loadDataset } from '../../src/domain/dataset.js';
import { createEndpoint, attemptDelivery, checkWebhookUrl, refusedAddressKind, safeLookup } from '../../src/domain/webhook-deliveries.js';
import { startServer, type RunningServer } from '../../src/server.js';
import { KEYS, NOW, readDataset } from '../fixtures/dataset.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { runCliInProcess } from '../helpers/cli.js';
import { createTestDatabase, EMBEDDED_RAN, TEST_REDIS_URL, type TestDatabase } from '../helpers/db.js';
import { expectDocumented } from '../helpers/openapi.js';
import { CLI, ROOT } from '../helpers/process.js';

const CONTRACT_ERROR = /^\{"error":\{"code":"[a-z_]+","message":"[^"]{1,500}"\}\}$/;

/** Every directory and file under `dir` with its permission bits, symbolic links left out. */
function modes(dir: string): { path: string; mode: number; isDir: boolean }[] {
  const out = [{ path: dir, mode: lstatSync(dir).mode & 0o777, isDir: true }];
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, e.name);
    if (e.isSymbolicLink()) continue;
    if (e.isDirectory()) out.push(...modes(path));
    else out.push({ path, mode: lstatSync(path).mode & 0o777, isDir: false });
  }
  return out;
}
const looseOnes = (dir: string) => modes(dir).filter((m) => m.mode !== (m.isDir ? 0o700 : 0o600));

/** The CLI (the compiled one, as npx runs it; through tsx it compiled src/ again first) in a child process under umask 000, the most permissive one. */
function runCliUmask0(args: string[], env: Record<string, string>): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      '/bin/sh',
      ['-c', `umask 000 && exec "${process.execPath}" "${CLI}" "$@"`, 'sh', ...args],
      { cwd: ROOT, env: { ...process.env, LOG_LEVEL: 'warn', ...env } },
      (err, stdout, stderr) => resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });
}

describe.skipIf(EMBEDDED_RAN)("finding 1: the embedded data directory is the owner's only", () => {
  const base = mkdtempSync(join(tmpdir(), 'cp-modes-'));
  afterAll(() => rmSync(base, { recursive: true, force: true }));

  it('a data directory made from the template under umask 000 is 0700 with every file 0600', async () => {
    const dir = join(base, 'from-template');
    const res = await runCliUmask0(['migrate'], { DATA_DIR: dir, DATABASE_URL: '' });
    expect(res.stderr).not.toMatch(/error/i);
    expect(res.code).toBe(0);
    expect(modes(dir).length).toBeGreaterThan(500);
    expect(looseOnes(dir).map((m) => `${m.path} ${m.mode.toString(8)}`)).toEqual([]);
  }, 120_000);

  it('a data directory made by initdb (no template) under umask 000 is 0700 with every file 0600', async () => {
    const dir = join(base, 'by-initdb');
    const previous = process.umask(0);
    try {
      expect(await initializeDataDir(dir, { template: null })).toBe('initdb');
    } finally {
      process.umask(previous);
    }
    expect(looseOnes(dir).map((m) => `${m.path} ${m.mode.toString(8)}`)).toEqual([]);
  }, 120_000);

  it('refuses to start on a data directory others can read or write, with one line saying how to fix it', async () => {
    const dir = join(base, 'from-template'); // made by the first test
    chmodSync(dir, 0o755);
    const refused = await runCliInProcess(['migrate'], { DATA_DIR: dir, DATABASE_URL: '' });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toBe(
      `climate-pulse: the embedded database in ${dir} can be read or written by other users (it is 0755); run: chmod -R go-rwx ${dir}\n`,
    );
    for (const mode of [0o750, 0o707, 0o701]) {
      chmodSync(dir, mode);
      expect((await runCliInProcess(['migrate'], { DATA_DIR: dir, DATABASE_URL: '' })).code).toBe(1);
    }
    // Inside an owner-only directory a file left 0666 is out of others' reach: it is narrowed at start.
    chmodSync(dir, 0o700);
    chmodSync(join(dir, 'postgresql.conf'), 0o666);
    expect((await runCliInProcess(['migrate'], { DATA_DIR: dir, DATABASE_URL: '' })).code).toBe(0);
    expect(looseOnes(dir)).toEqual([]);
  }, 120_000);
});

/** A database executor that counts key lookups: the number the failed-auth limit bounds. */
function countingLookups(db: DatabaseExecutor) {
  let lookups = 0;
  const counted = new Proxy(db, {
    get(target, prop, receiver) {
      if (prop === 'query') {
        return (q: { name: string }, params?: unknown[]) => {
          if (q.name === 'api_keys.by_hash') lookups++;
          return target.query(q as never, params);
        };
      }
      const value = Reflect.get(target, prop, receiver);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
  return { db: counted, lookups: () => lookups };
}

describe('finding 2: the failed-authentication limit holds under concurrency', () => {
  let tdb: TestDatabase;
  beforeAll(async () => {
    tdb = await createTestDatabase();
    await loadDataset(tdb.db, readDataset());
  }, 180_000);
  afterAll(() => tdb.close());

  const appOn = async (db: DatabaseExecutor) =>
    buildApp(loadConfig({ LOG_LEVEL: 'silent', MAX_EVENT_LOOP_DELAY_MS: '0', ...(TEST_REDIS_URL ? { REDIS_URL: TEST_REDIS_URL } : {}) }), {
      db,
      now: () => NOW,
      rateLimitNamespace: `cp-review-${Math.random().toString(36).slice(2)}:`,
    });

  it('200 requests at once with unknown keys from one address: exactly 30 lookups answered 401, the other 170 get 429', async () => {
    const c = countingLookups(tdb.db);
    const app = await appOn(c.db);
    try {
      const answers = await Promise.all(
        Array.from({ length: 200 }, (_, i) =>
          app.inject({ url: '/v1/org', headers: { authorization: `Bearer cp_guess_${i}_0123456789abcdef` }, remoteAddress: '203.0.113.9' }),
        ),
      );
      const count = (s: number) => answers.filter((a) => a.statusCode === s).length;
      expect(c.lookups()).toBe(30);
      expect({ 401: count(401), 429: count(429) }).toEqual({ 401: 30, 429: 170 });
      for (const a of answers.filter((x) => x.statusCode === 429)) {
        expect(a.json().error.code).toBe('rate_limited');
        expect(Number(a.headers['retry-after'])).toBeGreaterThanOrEqual(1);
      }
      // Another address is not affected.
      expect((await app.inject({ url: '/v1/org', headers: { authorization: `Bearer ${KEYS.acme}` }, remoteAddress: '203.0.113.10' })).statusCode).toBe(200);
    } finally {
      await app.close();
    }
  });

  it("one unknown key sent 200 times at once is looked up once; a valid key's burst of 100 at once is not limited", async () => {
    const c = countingLookups(tdb.db);
    const app = await appOn(c.db);
    try {
      const same = await Promise.all(
        Array.from({ length: 200 }, () =>
          app.inject({ url: '/v1/org', headers: { authorization: 'Bearer cp_guess_same_0123456789' }, remoteAddress: '203.0.113.20' }),
        ),
      );
      expect(c.lookups()).toBe(1);
      expect(same.filter((a) => a.statusCode === 401).length).toBe(30);
      expect(same.filter((a) => a.statusCode === 429).length).toBe(170);

      const valid = await Promise.all(
        Array.from({ length: 100 }, () => app.inject({ url: '/v1/org', headers: { authorization: `Bearer ${KEYS.acme}` }, remoteAddress: '203.0.113.21' })),
      );
      expect(valid.map((a) => a.statusCode)).toEqual(Array(100).fill(200));
      expect(c.lookups()).toBe(2); // one more: the valid key, once
    } finally {
      await app.close();
    }
  });
});

describe('finding 3: integer query values are bounded as text', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ dataset: readDataset(), now: NOW });
  }, 180_000);
  afterAll(() => t.close());

  const HUGE = [
    '9'.repeat(309),
    '9'.repeat(400),
    `-${'9'.repeat(400)}`,
    `+${'9'.repeat(309)}`,
    '1e400',
    '-1e400',
    '1e3',
    '9007199254740993',
    '-9007199254740993',
    encodeURIComponent('٣'),
    encodeURIComponent('１０'),
    encodeURIComponent('৫'),
    '0x10',
    '1.0',
    '-0.5',
    'Infinity',
    '-Infinity',
  ];
  const PARAMS: [string, string][] = [
    ['/v1/pulses', 'limit'],
    ['/v1/pulses', 'level'],
    ['/v1/alerts', 'limit'],
    ['/v1/comments', 'limit'],
  ];

  it.each(PARAMS)('%s?%s= followed by 309+ digits, a sign, an exponent or non-ASCII digits: 400 invalid_request naming the parameter', async (path, param) => {
    for (const value of HUGE) {
      const res = await t.app.inject({ url: `${path}?${param}=${value}`, headers: { authorization: `Bearer ${KEYS.acme}` } });
      expect(res.statusCode, `${param}=${value.slice(0, 20)} -> ${res.body}`).toBe(400);
      expect(res.json().error.code).toBe('invalid_request');
      expect(res.json().error.message).toContain(`'${param}'`);
      await expectDocumented(t.app, 'GET', path, res);
    }
    // Leading zeros are still the number they spell.
    const ok = await t.app.inject({ url: `${path}?${param}=${'0'.repeat(400)}3`, headers: { authorization: `Bearer ${KEYS.acme}` } });
    expect(ok.statusCode).toBe(200);
  });
});

describe('finding 5: configuration errors never print a secret', () => {
  const SECRET = 'hunter2-secret-value';
  it.each([
    [
      'DATABASE_URL',
      `mysql://admin:${SECRET}@db.internal/app`,
      'invalid configuration: DATABASE_URL must be a postgres:// URL (its value is secret and not shown)',
    ],
    ['DATABASE_URL', `postgres://admin:${SECRET}@[db/app`, 'invalid configuration: DATABASE_URL is not a valid URL (its value is secret and not shown)'],
    [
      'REDIS_URL',
      `http://:${SECRET}@cache.internal:6379`,
      'invalid configuration: REDIS_URL must be a redis:// or rediss:// URL (its value is secret and not shown)',
    ],
    [
      'COMMENT_CURSOR_SECRET',
      SECRET,
      'invalid configuration: COMMENT_CURSOR_SECRET must not have fewer than 32 characters (its value is secret and not shown)',
    ],
  ])(
    'a bad %s is named, with what is wrong, and its value is not printed',
    async (name, value, message) => {
      expect(() => loadConfig({ [name]: value })).toThrow(new ConfigError(message));
      const res = await runCliInProcess(['migrate'], { [name]: value, DATA_DIR: join(tmpdir(), 'cp-never-opened') });
      expect(res.code).toBe(1);
      expect(res.stderr).toBe(`climate-pulse: ${message}\n`);
      expect(res.stderr + res.stdout).not.toContain(SECRET);
    },
    60_000,
  );

  it('every variable marked secret keeps its value out of the message, and the known secrets are marked', () => {
    const secrets = Object.keys(EnvSchema.properties).filter(isSecretVariable);
    expect(secrets).toEqual(expect.arrayContaining(['DATABASE_URL', 'REDIS_URL', 'COMMENT_CURSOR_SECRET']));
    if ('ADMIN_TOKEN' in EnvSchema.properties) expect(secrets).toContain('ADMIN_TOKEN');
    for (const name of secrets) {
      let message = '';
      try {
        loadConfig({ [name]: SECRET });
      } catch (err) {
        message = (err as Error).message;
      }
      expect(message, name).toMatch(new RegExp(`^invalid configuration: ${name} .+ \\(its value is secret and not shown\\)$`));
      expect(message).not.toContain(SECRET);
    }
    // Values that are not secret are still shown, to help.
    expect(() => loadConfig({ PORT: 'eighty' })).toThrow('invalid configuration: PORT="eighty" must be integer');
    expect(() => loadConfig({ WEBHOOK_ALLOW_PRIVATE: 'yes' })).toThrow('invalid configuration: WEBHOOK_ALLOW_PRIVATE="yes" must be true or false');
  });
});

describe('finding 6: webhooks never reach internal addresses', () => {
  // One database for every refused address: none of them writes a row.
  let db: Awaited<ReturnType<typeof createTestDatabase>>;
  beforeAll(async () => {
    db = await createTestDatabase();
  });
  afterAll(() => db?.close());

  it.each([
    ['https://169.254.169.254/latest/meta-data/', 'the URL points to a link-local address (169.254.169.254); webhooks go to public hosts only'],
    ['https://10.0.0.5/hook', 'the URL points to a private address (10.0.0.5); webhooks go to public hosts only'],
    ['https://[::1]:6379/', 'the URL points to a loopback address (::1); webhooks go to public hosts only'],
    ['http://2130706433:22/', 'the URL must be https:// (http:// only to loopback, in tests, with WEBHOOK_ALLOW_PRIVATE=true)'],
    ['https://2130706433:22/', 'the URL points to a loopback address (127.0.0.1); webhooks go to public hosts only'],
    ['https://0x7f.1/', 'the URL points to a loopback address (127.0.0.1); webhooks go to public hosts only'],
    ['https://[::ffff:169.254.169.254]/', 'the URL points to a link-local address (::ffff:a9fe:a9fe); webhooks go to public hosts only'],
    ['https://[64:ff9b::a00:5]/', 'the URL points to a private address (64:ff9b::a00:5); webhooks go to public hosts only'],
    ['https://[fd00::1]/', 'the URL points to a private address (fd00::1); webhooks go to public hosts only'],
    ['https://[ff02::1]/', 'the URL points to a multicast address (ff02::1); webhooks go to public hosts only'],
    ['https://224.0.0.1/', 'the URL points to a multicast address (224.0.0.1); webhooks go to public hosts only'],
    ['https://0.0.0.0/', 'the URL points to a unspecified address (0.0.0.0); webhooks go to public hosts only'],
    ['https://localhost:8443/', 'the URL points to a loopback address (localhost); webhooks go to public hosts only'],
    ['https://100.64.0.1/', 'the URL points to a private (shared) address (100.64.0.1); webhooks go to public hosts only'],
  ])('refuses %s when it is added', async (url, message) => {
    expect(() => checkWebhookUrl(url)).toThrow(message);
    await expect(createEndpoint(db.db, 'org_x', { url, eventTypes: null, now: new Date() })).rejects.toThrow(message);
  });

  it('resolves the host at each delivery and refuses it when any of its addresses is internal', async () => {
    const fake = (addresses: string[]) =>
      ((_h: string, _o: unknown, cb: (e: null, a: { address: string; family: number }[]) => void) =>
        cb(
          null,
          addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 })),
        )) as never;
    const lookupOf = (addresses: string[]) =>
      new Promise<{ err: Error | null; address: string }>((resolve) =>
        safeLookup({}, fake(addresses))('hooks.example.com', { family: 0 } as never, (err, address) => resolve({ err, address: address as string })),
      );
    expect(await lookupOf(['93.184.216.34'])).toEqual({ err: null, address: '93.184.216.34' });
    const refused = await lookupOf(['93.184.216.34', '10.0.0.5']);
    expect(refused.err?.message).toBe('hooks.example.com resolves to a private address');
    expect((await lookupOf(['::ffff:127.0.0.1'])).err?.message).toBe('hooks.example.com resolves to a loopback address');

    // Through a real attempt, with the system resolver: this machine's own name is never public.
    const host = hostname();
    const resolved = await lookup(host).catch(() => null);
    if (resolved) {
      const result = await attemptDelivery(
        {
          url: `https://${host}:9/hook`,
          secret: `whsec_${Buffer.alloc(32).toString('base64')}`,
          previousSecret: null,
          previousSecretExpiresAt: null,
          eventId: 'msg_1',
          payload: '{}',
        } as never,
        { timeoutMs: 2000 },
      );
      expect(result).toMatchObject({ kind: 'retryable', statusCode: null });
      expect((result as { error: string }).error).toBe(`refused: ${host} resolves to a ${refusedAddressKind(resolved.address)} address`);
    }
    expect(() => checkWebhookUrl('https://localhost.:9/hook')).toThrow('the URL points to a loopback address (localhost)');
  });
});

/** One raw HTTP exchange on a fresh connection: what the server wrote until it closed, and when. */
function raw(port: number, data: string, timeoutMs = 10_000): Promise<{ text: string; ms: number }> {
  return new Promise((resolve, reject) => {
    const t0 = Date.now();
    let text = '';
    const socket = connect(port, '127.0.0.1', () => socket.write(data));
    socket.on('data', (d) => (text += d.toString()));
    socket.on('error', () => {});
    socket.on('close', () => resolve({ text, ms: Date.now() - t0 }));
    setTimeout(() => {
      socket.destroy();
      reject(new Error(`no close after ${timeoutMs} ms: ${text}`));
    }, timeoutMs).unref();
  });
}
const statusOf = (text: string) => Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1]);
const headerOf = (text: string, name: string) => new RegExp(`^${name}: (.*)\\r$`, 'mi').exec(text)?.[1];
const bodyOf = (text: string) => text.slice(text.indexOf('\r\n\r\n') + 4);

describe('finding 7: answers before routing are in the contract shape; timeouts and connections are bounded', () => {
  let tdb: TestDatabase;
  let server: RunningServer;
  let port: number;
  beforeAll(async () => {
    tdb = await createTestDatabase();
    await loadDataset(tdb.db, readDataset());
    const config = loadConfig({
      PORT: '0',
      HOST: '127.0.0.1',
      LOG_LEVEL: 'silent',
      MAX_EVENT_LOOP_DELAY_MS: '0',
      REQUEST_TIMEOUT_MS: '1500',
      MAX_CONNECTIONS: '3',
      ALERTS_INTERVAL_MINUTES: '0',
      WEBHOOK_POLL_MS: '60000',
      ...(TEST_REDIS_URL ? { REDIS_URL: TEST_REDIS_URL } : {}),
      ADMIN_PORT: '0',
      ADMIN_TOKEN: `op_${'x'.repeat(40)}`,
    });
    server = await startServer(config, { db: tdb.db });
    port = Number(new URL(server.address).port);
  }, 180_000);
  afterAll(async () => {
    await server.close(); // closes the database too
    await tdb?.drop?.(); // and its PostgreSQL schema goes
  });

  const expectContractError = (text: string, status: number, code: string) => {
    expect(statusOf(text), text).toBe(status);
    expect(headerOf(text, 'Content-Type')).toBe('application/json; charset=utf-8');
    expect(headerOf(text, 'X-Request-Id')).toMatch(/^[0-9a-f-]{36}$/);
    expect(bodyOf(text)).toMatch(CONTRACT_ERROR);
    expect(JSON.parse(bodyOf(text)).error.code).toBe(code);
  };

  it('headers over the limit get 431 invalid_request in the contract shape with X-Request-Id', async () => {
    const { text } = await raw(port, `GET /v1/org HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`);
    expectContractError(text, 431, 'invalid_request');
  });

  it('malformed framing gets 400 invalid_request in the contract shape with X-Request-Id', async () => {
    for (const bad of [
      'GET /v1/org HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n',
      'GET /v1/org HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\n',
      'NOT HTTP AT ALL\r\n\r\n',
    ]) {
      const { text } = await raw(port, bad);
      expectContractError(text, 400, 'invalid_request');
      expect(JSON.parse(bodyOf(text)).error.message).toBe('The request is not valid HTTP (malformed request line, headers or framing).');
    }
  });

  it('the operator API answers oversized headers and malformed framing in the contract shape too (CONTRACT.md section 10)', async () => {
    const adminPort = Number(new URL(server.adminAddress!).port);
    expect(adminPort).not.toBe(port);
    expectContractError(
      (await raw(adminPort, `GET /admin/v1/openapi.json HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`)).text,
      431,
      'invalid_request',
    );
    const { text } = await raw(adminPort, 'GET /admin/v1/openapi.json HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\n');
    expectContractError(text, 400, 'invalid_request');
    expect(JSON.parse(bodyOf(text)).error.message).toBe('The request is not valid HTTP (malformed request line, headers or framing).');
  });

  it('a request that does not arrive whole gets 408 invalid_request within a second of REQUEST_TIMEOUT_MS', async () => {
    const { text, ms } = await raw(port, 'GET /v1/org HTTP/1.1\r\nHost: x\r\n');
    expectContractError(text, 408, 'invalid_request');
    expect(JSON.parse(bodyOf(text)).error.message).toBe('The request did not arrive whole within 1500 ms.');
    expect(ms).toBeGreaterThanOrEqual(1400);
    expect(ms).toBeLessThan(2500);
  });

  it('a 401 carries WWW-Authenticate with the climate-pulse realm, and error=invalid_token when a key was sent', async () => {
    const none = await fetch(`http://127.0.0.1:${port}/v1/org`);
    expect(none.status).toBe(401);
    expect(none.headers.get('www-authenticate')).toBe('Bearer realm="climate-pulse"');
    const bad = await fetch(`http://127.0.0.1:${port}/v1/org`, { headers: { authorization: 'Bearer cp_wrong_0123456789abcdef' } });
    expect(bad.status).toBe(401);
    expect(bad.headers.get('www-authenticate')).toBe('Bearer realm="climate-pulse", error="invalid_token"');
    expect(bad.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
    const ok = await fetch(`http://127.0.0.1:${port}/v1/org`, { headers: { authorization: `Bearer ${KEYS.acme}` } });
    expect(ok.status).toBe(200);
    expect(ok.headers.get('www-authenticate')).toBeNull();
  });

  it('MAX_CONNECTIONS caps open connections: one past the cap is closed at once, the others are served', async () => {
    const open = await Promise.all(
      Array.from(
        { length: 3 },
        () =>
          new Promise<ReturnType<typeof connect>>((resolve) => {
            const s = connect(port, '127.0.0.1', () => resolve(s));
            s.on('error', () => {});
          }),
      ),
    );
    await new Promise((r) => setTimeout(r, 100));
    const { text } = await raw(port, `GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n`);
    expect(text).toBe(''); // closed without an answer
    for (const s of open) s.destroy();
    await new Promise((r) => setTimeout(r, 100));
    const after = await raw(port, `GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`);
    expect(statusOf(after.text)).toBe(200);
  });
});

describe('finding 8: quieter ones', () => {
  it('two Authorization headers are refused with 401, even when the first one is a valid key', async () => {
    const tdb = await createTestDatabase();
    await loadDataset(tdb.db, readDataset());
    const config = loadConfig({
      PORT: '0',
      HOST: '127.0.0.1',
      LOG_LEVEL: 'silent',
      MAX_EVENT_LOOP_DELAY_MS: '0',
      ALERTS_INTERVAL_MINUTES: '0',
      WEBHOOK_POLL_MS: '60000',
    });
    const server = await startServer(config, { db: tdb.db });
    try {
      const port = Number(new URL(server.address).port);
      for (const [first, second] of [
        [KEYS.acme, KEYS.beta],
        [KEYS.acme, 'cp_wrong_0123456789abcdef'],
        ['cp_wrong_0123456789abcdef', KEYS.acme],
      ]) {
        const { text } = await raw(
          port,
          `GET /v1/org HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${first}\r\nAuthorization: Bearer ${second}\r\nConnection: close\r\n\r\n`,
        );
        expect(statusOf(text)).toBe(401);
        expect(JSON.parse(bodyOf(text))).toEqual({ error: { code: 'unauthorized', message: 'Send exactly one Authorization header.' } });
        expect(headerOf(text, 'www-authenticate')).toBe('Bearer realm="climate-pulse", error="invalid_token"');
      }
      const { text } = await raw(port, `GET /v1/org HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${KEYS.acme}\r\nConnection: close\r\n\r\n`);
      expect(statusOf(text)).toBe(200);
    } finally {
      await server.close(); // closes the database too
      await tdb.drop?.();
    }
  });

  it('with Redis unreachable at start, says once that the limits are per process', async () => {
    const lines: string[] = [];
    const stream = new Writable({
      write: (chunk, _e, cb) => {
        lines.push(chunk.toString());
        cb();
      },
    });
    const tdb = await createTestDatabase();
    await loadDataset(tdb.db, readDataset());
    const app = await buildApp(loadConfig({ MAX_EVENT_LOOP_DELAY_MS: '0', REDIS_URL: 'redis://127.0.0.1:1' }), {
      db: tdb.db,
      logger: { level: 'warn', stream } as never,
      now: () => NOW,
    });
    try {
      for (let i = 0; i < 5; i++) expect((await app.inject({ url: '/v1/org', headers: { authorization: `Bearer ${KEYS.acme}` } })).statusCode).toBe(200);
      const said = lines.map((l) => JSON.parse(l).msg as string).filter((m) => m.startsWith('rate limits:'));
      expect(said).toEqual(['rate limits: Redis is not reachable at start; limits are per process until it answers']);
    } finally {
      await app.close();
      await tdb.close();
    }
  }, 30_000);

  it("Scarf's install-time telemetry is switched off for every install", async () => {
    const pkg = (await import('../../package.json', { with: { type: 'json' } })).default as { scarfSettings?: { enabled?: boolean } };
    expect(pkg.scarfSettings).toEqual({ enabled: false });
  });
});

describe('finding 10: team names are trimmed before their length is checked', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ dataset: readDataset(), now: NOW });
  }, 180_000);
  afterAll(() => t.close());
  const post = (name: string, key: string) =>
    t.app.inject({ method: 'POST', url: '/v1/teams', payload: { name }, headers: { authorization: `Bearer ${KEYS.acme}`, 'idempotency-key': key } });

  it('accepts a space + 80 characters + a space as the 80-character name, and refuses 81 after trimming', async () => {
    const name = `${'n'.repeat(79)}é`;
    const res = await post(` ${name} `, 'trimmed-team-80-x');
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toEqual({ id: expect.stringMatching(/^team_/), name });
    await expectDocumented(t.app, 'POST', '/v1/teams', res);
    const tabs = await post(`\t\n ${'m'.repeat(80)} \t`, 'trimmed-team-80-y');
    expect(tabs.statusCode).toBe(200);
    const long = await post(` ${'o'.repeat(81)} `, 'trimmed-team-81-z');
    expect(long.statusCode).toBe(400);
    expect(long.json()).toEqual({ error: { code: 'invalid_request', message: "Body field 'name' must be 1-80 characters after trimming." } });
  });
});
