import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import cluster from 'node:cluster';
import { readFileSync } from 'node:fs';
import { Server as NetServer, type Socket } from 'node:net';

/**
 * The keep-alive time a listener tells its clients (`Keep-Alive: timeout=5`, Node's own default),
 * and, during a drain, how long a connection must have been idle before the server closes it.
 *
 * The rule (docs/deployment.md, "Keep-alive and the drain"): in HTTP/1.1 a client may send its
 * next request on an idle connection at the very instant the server closes it, and then cannot
 * tell whether the request was applied (ECONNRESET, "other side closed"). No server-side timing
 * closes that race. So a draining server closes a connection only (1) after an answer that said
 * `Connection: close`, or (2) once it has been idle past the keep-alive time it advertised: a
 * client that honours the hint has closed it or stopped reusing it by then (Node's fetch, undici,
 * 2 s before; Node's http agent 1 s before). The public listener keeps idle connections 72 s
 * itself (longer than a load balancer's 60 s, so that it never closes one first), and tells
 * clients 5 s.
 */
export const KEEP_ALIVE_HINT_S = 5;
export const IDLE_CLOSE_MS = KEEP_ALIVE_HINT_S * 1000;
/**
 * Node accepts one waiting connection per event-loop turn, so a busy process (the embedded
 * database works on its loop) has connections waiting in the kernel, requests and all, that
 * closing the listener would reset. Before it closes, it accepts those waiting then (not those
 * that come after), for this long at most.
 */
export const ACCEPT_WAITING_MAX_MS = 5_000;
const CHECK_EVERY_MS = 50;
/**
 * Before the port closes: no connection reached it (as the kernel sees it: `connectionsTo`), none
 * accepted, and no `Connection: close` answer written for this long (a client told to close
 * reconnects at once, and a connection that reaches the port as it closes is reset by the kernel
 * with its request sent). Waited for QUIET_WAIT_MAX_MS at most. Measured from the events, not from
 * the delay's timers, which a loaded machine runs late. The kernel's view matters with WORKERS: the
 * primary accepts every connection and hands it to a worker, so a connection still on its way to
 * one is in no worker's accepts, and is reset if the port closes meanwhile.
 */
export const SETTLED_MS = 250;
export const QUIET_WAIT_MAX_MS = 2_000;

interface Conn {
  /** Requests received and not yet answered (pipelining allows several). */
  active: number;
  /** Answers written on it: a connection without one has a first request still to come (or unread). */
  answered: number;
  idleSince: number;
  bytesRead: number;
}

export interface ConnectionDrain {
  /**
   * The delay (SHUTDOWN_DELAY_MS) begins: every answer says `Connection: close` and idle
   * connections are closed, so that clients reconnect, through a load balancer that now routes
   * them elsewhere.
   */
  begin(): void;
  /**
   * The end of the delay: answers keep their connections again, so the clients still here settle
   * on open connections and stop opening new ones; a connection opened at the instant the port
   * closes would be reset by the kernel, its request sent and unanswered.
   */
  quiet(): void;
  /**
   * Stops accepting connections, then ends every open one between requests: an answer in flight or
   * to come says `Connection: close`, an idle connection is closed once idle past its keep-alive
   * time (IDLE_CLOSE_MS). Resolves when every connection has ended.
   */
  stopListening(): Promise<void>;
  /**
   * The last resort, at the end of SHUTDOWN_GRACE_MS: closes the connections idle now, however
   * short their idleness (a client may lose a request it sends at this instant). Returns how many.
   */
  closeIdleNow(): number;
}

/**
 * A cluster worker whose port stays open after it stopped listening (the other workers still
 * serve it, in a rolling restart) waits this long at most before its answers close their
 * connections.
 */
export const PRIMARY_CLOSE_WAIT_MS = 2_000;

/** The last part of SHUTDOWN_DELAY_MS (half of it at most) in which answers keep their connections. */
export const QUIET_MAX_MS = 1_000;

