import { connect } from 'node:net';
import { describe, expect, it } from 'vitest';
import { createTestApp } from '../helpers/app.js';
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
