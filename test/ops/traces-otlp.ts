import { createServer, type IncomingHttpHeaders } from 'node:http';
import { once } from 'node:events';

/** One span as it arrived over OTLP/HTTP JSON, its attributes as a plain object. */
export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  parentSpanId: string;
  name: string;
  kind: number;
  attributes: Record<string, string | number | boolean>;
  status: { code?: number; message?: string };
  events: unknown[];
  start: bigint;
  resource: Record<string, string | number | boolean>;
}

type AnyValue = { stringValue?: string; intValue?: string | number; boolValue?: boolean; doubleValue?: number };
const anyValue = (v: AnyValue) => v.stringValue ?? (v.intValue !== undefined ? Number(v.intValue) : (v.boolValue ?? v.doubleValue ?? NaN));
const attributesOf = (list: { key: string; value: AnyValue }[] = []) => Object.fromEntries(list.map((a) => [a.key, anyValue(a.value)]));

/**
 * A real OTLP/HTTP receiver (POST /v1/traces) on 127.0.0.1: it keeps every request's raw body and
 * headers, and decodes the JSON protocol's into spans.
 */
export async function startOtlpReceiver() {
  const requests: { path: string; headers: IncomingHttpHeaders; body: Buffer }[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      requests.push({ path: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks) });
      if (req.method !== 'POST' || req.url !== '/v1/traces') return void res.writeHead(404).end();
      const json = String(req.headers['content-type']).startsWith('application/json');
      res.writeHead(200, { 'content-type': json ? 'application/json' : 'application/x-protobuf' }).end(json ? '{}' : '');
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as { port: number };
  const spans = (): ReceivedSpan[] =>
    requests
      .filter((r) => r.path === '/v1/traces' && String(r.headers['content-type']).startsWith('application/json'))
      .flatMap((r) =>
        // biome-ignore lint/suspicious/noExplicitAny: OTLP JSON, read field by field
        (JSON.parse(r.body.toString('utf8')).resourceSpans as any[]).flatMap((rs) =>
          // biome-ignore lint/suspicious/noExplicitAny: as above
          (rs.scopeSpans as any[]).flatMap((ss) =>
            // biome-ignore lint/suspicious/noExplicitAny: as above
            (ss.spans as any[]).map((s) => ({
              traceId: s.traceId,
              spanId: s.spanId,
              parentSpanId: s.parentSpanId ?? '',
              name: s.name,
              kind: s.kind,
              attributes: attributesOf(s.attributes),
              status: s.status ?? {},
              events: s.events ?? [],
              start: BigInt(s.startTimeUnixNano),
              resource: attributesOf(rs.resource?.attributes),
            })),
          ),
        ),
      );
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    spans,
    clear: () => void requests.splice(0),
    async close() {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    },
  };
}

/** A span's subtree, as names indented by depth, children in start order: the shape a test can compare exactly. */
export function tree(spans: ReceivedSpan[], root: ReceivedSpan, depth = 0): string[] {
  const children = spans
    .filter((s) => s.parentSpanId === root.spanId && s.traceId === root.traceId)
    .sort((a, b) => (a.start < b.start ? -1 : a.start > b.start ? 1 : 0));
  return [`${'  '.repeat(depth)}${root.name}`, ...children.flatMap((c) => tree(spans, c, depth + 1))];
}
