import { readFileSync } from 'node:fs';
import { context, diag, DiagLogLevel, propagation, SpanKind, SpanStatusCode, trace, type Context, type SpanStatus } from '@opentelemetry/api';
import { logs } from '@opentelemetry/api-logs';
import { OTLPTraceExporter as OTLPJsonExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { OTLPTraceExporter as OTLPProtobufExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { defaultResource, resourceFromAttributes } from '@opentelemetry/resources';
import { NodeSDK } from '@opentelemetry/sdk-node';
import {
  AlwaysOnSampler,
  BatchSpanProcessor,
  ParentBasedSampler,
  TraceIdRatioBasedSampler,
  type ReadableSpan,
  type Span,
  type SpanProcessor,
} from '@opentelemetry/sdk-trace';
import type { Config } from '../config.js';
import type { Tracing, TracingLog } from './index.js';
import { setActiveTracing } from './spans.js';

/**
 * The attributes a span may carry when it leaves the process; every other one is removed, whoever
 * set it (a library's next version included). None of them holds a value of a request: no URL
 * with its path's values or query, no address, agent, header, body, key, token or parameter.
 */
export const SPAN_ATTRIBUTES = new Set([
  // The request span (@fastify/otel): the route's pattern, never its path.
  'http.request.method',
  'http.route',
  'http.response.status_code',
  // @fastify/otel's hook and handler spans: which code ran (not `hook.name`, a chain of plugins).
  'fastify.type',
  'hook.callback.name',
  // A query (src/telemetry/spans.ts): its `sql('name', …)` name.
  'db.system.name',
  'db.query.summary',
]);
/** The service's own attributes (counts and outcomes of the jobs), set in src/jobs/. */
const OWN_PREFIX = 'climate_pulse.';

const allowed = (key: string) => SPAN_ATTRIBUTES.has(key) || key.startsWith(OWN_PREFIX);

/**
 * Applies SPAN_ATTRIBUTES to each span as it ends, before any exporter sees it: removes the other
 * attributes, every event (an exception's message and stack may quote a value) and the status's
 * message (the same: an error's text), keeping the status's code.
 */
class AllowedAttributesOnly implements SpanProcessor {
  constructor(private readonly next: SpanProcessor) {}
  onStart(span: Span, parent: Context) {
    this.next.onStart(span, parent);
  }
  onEnding(span: Span) {
    const attributes = span.attributes as Record<string, unknown>;
    for (const key of Object.keys(attributes)) if (!allowed(key)) delete attributes[key];
    span.events.length = 0;
    span.links.length = 0;
    // A server span's 4xx is the client's error, not the service's: its status stays unset (HTTP semantic conventions).
    const status = span.attributes['http.response.status_code'];
    const clientError = span.kind === SpanKind.SERVER && typeof status === 'number' && status < 500;
    (span as { status: SpanStatus }).status = { code: clientError ? SpanStatusCode.UNSET : span.status.code };
    this.next.onEnding?.(span);
  }
  onEnd(span: ReadableSpan) {
    this.next.onEnd(span);
  }
  forceFlush() {
    return this.next.forceFlush();
  }
  shutdown() {
    return this.next.shutdown();
  }
}

function serviceVersion(): string {
  // src/telemetry/ and dist/telemetry/ are both two levels below the package.
  const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };
  return pkg.version;
}

/** At most one line a minute of the SDK's own warnings (an unreachable collector fails every export). */
function throttledDiag(log: TracingLog) {
  let last = 0;
  const warn = (message: string) => {
    const now = Date.now();
    if (now - last < 60_000) return;
    last = now;
    log.warn({ otel: message.slice(0, 300) }, 'traces: the OpenTelemetry SDK reports a problem (at most one line a minute)');
  };
  const none = () => undefined;
  diag.setLogger({ error: warn, warn, info: none, debug: none, verbose: none }, DiagLogLevel.WARN);
}

/** The SDK, started with nothing taken from the environment but what `config` holds (src/config.ts). */
export function startSdk(config: Config['traces'], url: string, log: TracingLog): Tracing {
  throttledDiag(log);
  const exporterOptions = { url, headers: config.otlpHeaders ?? {}, timeoutMillis: 5_000 };
  const exporter = config.otlpProtocol === 'http/json' ? new OTLPJsonExporter(exporterOptions) : new OTLPProtobufExporter(exporterOptions);
  const root = config.sampler === 'parentbased_traceidratio' ? new TraceIdRatioBasedSampler(config.samplerRatio) : new AlwaysOnSampler();
  const processor = new AllowedAttributesOnly(new BatchSpanProcessor({ exporter, exportTimeoutMillis: 5_000 }));
  const sdk = new NodeSDK({
    resource: defaultResource().merge(resourceFromAttributes({ 'service.name': config.serviceName, 'service.version': serviceVersion() })),
    // No host, process or environment detectors: the resource is the service's name and version.
    autoDetectResources: false,
    spanProcessors: [processor],
    // The root of every trace is here: no propagator reads a caller's traceparent, so a request's
    // headers neither join its spans to another trace nor decide whether it is sampled.
    textMapPropagator: null,
    sampler: new ParentBasedSampler({ root }),
    // Traces only: the metrics are Prometheus's (METRICS_PORT), the logs pino's.
    metricReaders: [],
    logRecordProcessors: [],
    instrumentations: [],
  });
  sdk.start();
  const tracer = trace.getTracer('climate-pulse');
  setActiveTracing({ tracer, recordingParent: () => trace.getSpan(context.active())?.isRecording() ?? false });
  return {
    async forceFlush() {
      await processor.forceFlush();
    },
    async shutdown() {
      setActiveTracing(undefined);
      try {
        await sdk.shutdown(); // ends the batch processor: what it holds is exported first
      } finally {
        // The globals the SDK set (its logger provider too, empty): a later start in this process registers its own.
        trace.disable();
        logs.disable();
        context.disable();
        propagation.disable();
        diag.disable();
      }
    },
  };
}
