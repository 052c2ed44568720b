import { connect } from 'node:net';
import { request } from 'node:http';
import { describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';
import { loadDataset } from '../../src/domain/dataset.js';
import type { DatabaseExecutor, NamedQuery } from '../../src/db/executor.js';
import { createTestApp } from '../helpers/app.js';
import { createTestDatabase } from '../helpers/db.js';
import { KEY_A, writesDataset } from '../http/writes/fixture.js';

/** Splits pipelined HTTP/1.1 responses (each with Content-Length) into status, headers and body. */
function parseResponses(raw: string) {
  const out: { status: number; headers: Record<string, string>; body: string }[] = [];
  let rest = raw;
  while (rest.length) {
    const end = rest.indexOf('\r\n\r\n');
    if (end < 0) break;
    const [statusLine, ...lines] = rest.slice(0, end).split('\r\n');
    const headers = Object.fromEntries(lines.map((l) => [l.slice(0, l.indexOf(':')).toLowerCase(), l.slice(l.indexOf(':') + 1).trim()]));
    const length = Number(headers['content-length'] ?? 0);
    out.push({ status: Number(statusLine.split(' ')[1]), headers, body: rest.slice(end + 4, end + 4 + length) });
    rest = rest.slice(end + 4 + length);
  }
  return out;
}

describe('a request that arrives while the server closes', () => {
  it('on an open keep-alive connection gets the contract 503 with Retry-After, after the in-flight request finished', async () => {
    const t = await createTestApp({ dataset: writesDataset() });
    const address = await t.app.listen({ port: 0, host: '127.0.0.1' });
    const port = Number(new URL(address).port);
    const socket = connect(port, '127.0.0.1');
    let raw = '';
    socket.on('data', (d) => (raw += d));
    const ended = new Promise((r) => socket.on('close', r));
    try {
      const body = JSON.stringify({ name: 'Closing team' });
      // Request 1 is in flight, its body half sent, when the server starts closing.
      socket.write(
        `POST /v1/teams HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${KEY_A}\r\nIdempotency-Key: closing-key-01\r\n` +
          `Content-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body.slice(0, 5)}`,
      );
      await new Promise((r) => setTimeout(r, 300));
      const closed = t.app.close();
      await new Promise((r) => setTimeout(r, 300));
      // The rest of request 1, and request 2 pipelined behind it on the same connection.
      socket.write(`${body.slice(5)}GET /v1/org HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${KEY_A}\r\nX-Request-Id: closing-req-2\r\n\r\n`);
      await closed;
      await Promise.race([ended, new Promise((r) => setTimeout(r, 5_000))]);
      const [first, second] = parseResponses(raw);
      expect(first.status).toBe(200);
      expect(JSON.parse(first.body)).toEqual({ id: expect.stringMatching(/^team_/), name: 'Closing team' });
      expect(second.status).toBe(503);
      expect(JSON.parse(second.body)).toEqual({ error: { code: 'service_unavailable', message: 'The service is shutting down; retry shortly.' } });
      expect(second.headers['retry-after']).toBe('1');
      expect(second.headers['x-request-id']).toBe('closing-req-2');
      expect(second.headers.connection).toBe('close');
      expect(second.headers['content-type']).toBe('application/json; charset=utf-8');
    } finally {
      socket.destroy();
      await t.close();
    }
  });
});

describe('a request whose client hung up while the server closes', () => {
  it('runs to its end before the app has closed, so the database is not closed under it', async () => {
    const tdb = await createTestDatabase();
    await loadDataset(tdb.db, writesDataset());
    // The real database, with a gate: once armed, the next query waits until it is opened.
    let armed = false;
    let open: () => void = () => undefined;
    const gate = new Promise<void>((resolve) => (open = resolve));
    let reached: () => void = () => undefined;
    const gated = new Promise<void>((resolve) => (reached = resolve));
    const log: string[] = [];
    let dbClosed = false;
    const real = tdb.db;
    const db: DatabaseExecutor = {
      kind: real.kind,
      async query<T>(q: NamedQuery, params?: unknown[]) {
        if (armed) {
          armed = false;
          reached();
          await gate;
        }
        log.push(dbClosed ? `${q.name} after the database closed` : q.name);
        return real.query<T>(q, params);
      },
      transaction: (fn) => real.transaction(fn),
      exec: (sql) => real.exec(sql),
      close: () => real.close(),
    };
    const app = await buildApp(loadConfig({ LOG_LEVEL: 'silent', MAX_EVENT_LOOP_DELAY_MS: '0' }), { db });
    try {
      const address = await app.listen({ port: 0, host: '127.0.0.1' });
      armed = true;
      const req = request(`${address}/v1/teams`, { headers: { authorization: `Bearer ${KEY_A}` } });
      req.on('error', () => undefined);
      req.end();
      await gated;
      // The client hangs up while its request waits on the database, then the server closes.
      req.destroy();
      await new Promise((r) => setTimeout(r, 50));
      const countBefore = log.length;
      let closedAt = 0;
      const closing = app.close().then(() => (closedAt = log.length));
      await new Promise((r) => setTimeout(r, 300));
      expect(closedAt).toBe(0); // still waiting for the request
      open();
      await closing;
      dbClosed = true;
      // The gated query and the handler's queries after it all ran before the app had closed.
      expect(closedAt).toBeGreaterThan(countBefore + 1);
      expect(log.filter((l) => l.endsWith('after the database closed'))).toEqual([]);
    } finally {
      open();
      await app.close();
      await tdb.close();
    }
  });
});
