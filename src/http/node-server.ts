import { randomUUID } from 'node:crypto';
import { STATUS_CODES, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { BlockList, isIP, type Socket } from 'node:net';
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
  /**
   * Open connections at once from one remote address (the socket's, never a forwarded one);
   * further ones from it are closed as they arrive. Addresses for which `exempt` is true (the
   * trusted proxies, which carry many clients' connections) count only towards `maxConnections`.
   */
  maxConnectionsPerAddress?: number;
  exempt?: (address: string) => boolean;
  /**
   * At `maxConnections`, a new connection displaces the oldest one that has not yet sent a whole
   * request head, instead of being refused (the operator listener: there every request is
   * authenticated on its head, so connections that never send one are the only ones a client
   * without the token can hold).
   */
  displaceHeadless?: boolean;
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
  const check = server as Server & { connectionsCheckingInterval: number };
  if (limits.requestTimeoutMs !== undefined) {
    server.requestTimeout = limits.requestTimeoutMs;
    // Node's default (60 s) would outlast a shorter request timeout.
    server.headersTimeout = Math.min(server.headersTimeout || 60_000, limits.requestTimeoutMs);
    // Node checks deadlines every 30 s by default, so a 30 s timeout fired after 30-60 s.
    check.connectionsCheckingInterval = Math.min(CHECK_EVERY_MS, limits.requestTimeoutMs);
  }
  if (limits.headersTimeoutMs !== undefined) {
    // Node counts it from the connection's first byte (or from its opening), so a silent connection times out too.
    server.headersTimeout = Math.min(limits.headersTimeoutMs, limits.requestTimeoutMs ?? Infinity);
    check.connectionsCheckingInterval = Math.min(check.connectionsCheckingInterval, CHECK_EVERY_MS, limits.headersTimeoutMs);
  }
  limitConnections(server, limits);
  // The latest request of each connection, to know whether a refused one was answered already.
  const latest = new WeakMap<Socket, ServerResponse>();
  /** The bytes a connection had read when its latest answer was written whole: more since is the next request's head. */
  const readAtAnswer = new WeakMap<Socket, number>();
  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    latest.set(req.socket, res);
    res.once('finish', () => readAtAnswer.set(req.socket, req.socket.bytesRead));
  });
  if (limits.bodyIdleTimeoutMs) {
    const idleMs = limits.bodyIdleTimeoutMs;
    server.timeout = idleMs; // each connection's inactivity timer; with a 'timeout' listener Node leaves the decision here
    server.on('timeout', (socket: Socket) => {
      const res = latest.get(socket);
      // Waiting for our answer (an import running), or streaming it: the client is not stalling.
      if (res && !res.writableFinished && res.req.complete) return;
      // A request head on its way (or none yet on a new connection) belongs to the headers deadline,
      // whose 408 Node's checker sends: closing here first lost that answer whenever this timer fired
      // before the checker's next round (the operator listener under load, issue 43's flaky test).
      const headPending = res === undefined || (res.writableFinished && socket.bytesRead > (readAtAnswer.get(socket) ?? 0));
      if (headPending && server.headersTimeout > 0) return;
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
    const answered = res?.headersSent && !res.req.complete;
    // Before a request's head arrived whole, a timeout is the headers' deadline, if that is the shorter one.
    const headersPending = res === undefined || res.writableFinished;
    const headersMs = headersPending && server.headersTimeout < (limits.requestTimeoutMs ?? Infinity) ? server.headersTimeout : undefined;
    if (socket.writable && !answered)
      socket.end(clientErrorAnswer(err, headersMs === undefined ? limits.requestTimeoutMs : undefined, headersMs ?? limits.headersTimeoutMs));
    socket.destroySoon?.();
    setTimeout(() => socket.destroy(), 1_000).unref();
  });
}

/**
 * The connection caps: in all (`maxConnections`), per remote address, and, on a listener that
 * displaces, the oldest connection still without a whole request head making room for a new one.
 * A refused connection is closed without an answer (nothing of a request has been read yet), as
 * Node closes one past `server.maxConnections`; each kind is logged once a minute at most.
 */
function limitConnections(server: Server, limits: NodeServerLimits) {
  const { maxConnections, maxConnectionsPerAddress, displaceHeadless } = limits;
  if (!maxConnections && !maxConnectionsPerAddress) return;
  const warnedAt = new Map<string, number>();
  const warn = (kind: string, obj: object, msg: string) => {
    if (Date.now() - (warnedAt.get(kind) ?? 0) < 60_000) return;
    warnedAt.set(kind, Date.now());
    limits.log?.warn(obj, msg);
  };
  if (maxConnections && !displaceHeadless) {
    server.maxConnections = maxConnections; // Node closes the ones past it before they reach JavaScript
    server.on('drop', () => warn('all', { maxConnections }, 'connection limit reached; new connections are closed'));
  }
  const perAddress = new Map<string, number>();
  /** Connections that have not yet sent a whole request head, oldest first (a Set keeps insertion order). */
  const headless = new Set<Socket>();
  let open = 0;
  server.on('request', (req: IncomingMessage) => headless.delete(req.socket));
  server.on('connection', (socket: Socket) => {
    const address = socket.remoteAddress === undefined ? undefined : normalizeAddress(socket.remoteAddress);
    const counted = address !== undefined && maxConnectionsPerAddress !== undefined && !limits.exempt?.(address);
    if (counted) {
      const n = perAddress.get(address) ?? 0;
      if (n >= maxConnectionsPerAddress) {
        warn('address', { address, maxConnectionsPerAddress }, 'connection limit of one address reached; its new connections are closed');
        socket.destroy();
        return;
      }
      perAddress.set(address, n + 1);
    }
    if (displaceHeadless && maxConnections) {
      if (open >= maxConnections) {
        const oldest = headless.values().next().value;
        if (oldest === undefined) {
          warn('all', { maxConnections }, 'connection limit reached; new connections are closed');
          if (counted) release(address);
          socket.destroy();
          return;
        }
        warn('displaced', { maxConnections }, 'connection limit reached; connections that sent no whole request head make room for new ones');
        headless.delete(oldest);
        oldest.destroy();
      }
      open++;
      headless.add(socket);
    }
    socket.once('close', () => {
      if (counted) release(address);
      if (displaceHeadless && maxConnections) {
        open--;
        headless.delete(socket);
      }
    });
  });
  const release = (address: string) => {
    const n = (perAddress.get(address) ?? 1) - 1;
    if (n <= 0) perAddress.delete(address);
    else perAddress.set(address, n);
  };
}

/** `::ffff:10.0.0.7` (an IPv4 client of a dual-stack listener) is the address 10.0.0.7. */
export function normalizeAddress(address: string): string {
  return /^::ffff:\d+\.\d+\.\d+\.\d+$/i.test(address) ? address.slice(7) : address;
}

/** A test for the addresses of TRUST_PROXY (addresses and CIDRs, as src/config.ts checks them). */
export function addressMatcher(entries: string[] | undefined): ((address: string) => boolean) | undefined {
  if (!entries?.length) return undefined;
  const list = new BlockList();
  for (const entry of entries) {
    const [raw, prefix] = entry.split('/');
    const address = normalizeAddress(raw);
    const type = isIP(address) === 6 ? 'ipv6' : 'ipv4';
    const bits = prefix === undefined ? undefined : Number(prefix) - (address !== raw ? 96 : 0);
    if (bits === undefined) list.addAddress(address, type);
    else list.addSubnet(address, bits, type);
  }
  return (address: string) => {
    const type = isIP(address) === 6 ? 'ipv6' : 'ipv4';
    return list.check(address, type);
  };
}
