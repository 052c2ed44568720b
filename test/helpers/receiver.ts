import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from 'node:http';
import { once } from 'node:events';

export interface Received {
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
  at: number;
  /** The status answered (null: left hanging). */
  status: number | null;
}

/** What the receiver answers for one request: a status (and headers), or 'hang' to never answer. */
export type Answer = number | { status: number; headers?: Record<string, string> } | 'hang';

/**
 * A real HTTP receiver on 127.0.0.1 that records every request. `script(path, n, body)` chooses
 * the answer to the n-th request (0-based) on that path; the default is 200.
 */
export async function startReceiver(script: (path: string, n: number, body: string) => Answer = () => 200, port = 0) {
  const received: Received[] = [];
  const hanging = new Set<ServerResponse>();
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      const path = req.url ?? '/';
      const n = received.filter((r) => r.path === path).length;
      const body = Buffer.concat(chunks).toString('utf8');
      const answer = script(path, n, body);
      const status = answer === 'hang' ? null : typeof answer === 'number' ? answer : answer.status;
      received.push({ path, headers: req.headers, body, at: Date.now(), status });
      if (answer === 'hang') {
        hanging.add(res);
        return;
      }
      res.writeHead(status!, typeof answer === 'number' ? {} : answer.headers).end('ok');
    });
  });
  server.listen(port, '127.0.0.1');
  await once(server, 'listening');
  const address = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${address.port}`,
    port: address.port,
    received,
    on: (path: string) => received.filter((r) => r.path === path),
    async close() {
      for (const res of hanging) res.destroy();
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    },
  };
}

export type Receiver = Awaited<ReturnType<typeof startReceiver>>;

export async function waitFor(check: () => boolean | Promise<boolean>, ms = 15_000): Promise<boolean> {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    if (await check()) return true;
    await new Promise((r) => setTimeout(r, 25));
  }
  return check();
}