/**
 * Lets a listener end under traffic. Node's `server.close()` closes the connections idle at that
 * instant and then waits for the others, but a keep-alive connection whose request was in flight
 * stays open after its answer (for the keep-alive timeout, 72 s), so the close never returned; and
 * closing an idle connection races with a request its client sends on it at that instant.
 * Here: answers from the drain on carry `Connection: close` (Node then ends the connection after
 * it), and a connection idle past its keep-alive time (`idleCloseMs`) is closed. Attach before
 * `listen`. `keepAliveHintS`: the `Keep-Alive: timeout=` this listener advertises in place of
 * Node's (which says the server's own keepAliveTimeout).
 */
export function trackConnections(server: Server, opts: { keepAliveHintS?: number } = {}): ConnectionDrain {
  const conns = new Map<Socket, Conn>();
  const open = new Set<ServerResponse>();
  const hint = opts.keepAliveHintS;
  const idleCloseMs = (hint ?? Math.floor(server.keepAliveTimeout / 1000)) * 1000;
  /** Answers say `Connection: close`. */
  let draining = false;
  let timer: NodeJS.Timeout | undefined;
  let accepted = 0;

  /** When the last connection was accepted, and the last answer saying `Connection: close` was written. */
  let lastAcceptAt = 0;
  let lastCloseAnswerAt = 0;
  /** The delay's quiet last part ran: without a delay the port closes at once, as before. */
  let quieted = false;
  /**
   * When a connection last reached the port, as the kernel sees it (Linux): an arrival this process
   * has not accepted yet counts too, such as one in the kernel's queue or, with WORKERS, one the
   * primary accepted and is still handing to a worker (which a worker's own accepts never show).
   */
  let lastArrivalAt = 0;
  let arrivals: NodeJS.Timeout | undefined;
  let seen: Set<string> | undefined;
  let arrivalPort: number | undefined;
  /** Reads the kernel's connections to the port; true when one is there that was not at the last read. */
  const pollArrivals = (): boolean => {
    if (arrivalPort === undefined || seen === undefined) return false;
    const now = connectionsTo(arrivalPort) ?? new Set<string>();
    let arrived = false;
    for (const key of now) if (!seen.has(key)) arrived = true;
    if (arrived) lastArrivalAt = Date.now();
    seen = now;
    return arrived;
  };
  const watchArrivals = () => {
    const address = server.address();
    arrivalPort = typeof address === 'object' && address ? address.port : undefined;
    seen = arrivalPort === undefined ? undefined : connectionsTo(arrivalPort);
    if (seen === undefined || arrivals) return;
    arrivals = setInterval(pollArrivals, ARRIVALS_EVERY_MS);
    arrivals.unref();
  };
  server.on('connection', (socket: Socket) => {
    accepted++;
    lastAcceptAt = Date.now();
    conns.set(socket, { active: 0, answered: 0, idleSince: Date.now(), bytesRead: 0 });
    socket.once('close', () => conns.delete(socket));
  });
  // First among the request listeners, so the header is set before any handler can answer.
  server.prependListener('request', (req: IncomingMessage, res: ServerResponse) => {
    const conn = conns.get(req.socket);
    if (conn) conn.active++;
    if (draining) res.setHeader('connection', 'close');
    else sayKeepAlive(res);
    open.add(res);
    res.once('finish', () => {
      if (/\bclose\b/i.test(String(res.getHeader('connection') ?? '')) || !res.shouldKeepAlive) lastCloseAnswerAt = Date.now();
    });
    res.once('close', () => {
      open.delete(res);
      if (conn) {
        conn.active--;
        conn.answered++;
        conn.idleSince = Date.now();
        conn.bytesRead = req.socket.bytesRead;
      }
    });
  });
  /** The hint in place of Node's, on an answer that keeps its connection (HTTP/1.1, the client did not ask to close). */
  const sayKeepAlive = (res: ServerResponse) => {
    if (hint !== undefined && res.req.httpVersion === '1.1' && !/\bclose\b/i.test(res.req.headers.connection ?? ''))
      res.setHeader('keep-alive', `timeout=${hint}`);
  };
  const sayClose = (res: ServerResponse) => {
    res.setHeader('connection', 'close');
    res.removeHeader('keep-alive');
  };

  /** Closes the connections idle for `minIdleMs` at least (none with a request in flight or arriving). */
  const closeIdle = (minIdleMs: number, evenUnanswered = false) => {
    const now = Date.now();
    const candidates: Socket[] = [];
    for (const [socket, conn] of conns) {
      // Never a connection before its first answer: on a loaded machine its request may be waiting
      // unread in the kernel; one that sends nothing gets the headers deadline's 408.
      // (At the grace's end, even those: the process would otherwise be cut off with them.)
      if (conn.active > 0 || (conn.answered === 0 && !evenUnanswered)) continue;
      // Bytes of a request still arriving (its headers not whole yet) count as activity.
      if (socket.bytesRead !== conn.bytesRead) {
        conn.bytesRead = socket.bytesRead;
        conn.idleSince = now;
      } else if (now - conn.idleSince >= minIdleMs) candidates.push(socket);
    }
    // Timers run before the poll phase: after a blocked loop, a request may be waiting unread.
    // setImmediate runs after that phase has read it, so such a connection is seen busy.
    if (candidates.length) {
      setImmediate(() => {
        for (const socket of candidates) {
          const conn = conns.get(socket);
          if (conn && conn.active === 0 && socket.bytesRead === conn.bytesRead) socket.destroy();
        }
      });
    }
    return candidates.length;
  };
  /** From the drain's start to its end: connections idle past their keep-alive time go. */
  const watchIdle = () => {
    timer ??= setInterval(() => closeIdle(idleCloseMs), CHECK_EVERY_MS);
    timer.unref();
  };

  const closeConnections = () => {
    draining = true;
    for (const res of open) if (!res.headersSent) sayClose(res);
    watchIdle();
  };

  return {
    begin: closeConnections,
    quiet() {
      draining = false;
      quieted = true;
      watchArrivals();
      for (const res of open) {
        if (res.headersSent) continue;
        res.removeHeader('connection');
        sayKeepAlive(res);
      }
    },
    closeIdleNow: () => closeIdle(0, true),
    async stopListening() {
      watchIdle();
      const address = server.address();
      const port = typeof address === 'object' && address && !cluster.isWorker ? address.port : undefined;
      const workerPort = typeof address === 'object' && address && cluster.isWorker ? address.port : undefined;
      // Two setImmediates span one poll phase, where a waiting connection is accepted.
      const oneTurn = async () => {
        await new Promise((r) => setImmediate(r));
        await new Promise((r) => setImmediate(r));
      };
      const settleUntil = Date.now() + QUIET_WAIT_MAX_MS;
      for (;;) {
        // The clients settle on the connections they have: none arriving, none told to reconnect.
        while (quieted && server.listening && Date.now() < settleUntil) {
          pollArrivals();
          if (Date.now() - Math.max(lastAcceptAt, lastCloseAnswerAt, lastArrivalAt) >= SETTLED_MS) break;
          await new Promise((r) => setTimeout(r, 10));
        }
        // Connections the kernel already holds for this process are accepted (their requests were sent).
        const waiting = port === undefined ? 0 : waitingToBeAccepted(port);
        const from = accepted;
        const until = Date.now() + ACCEPT_WAITING_MAX_MS;
        while (waiting !== 0 && server.listening && Date.now() < until) {
          const before = accepted;
          await oneTurn();
          // Where the kernel does not say how many wait: until a turn finds none.
          if (waiting === undefined ? accepted === before : accepted - from >= waiting) break;
        }
        // The last look, in the same turn as the close: a connection that reached the port meanwhile
        // sends this back to settling (it is accepted first), within the settle bound.
        if (!quieted || !server.listening || Date.now() >= settleUntil || !pollArrivals()) break;
      }
      await new Promise<void>((resolve) => {
        if (arrivals) clearInterval(arrivals);
        const done = () => {
          if (timer) clearInterval(timer);
          resolve();
        };
        if (!server.listening) {
          closeConnections();
          if (conns.size === 0) return done();
          const poll = setInterval(() => {
            if (conns.size > 0) return;
            clearInterval(poll);
            done();
          }, CHECK_EVERY_MS);
          return;
        }
        // net's close, not http's: http's would also close every idle connection at once, losing
        // the requests their clients are writing at this instant (see KEEP_ALIVE_HINT_S).
        NetServer.prototype.close.call(server, () => done());
        // Only once the port is closed: a client told to close its connection before would open
        // a new one, which the closing port could reset. In a cluster the primary holds the port
        // until its last worker has left it, and resets the connections it accepted meanwhile.
        if (workerPort === undefined) closeConnections();
        else void untilNotListening(workerPort, PRIMARY_CLOSE_WAIT_MS).then(closeConnections);
      });
    },
  };
}

