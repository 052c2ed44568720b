import { performance } from 'node:perf_hooks';

/** One request of a client loop: when it was sent and answered (ms on performance.now()), and how. */
export interface Sent {
  client: number;
  seq: number;
  sentAt: number;
  doneAt: number;
  status?: number;
  body?: string;
  /** Set when no answer came: the fetch failed (refused, reset, closed without an answer). */
  error?: string;
}

export interface Traffic {
  log: Sent[];
  /** Answers received so far. */
  answered(): number;
  /** Stops the loops after their current request and waits for them. */
  stop(): Promise<Sent[]>;
}

/**
 * `clients` loops, each sending its next request as soon as the previous one is answered, through
 * Node's `fetch` (which keeps its connections open, like most client libraries and load balancers).
 * With `stopOnError`, a loop ends at its first failed fetch (the port closed); otherwise it goes on.
 * `pauseMs` is a client's think time between an answer and its next request (0: none).
 * Bounded: every loop ends by `maxMs` at the latest.
 */
export function runClients(
  clients: number,
  send: (client: number, seq: number) => Promise<Response>,
  opts: { stopOnError?: boolean; maxMs?: number; pauseMs?: number } = {},
): Traffic {
  const log: Sent[] = [];
  let stopped = false;
  const deadline = performance.now() + (opts.maxMs ?? 60_000);
  const loop = async (client: number) => {
    for (let seq = 0; !stopped && performance.now() < deadline; seq++) {
      const entry: Sent = { client, seq, sentAt: performance.now(), doneAt: 0 };
      log.push(entry);
      try {
        const res = await send(client, seq);
        entry.body = await res.text();
        entry.status = res.status;
      } catch (err) {
        entry.error = String((err as { cause?: unknown }).cause ?? err);
      }
      entry.doneAt = performance.now();
      if (entry.error && opts.stopOnError) return;
      // A refused connection answers at once: a short pause keeps a failing loop from spinning.
      if (entry.error) await new Promise((r) => setTimeout(r, 20));
      else if (opts.pauseMs) await new Promise((r) => setTimeout(r, opts.pauseMs));
    }
  };
  const loops = Array.from({ length: clients }, (_, i) => loop(i));
  return {
    log,
    answered: () => log.filter((e) => e.status !== undefined).length,
    async stop() {
      stopped = true;
      await Promise.all(loops);
      return log;
    },
  };
}

export const waitUntil = async (check: () => boolean, ms = 15_000, every = 50) => {
  const end = performance.now() + ms;
  while (!check() && performance.now() < end) await new Promise((r) => setTimeout(r, every));
  return check();
};
