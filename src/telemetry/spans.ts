import type { Attributes, Span, Tracer } from '@opentelemetry/api';

/**
 * The spans the service makes itself (queries, jobs), as plain calls while traces are off: nothing
 * of OpenTelemetry is loaded then (this file imports only its types), and each helper is one test
 * of `active`. startTracing (./index.ts) sets it when traces are on.
 *
 * What a span may hold is decided in ./sdk.ts (an allow-list of attributes, applied to every span
 * before export); the attributes set here are in it.
 */
interface Active {
  tracer: Tracer;
  /** The active span, if it records (a sampled trace). */
  recordingParent(): boolean;
}

let active: Active | undefined;

export function setActiveTracing(next: Active | undefined) {
  active = next;
}

/** The SpanStatusCode.ERROR of the API, without loading it. */
const ERROR = 2;
/** SpanKind.CLIENT. */
const CLIENT = 2;

/**
 * Runs `fn` in a span named `name` (a job's run, a webhook attempt); the span ends when `fn` settles,
 * with the status ERROR when it throws (and no message: an error's text may hold a value).
 */
export function inSpan<T>(name: string, fn: (span?: Span) => Promise<T>, attributes?: Attributes): Promise<T> {
  if (!active) return fn();
  return active.tracer.startActiveSpan(name, { attributes }, async (span) => {
    try {
      return await fn(span);
    } catch (err) {
      span.setStatus({ code: ERROR });
      throw err;
    } finally {
      span.end();
    }
  });
}

/**
 * A database query's span, named by its `sql('name', …)` name; never its text's values or its
 * parameters. Only inside a span that records (a request, a job): a query outside them (a poll, a
 * purge timer, migrations) would otherwise make a trace of one span every time it runs.
 */
export function querySpan<T>(name: string, fn: () => Promise<T>): Promise<T> {
  if (!active?.recordingParent()) return fn();
  return active.tracer.startActiveSpan(name, { kind: CLIENT, attributes: { 'db.system.name': 'postgresql', 'db.query.summary': name } }, async (span) => {
    try {
      return await fn();
    } catch (err) {
      span.setStatus({ code: ERROR });
      throw err;
    } finally {
      span.end();
    }
  });
}

/** A transaction's span, its queries inside it: the time between them (and, embedded, waiting for the one connection) shows. */
export function transactionSpan<T>(fn: () => Promise<T>): Promise<T> {
  return active?.recordingParent() ? inSpan('db.transaction', fn, { 'db.system.name': 'postgresql' }) : fn();
}
