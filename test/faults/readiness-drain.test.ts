import { mkdtempSync, rmSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.js';
import type { DatabaseExecutor } from '../../src/db/executor.js';
import { loadDataset } from '../../src/domain/dataset.js';
import { IDLE_CLOSE_MS, KEEP_ALIVE_HINT_S, QUIET_MAX_MS } from '../../src/http/drain.js';
import { startServer, type RunningServer } from '../../src/server.js';
import { createTestDatabase, DB_KIND, type TestDatabase } from '../helpers/db.js';
import { KEY_A, writesDataset } from '../http/writes/fixture.js';

/** A raw keep-alive connection: what it received, and whether the server closed it. */
function rawConnection(port: number) {
  const socket: Socket = connect(port, '127.0.0.1');
  let received = '';
  let closedAt: number | undefined;
  socket.on('data', (d) => (received += d));
  socket.on('error', () => undefined);
  socket.on('close', () => (closedAt = performance.now()));
  return {
    socket,
    received: () => received,
    closedAt: () => closedAt,
    /** Resolves once `count` answers (status lines) have arrived. */
    answers: async (count: number, ms = 10_000) => {
      const end = performance.now() + ms;
      while ((received.match(/HTTP\/1\.1 \d{3}/g) ?? []).length < count && performance.now() < end) await new Promise((r) => setTimeout(r, 10));
      return [...received.matchAll(/HTTP\/1\.1 (\d{3})[\s\S]*?\r\n\r\n/g)].map((m) => ({ status: Number(m[1]), head: m[0].toLowerCase() }));
    },
  };
}

const get = (path: string) => `GET ${path} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${KEY_A}\r\n\r\n`;

describe(`a server shutting down (${DB_KIND}, in this process)`, () => {
  let t: TestDatabase;
  let db: DatabaseExecutor;
  let dir: string;
  beforeAll(async () => {
    t = await createTestDatabase();
    await loadDataset(t.db, writesDataset());
    // The server closes its database when it stops; this file's database outlives each server.
    db = Object.assign(Object.create(Object.getPrototypeOf(t.db)), t.db, { close: async () => undefined });
    dir = mkdtempSync(join(tmpdir(), 'cp-faults-drain-'));
  });
  afterAll(async () => {
    await t?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  const start = (env: Record<string, string> = {}): Promise<RunningServer> =>
    startServer(
      loadConfig({
        PORT: '0',
        HOST: '127.0.0.1',
        LOG_LEVEL: 'silent',
        MAX_EVENT_LOOP_DELAY_MS: '0',
        ALERTS_INTERVAL_MINUTES: '0',
        DATA_DIR: dir,
        DATABASE_URL: t.url ?? '',
        ...env,
      }),
      { db },
    );

  it('answers /readyz 503 from the shutdown on while the port still serves for SHUTDOWN_DELAY_MS, every answer with Connection: close but in its last second (QUIET_MAX_MS); then the port closes', async () => {
    // 4 s: room for the three requests below on a busy machine, all inside the delay before its quiet last second.
    const server = await start({ SHUTDOWN_DELAY_MS: '4000' });
    const url = server.address;
    const ready = await fetch(`${url}/readyz`);
    expect(ready.status).toBe(200);
    expect(await ready.json()).toEqual({ status: 'ready' });
    expect(ready.headers.get('connection')).toBe('keep-alive');

    const signalAt = performance.now();
    const closed = server.close().then(() => performance.now());
    const draining = await fetch(`${url}/readyz`);
    expect(draining.status).toBe(503);
    expect(await draining.json()).toEqual({ error: { code: 'service_unavailable', message: 'The service is shutting down.' } });
    expect(draining.headers.get('retry-after')).toBe('1');
    expect(draining.headers.get('connection')).toBe('close');
    // The port still serves the API (and the process is alive) during the delay.
    const teams = await fetch(`${url}/v1/teams`, { headers: { authorization: `Bearer ${KEY_A}` } });
    expect(teams.status).toBe(200);
    expect(teams.headers.get('connection')).toBe('close');
    const alive = await fetch(`${url}/healthz`);
    expect(alive.status).toBe(200);
    expect(performance.now() - signalAt).toBeLessThan(4000 - QUIET_MAX_MS);

    expect((await closed) - signalAt).toBeGreaterThanOrEqual(4000);
    const refused = await fetch(`${url}/healthz`).then(
      () => 'answered',
      (err: Error) => String((err.cause as { code?: string })?.code),
    );
    expect(refused).toBe('ECONNREFUSED');
  });

  it('closes keep-alive connections between requests only: an in-flight answer says Connection: close and ends its connection, an idle one may bring one more request, one that stays idle is closed past its advertised keep-alive time, and close() returns', async () => {
    const server = await start();
    const port = Number(new URL(server.address).port);
    // One request answered on each connection before the shutdown: all three are open keep-alive connections.
    const [inFlight, idle, late] = [rawConnection(port), rawConnection(port), rawConnection(port)];
    const firstSentAt = performance.now(); // each falls idle after this, when its answer is written
    for (const c of [inFlight, idle, late]) c.socket.write(get('/v1/org'));
    for (const c of [inFlight, idle, late]) expect((await c.answers(1)).map((a) => a.status)).toEqual([200]);
    // Clients are told the keep-alive time after which a draining server may close an idle connection.
    for (const c of [inFlight, idle, late]) expect((await c.answers(1))[0].head).toContain(`keep-alive: timeout=${KEEP_ALIVE_HINT_S}\r\n`);
    // A request in flight at the shutdown: its body half sent.
    const body = JSON.stringify({ name: 'Drained team' });
    inFlight.socket.write(
      `POST /v1/teams HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${KEY_A}\r\nIdempotency-Key: drain-inflight-1\r\n` +
        `Content-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body.slice(0, 5)}`,
    );
    await new Promise((r) => setTimeout(r, 100));

    const closed = server.close().then(() => performance.now());
    await new Promise((r) => setTimeout(r, 100));
    inFlight.socket.write(body.slice(5));
    late.socket.write(get('/v1/org')); // on a connection idle at the signal

    const [, inFlightAnswer] = await inFlight.answers(2);
    expect(inFlightAnswer.status).toBe(200);
    expect(inFlightAnswer.head).toContain('connection: close');
    const [, lateAnswer] = await late.answers(2);
    expect(lateAnswer.status).toBe(200);
    expect(lateAnswer.head).toContain('connection: close');

    const closedAt = await Promise.race([closed, new Promise<number>((r) => setTimeout(() => r(-1), IDLE_CLOSE_MS + 8_000))]);
    expect(closedAt, 'close() did not return').toBeGreaterThan(0);
    // Each connection was closed by the server: the idle one once idle past the advertised
    // keep-alive time (a client honouring the hint has closed it before), the others after their answers.
    for (let i = 0; i < 100 && [inFlight, idle, late].some((c) => c.closedAt() === undefined); i++) await new Promise((r) => setTimeout(r, 10));
    for (const c of [inFlight, idle, late]) expect(c.closedAt()).toBeDefined();
    expect(idle.closedAt()! - firstSentAt).toBeGreaterThanOrEqual(IDLE_CLOSE_MS);
    expect(idle.received().match(/HTTP\/1\.1/g)).toHaveLength(1); // nothing more was sent on it
    expect(inFlight.closedAt()!).toBeLessThan(idle.closedAt()!);
    expect(late.closedAt()!).toBeLessThan(idle.closedAt()!);
  });
});

describe('SHUTDOWN_GRACE_MS and SHUTDOWN_DELAY_MS', () => {
  it('default to 10000 and 0, and are refused by name when malformed or when the delay would fill the grace', () => {
    const c = loadConfig({});
    expect([c.shutdownGraceMs, c.shutdownDelayMs]).toEqual([10_000, 0]);
    expect(loadConfig({ SHUTDOWN_GRACE_MS: '30000', SHUTDOWN_DELAY_MS: '5000' })).toMatchObject({ shutdownGraceMs: 30_000, shutdownDelayMs: 5_000 });
    expect(() => loadConfig({ SHUTDOWN_GRACE_MS: 'ten' })).toThrow(new ConfigError('invalid configuration: SHUTDOWN_GRACE_MS="ten" must be integer'));
    expect(() => loadConfig({ SHUTDOWN_GRACE_MS: '10' })).toThrow(new ConfigError('invalid configuration: SHUTDOWN_GRACE_MS=10 must be >= 1000'));
    expect(() => loadConfig({ SHUTDOWN_DELAY_MS: '-1' })).toThrow(new ConfigError('invalid configuration: SHUTDOWN_DELAY_MS=-1 must be >= 0'));
    expect(() => loadConfig({ SHUTDOWN_DELAY_MS: '10000' })).toThrow(
      new ConfigError('invalid configuration: SHUTDOWN_DELAY_MS=10000 must be less than SHUTDOWN_GRACE_MS (10000)'),
    );
  });
});
