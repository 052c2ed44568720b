import { randomUUID } from 'node:crypto';
import { STATUS_CODES, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { ErrorCode } from '../contract/errors.js';

/**
 * What Node's HTTP server refuses before any request reaches Fastify (headers over the limit,
 * malformed framing, a request that does not arrive in time) is answered in the contract's
 * error shape with an X-Request-Id, like every other answer (CONTRACT section 3). Used by every
 * listener the service opens.
 */
export interface NodeServerLimits {
  /**
   * A request must have arrived whole within this time, else 408. Unset: the server's own timeouts
   * stay (the operator API, whose imports stream for minutes, has none).
   */
  requestTimeoutMs?: number;
  /**
   * The headers of each request must have arrived within this time, else 408 (the operator API:
   * it authenticates on the headers, so this bounds every request before authentication).
   */
  headersTimeoutMs?: number;
  /**
   * A request whose body stops arriving for this long is answered 408 and its connection closed.
   * Only the client's silence counts: once a request has arrived whole, its answer may take as
   * long as it takes (an import runs for minutes). Connections idle between requests are closed.
   */
  bodyIdleTimeoutMs?: number;
  /** Open connections at once; further ones are closed as they arrive. */
  maxConnections?: number;
  log?: { warn(obj: object, msg: string): void };
}

/** How often Node looks for requests past their deadline: the timeout is honoured within this. */
const CHECK_EVERY_MS = 500;

function errorAnswer(status: number, code: ErrorCode, message: string): string {
  const body = JSON.stringify({ error: { code, message } });
  return (
    `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\n` +
    'Content-Type: application/json; charset=utf-8\r\n' +
    `Content-Length: ${Buffer.byteLength(body)}\r\n` +
    `X-Request-Id: ${randomUUID()}\r\n` +
    'X-Content-Type-Options: nosniff\r\n' +
    'Cache-Control: no-store\r\n' +
    'Connection: close\r\n\r\n' +
    body
  );
}

/** The answer to a request Node's parser or timers refused. */
export function clientErrorAnswer(err: { code?: string }, requestTimeoutMs?: number, headersTimeoutMs?: number): string {
  switch (err.code) {
    case 'HPE_HEADER_OVERFLOW':
      return errorAnswer(431, 'invalid_request', 'The request headers are larger than the server accepts.');
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      if (requestTimeoutMs === undefined && headersTimeoutMs !== undefined) {
        return errorAnswer(408, 'invalid_request', `The request headers did not arrive within ${headersTimeoutMs} ms.`);
      }
      return errorAnswer(408, 'invalid_request', `The request did not arrive whole within ${requestTimeoutMs ?? 'the allowed'} ms.`);
    default:
      return errorAnswer(400, 'invalid_request', 'The request is not valid HTTP (malformed request line, headers or framing).');
  }
}

/** Call before `listen`: Node reads the checking interval when the server starts listening. */
export function answerNodeErrorsInContractShape(server: Server, limits: NodeServerLimits) {
  if (limits.requestTimeoutMs !== undefined) {
    server.requestTimeout = limits.requestTimeoutMs;
    // Node's default (60 s) would outlast a shorter request timeout.
    server.headersTimeout = Math.min(server.headersTimeout || 60_000, limits.requestTimeoutMs);
    // Node checks deadlines every 30 s by default, so a 30 s timeout fired after 30-60 s.
    (server as Server & { connectionsCheckingInterval: number }).connectionsCheckingInterval = Math.min(CHECK_EVERY_MS, limits.requestTimeoutMs);
  }
  if (limits.headersTimeoutMs !== undefined) {
    // Node counts it from the connection's first byte (or from its opening), so a silent connection times out too.
    server.headersTimeout = limits.headersTimeoutMs;
    const check = server as Server & { connectionsCheckingInterval: number };
    check.connectionsCheckingInterval = Math.min(check.connectionsCheckingInterval, CHECK_EVERY_MS, limits.headersTimeoutMs);
  }
  if (limits.maxConnections) {
    server.maxConnections = limits.maxConnections;
    let warnedAt = 0;
    server.on('drop', () => {
      if (Date.now() - warnedAt < 60_000) return; // once a minute at most
      warnedAt = Date.now();
      limits.log?.warn({ maxConnections: limits.maxConnections }, 'connection limit reached; new connections are closed');
    });
  }
  // The latest request of each connection, to know whether a refused one was answered already.
  const latest = new WeakMap<Socket, ServerResponse>();
  server.on('request', (req: IncomingMessage, res: ServerResponse) => latest.set(req.socket, res));
  if (limits.bodyIdleTimeoutMs) {
    const idleMs = limits.bodyIdleTimeoutMs;
    server.timeout = idleMs; // each connection's inactivity timer; with a 'timeout' listener Node leaves the decision here
    server.on('timeout', (socket: Socket) => {
      const res = latest.get(socket);
      // Waiting for our answer (an import running), or streaming it: the client is not stalling.
      if (res && !res.writableFinished && res.req.complete) return;
      if (res && !res.writableFinished && !res.headersSent && socket.writable) {
        socket.end(errorAnswer(408, 'invalid_request', `The request body stopped arriving: nothing came for ${idleMs} ms.`));
        socket.destroySoon?.();
        setTimeout(() => socket.destroy(), 1_000).unref();
        return;
      }
      socket.destroy(); // idle between requests, or before the first one (what Node does without a listener)
    });
  }
  server.removeAllListeners('clientError'); // Fastify's own answers in its own shape
  server.on('clientError', (err: NodeJS.ErrnoException, socket: Socket) => {
    if (err.code === 'ECONNRESET' || socket.destroyed) return;
    // A request answered before its body arrived (a 401, say) that then times out gets no second answer.
    const res = latest.get(socket);
    const answered = res !== undefined && res.headersSent && !res.req.complete;
    if (socket.writable && !answered) socket.end(clientErrorAnswer(err, limits.requestTimeoutMs, limits.headersTimeoutMs));
    socket.destroySoon?.();
    setTimeout(() => socket.destroy(), 1_000).unref();
  });
}
