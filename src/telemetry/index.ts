import type { Config } from '../config.js';

/**
 * OpenTelemetry traces (docs/deployment.md, "Traces"): on when OTEL_EXPORTER_OTLP_ENDPOINT or
 * OTEL_EXPORTER_OTLP_TRACES_ENDPOINT is set, or OTEL_TRACES_EXPORTER=otlp; off otherwise, and then
 * the SDK (./sdk.ts) is never loaded. Spans: ./spans.ts (queries, jobs) and src/http/plugins/otel.ts
 * (requests).
 */
export interface Tracing {
  /** Exports the spans ended so far. */
  forceFlush(): Promise<void>;
  /** Exports what is left and stops; spans are plain calls again afterwards. */
  shutdown(): Promise<void>;
}

export type TracingLog = { warn(obj: object, msg: string): void };

/** Where spans go (OTLP over HTTP), or undefined: traces are off. */
export function tracesUrl(config: Config['traces']): string | undefined {
  if (config.tracesExporter === 'none') return undefined;
  if (config.otlpTracesEndpoint) return config.otlpTracesEndpoint;
  if (config.otlpEndpoint) return `${config.otlpEndpoint.replace(/\/+$/, '')}/v1/traces`;
  return config.tracesExporter === 'otlp' ? 'http://localhost:4318/v1/traces' : undefined;
}

/** Starts the SDK when traces are on; one per process (its tracer provider is the process's). */
export async function startTracing(config: Config['traces'], log: TracingLog): Promise<Tracing | undefined> {
  const url = tracesUrl(config);
  if (!url) return undefined;
  const { startSdk } = await import('./sdk.js');
  return startSdk(config, url, log);
}

/** Ends `tracing` within `ms` (a collector that does not answer must not hold a shutdown up). */
export async function stopTracing(tracing: Tracing | undefined, ms: number, log: TracingLog): Promise<void> {
  if (!tracing) return;
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<'late'>((resolve) => {
    timer = setTimeout(() => resolve('late'), ms);
  });
  const outcome = await Promise.race([
    tracing.shutdown().then(
      () => 'done' as const,
      () => 'failed' as const,
    ),
    late,
  ]);
  clearTimeout(timer);
  if (outcome !== 'done') log.warn({ ms }, `traces: the last spans could not be exported (${outcome === 'late' ? 'no answer in time' : 'export failed'})`);
}
