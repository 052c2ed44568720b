import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import cluster from 'node:cluster';
import { readFileSync } from 'node:fs';
import { Server as NetServer, type Socket } from 'node:net';

/**
 * A connection that has just fallen idle may be one its client is writing its next request on
 * right now (a keep-alive client sends it as soon as the previous answer is read). Closing it then
 * loses that request, so during a drain a connection is closed once it has been idle this long
 * (one idle for longer already at the signal, at once); a request it brings first is answered
 * with `Connection: close`.
 */
export const IDLE_LINGER_MS = 1_000;
/**
 * Node accepts one waiting connection per event-loop turn, so a busy process (the embedded
 * database works on its loop) has connections waiting in the kernel, requests and all, that
 * closing the listener would reset. Before it closes, it accepts those waiting then (not those
 * that come after), for this long at most.
 */
export const ACCEPT_WAITING_MAX_MS = 5_000;
const CHECK_EVERY_MS = 50;

interface Conn {
  /** Requests received and not yet answered (pipelining allows several). */
  active: number;
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
   * to come says `Connection: close`, an idle connection is closed once idle IDLE_LINGER_MS.
   * Resolves when every connection has ended.
   */
  stopListening(): Promise<void>;
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
 * stays open after its answer (for the keep-alive timeout, 72 s), so the close never returned.
 * Here: answers from the drain on carry `Connection: close` (Node then ends the connection after
 * it), and a connection that stays idle for IDLE_LINGER_MS is closed. Attach before `listen`.
 */
export function trackConnections(server: Server): ConnectionDrain {
  const conns = new Map<Socket, Conn>();
  const open = new Set<ServerResponse>();
  let draining = false;
  let timer: NodeJS.Timeout | undefined;
  let accepted = 0;

  server.on('connection', (socket: Socket) => {
    accepted++;
    conns.set(socket, { active: 0, idleSince: Date.now(), bytesRead: 0 });
    socket.once('close', () => conns.delete(socket));
  });
  // First among the request listeners, so the header is set before any handler can answer.
  server.prependListener('request', (req: IncomingMessage, res: ServerResponse) => {
    const conn = conns.get(req.socket);
    if (conn) conn.active++;
    if (draining) res.setHeader('connection', 'close');
    open.add(res);
    res.once('close', () => {
      open.delete(res);
      if (conn) {
        conn.active--;
        conn.idleSince = Date.now();
        conn.bytesRead = req.socket.bytesRead;
      }
    });
  });

  const closeIdle = () => {
    const now = Date.now();
    const candidates: Socket[] = [];
    for (const [socket, conn] of conns) {
      if (conn.active > 0) continue;
      // Bytes of a request still arriving (its headers not whole yet) count as activity.
      if (socket.bytesRead !== conn.bytesRead) {
        conn.bytesRead = socket.bytesRead;
        conn.idleSince = now;
      } else if (now - conn.idleSince >= IDLE_LINGER_MS) candidates.push(socket);
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
  };

  const closeConnections = () => {
    if (draining) return;
    draining = true;
    for (const res of open) if (!res.headersSent) res.setHeader('connection', 'close');
    timer = setInterval(closeIdle, CHECK_EVERY_MS);
    timer.unref();
  };

  return {
    begin: closeConnections,
    quiet() {
      draining = false;
      if (timer) clearInterval(timer);
      timer = undefined;
      for (const res of open) if (!res.headersSent) res.removeHeader('connection');
    },
    async stopListening() {
      // Two setImmediates span one poll phase, where a waiting connection is accepted.
      const oneTurn = async () => {
        await new Promise((r) => setImmediate(r));
        await new Promise((r) => setImmediate(r));
      };
      const address = server.address();
      const port = typeof address === 'object' && address && !cluster.isWorker ? address.port : undefined;
      const workerPort = typeof address === 'object' && address && cluster.isWorker ? address.port : undefined;
      const waiting = port === undefined ? 0 : waitingToBeAccepted(port);
      const from = accepted;
      const until = Date.now() + ACCEPT_WAITING_MAX_MS;
      while (waiting !== 0 && server.listening && Date.now() < until) {
        const before = accepted;
        await oneTurn();
        // Where the kernel does not say how many wait: until a turn finds none.
        if (waiting === undefined ? accepted === before : accepted - from >= waiting) break;
      }
      await new Promise<void>((resolve) => {
        const done = () => {
          if (timer) clearInterval(timer);
          resolve();
        };
        if (!server.listening) {
          closeConnections();
          if (conns.size === 0) return done();
          const poll = setInterval(() => conns.size === 0 && (clearInterval(poll), done()), CHECK_EVERY_MS);
          return;
        }
        // net's close, not http's: http's would also close every idle connection at once, losing
        // the requests their clients are writing at this instant (see IDLE_LINGER_MS).
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
