import { createServer, request as httpRequest, type IncomingHttpHeaders, type Server } from 'node:http';
import { createServer as createTcpServer, connect, type AddressInfo, type Socket } from 'node:net';
import type { FastifyInstance } from 'fastify';

/** Makes the app listen on a free port of 127.0.0.1; returns its base URL. */
export async function listen(app: FastifyInstance): Promise<string> {
  await app.listen({ host: '127.0.0.1', port: 0 });
  return `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
}

export interface SeenRequest {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
}

/**
 * An HTTP proxy in front of `target`. Each request first takes the next canned answer of
 * `script` (status, headers, body), if any is left; otherwise it is forwarded. Records every request.
 */
export async function scriptedProxy(
  target: string,
  script: { status: number; headers?: Record<string, string>; body?: unknown }[] = [],
): Promise<{ url: string; seen: SeenRequest[]; script: typeof script; close(): Promise<void> }> {
  const seen: SeenRequest[] = [];
  const upstream = new URL(target);
  const server: Server = createServer((req, res) => {
    seen.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers });
    const canned = script.shift();
    if (canned) {
      req.resume();
      res.writeHead(canned.status, { 'content-type': 'application/json', 'x-request-id': `proxy-${seen.length}`, ...canned.headers });
      res.end(canned.body === undefined ? '' : JSON.stringify(canned.body));
      return;
    }
    const out = httpRequest({ host: upstream.hostname, port: upstream.port, method: req.method, path: req.url, headers: req.headers }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    });
    req.pipe(out);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    seen,
    script,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())).then(() => undefined),
  };
}

/**
 * A TCP proxy in front of `target` that can lose an answer: while `dropNextPostAnswer` is set,
 * the first bytes the server sends back for a POST are swallowed and the client's connection is
 * destroyed, after the server has handled (and committed) the request. Records the raw requests.
 */
export async function lossyProxy(target: string) {
  const upstream = new URL(target);
  const state = { dropNextPostAnswer: false, dropped: 0, requests: [] as string[] };
  const sockets = new Set<Socket>();
  const server = createTcpServer((client) => {
    const server = connect(Number(upstream.port), upstream.hostname);
    sockets.add(client).add(server);
    let armed = false;
    client.on('data', (chunk) => {
      const text = chunk.toString('latin1');
      if (/^[A-Z]+ \S+ HTTP\/1\.1\r\n/.test(text)) {
        state.requests.push(text);
        if (text.startsWith('POST ') && state.dropNextPostAnswer) armed = true;
      }
      server.write(chunk);
    });
    server.on('data', (chunk) => {
      if (armed) {
        armed = false;
        state.dropNextPostAnswer = false;
        state.dropped++;
        client.destroy();
        server.destroy();
        return;
      }
      client.write(chunk);
    });
    const end = () => {
      client.destroy();
      server.destroy();
      sockets.delete(client);
      sockets.delete(server);
    };
    client.on('close', end).on('error', end);
    server.on('close', end).on('error', end);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    state,
    async close() {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