/** How often the kernel's table of connections is read while the clients settle (Linux). */
const ARRIVALS_EVERY_MS = 10;

/**
 * Linux: the connections to local `port` that the kernel holds (handshake done or under way), each
 * as its remote address and port; undefined where /proc/net/tcp cannot be read. Accepted or not,
 * and by whichever process: in a cluster the primary accepts and hands each one to a worker.
 */
export function connectionsTo(port: number): Set<string> | undefined {
  let found: Set<string> | undefined;
  for (const file of ['/proc/net/tcp', '/proc/net/tcp6']) {
    let text: string;
    try {
      text = readFileSync(file, 'utf8');
    } catch {
      continue;
    }
    found ??= new Set();
    for (const line of text.split('\n').slice(1)) {
      const [, local, remote, state] = line.trim().split(/\s+/);
      // 01 ESTABLISHED, 03 SYN_RECV (a handshake under way).
      if ((state !== '01' && state !== '03') || !local || parseInt(local.slice(local.lastIndexOf(':') + 1), 16) !== port) continue;
      found.add(remote);
    }
  }
  return found;
}

/** Resolves once nothing listens on `port` (Linux; elsewhere at once), or after `maxMs`. */
async function untilNotListening(port: number, maxMs: number) {
  const until = Date.now() + maxMs;
  while (Date.now() < until && waitingToBeAccepted(port, true) !== undefined) await new Promise((r) => setTimeout(r, CHECK_EVERY_MS));
}

/**
 * Linux: how many connections wait in the accept queue of the listening socket on `port` (the
 * rx_queue of a LISTEN row in /proc/net/tcp and tcp6); undefined where that cannot be read (and, with
 * `onlyIfListening`, when nothing listens on `port`). In a
 * cluster worker the primary accepts, so the question does not arise there.
 */
export function waitingToBeAccepted(port: number, onlyIfListening = false): number | undefined {
  let found: number | undefined;
  let listening = false;
  for (const file of ['/proc/net/tcp', '/proc/net/tcp6']) {
    let text: string;
    try {
      text = readFileSync(file, 'utf8');
    } catch {
      continue;
    }
    found ??= 0;
    for (const line of text.split('\n').slice(1)) {
      const [, local, , state, queues] = line.trim().split(/\s+/);
      if (state !== '0A' || !local || parseInt(local.slice(local.lastIndexOf(':') + 1), 16) !== port) continue;
      listening = true;
      found += parseInt(queues.slice(queues.indexOf(':') + 1), 16);
    }
  }
  return onlyIfListening && !listening ? undefined : found;
}
