import { ClimatePulseError } from './errors.js';

export interface RetryOptions {
  /** Retries after the first attempt (default 3; 0 turns retrying off). */
  maxRetries?: number;
  /** First backoff step in ms (default 250); doubles with every retry. */
  baseDelayMs?: number;
  /** Upper bound of one backoff step in ms (default 8000). */
  maxDelayMs?: number;
  /** Longest `Retry-After` the client waits, in ms (default 60000); a longer one is cut to this. */
  maxRetryAfterMs?: number;
}

export interface TransportOptions {
  fetch: typeof globalThis.fetch;
  retry: Required<RetryOptions>;
  /** Per attempt; an attempt that times out counts as a network error (default 30000). */
  timeoutMs: number;
  /** Waits; tests may replace it. */
  sleep?: (ms: number, signal?: AbortSignal | null) => Promise<void>;
  /** Called before each retry, for logging. */
  onRetry?: (info: { attempt: number; delayMs: number; reason: string; method: string; url: string }) => void;
}

export const DEFAULT_RETRY: Required<RetryOptions> = { maxRetries: 3, baseDelayMs: 250, maxDelayMs: 8_000, maxRetryAfterMs: 60_000 };

/** Statuses at which the server did not act on the request (rate limit, overload): safe to repeat. */
const RETRY_STATUSES = new Set([429, 503]);

/**
 * `Retry-After` as milliseconds from `now`: whole seconds or an HTTP date (RFC 9110 10.2.3).
 * Undefined when absent or unreadable; never negative.
 */
export function parseRetryAfter(value: string | null, now = Date.now()): number | undefined {
  if (value === null) return undefined;
  const v = value.trim();
  if (/^\d+$/.test(v)) return Number(v) * 1000;
  if (!/^[A-Za-z]{3}, /.test(v)) return undefined;
  const at = Date.parse(v);
  if (Number.isNaN(at)) return undefined;
  return Math.max(0, at - now);
}

/** Full jitter: a uniform wait between 0 and the exponential step, so clients spread out. */
export function backoffDelay(retry: number, opts: Required<RetryOptions>, random = Math.random): number {
  const step = Math.min(opts.maxDelayMs, opts.baseDelayMs * 2 ** retry);
  return Math.round(random() * step);
}

/**
 * May this request be sent again after the connection failed without an answer? The server may
 * have acted on it. GET changes nothing; PATCH of this API sets fields to given values, so
 * repeating it lands on the same state; a POST only with an Idempotency-Key, which makes the
 * server replay the first answer instead of creating twice.
 */
export function repeatableWithoutAnswer(request: Request): boolean {
  if (request.method === 'GET' || request.method === 'HEAD' || request.method === 'PATCH') return true;
  if (request.method === 'POST') return request.headers.has('idempotency-key');
  return false;
}

function sleepFor(ms: number, signal?: AbortSignal | null): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/**
 * A `fetch` that retries with exponential backoff and jitter: network errors (when the request
 * is repeatable, see above), 429 and 503 (the server did not act; `Retry-After` honoured).
 * Nothing else is retried: another 4xx would fail the same way again. Every attempt sends the
 * very same request, so a POST keeps its Idempotency-Key. Gives up by throwing
 * ClimatePulseError (network_error) or returning the last answer.
 */
export function retryingFetch(opts: TransportOptions): (request: Request) => Promise<Response> {
  const sleep = opts.sleep ?? sleepFor;
  return async (request: Request) => {
    for (let attempt = 1; ; attempt++) {
      const retriesLeft = attempt <= opts.retry.maxRetries;
      const signals = [AbortSignal.timeout(opts.timeoutMs), ...(request.signal ? [request.signal] : [])];
      let response: Response;
      try {
        response = await opts.fetch(new Request(request.clone(), { signal: AbortSignal.any(signals) }));
      } catch (cause) {
        if (request.signal?.aborted) throw request.signal.reason;
        if (retriesLeft && repeatableWithoutAnswer(request)) {
          const delayMs = backoffDelay(attempt - 1, opts.retry);
          opts.onRetry?.({ attempt, delayMs, reason: 'network_error', method: request.method, url: request.url });
          await sleep(delayMs, request.signal);
          continue;
        }
        const what = cause instanceof Error ? `${cause.message}${cause.cause instanceof Error ? ` (${cause.cause.message})` : ''}` : String(cause);
        throw new ClimatePulseError({
          status: 0,
          code: 'network_error',
          message: `${request.method} ${request.url} got no answer after ${attempt} attempt(s): ${what}`,
          requestId: null,
          attempts: attempt,
          cause,
        });
      }
      if (!RETRY_STATUSES.has(response.status) || !retriesLeft) {
        attemptsOf.set(response, attempt);
        return response;
      }
      const told = parseRetryAfter(response.headers.get('retry-after'));
      const delayMs = told === undefined ? backoffDelay(attempt - 1, opts.retry) : Math.min(told, opts.retry.maxRetryAfterMs);
      await response.body?.cancel().catch(() => undefined);
      opts.onRetry?.({ attempt, delayMs, reason: `status ${response.status}`, method: request.method, url: request.url });
      await sleep(delayMs, request.signal);
    }
  };
}

/** How many attempts produced an answer (for the error it may become). */
export const attemptsOf = new WeakMap<Response, number>();
