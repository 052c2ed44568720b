import { randomBytes } from 'node:crypto';
import { isIP } from 'node:net';
import { Webhook } from 'standardwebhooks';
import type { Queryable } from '../db/executor.js';
import {
  disableEndpoint,
  findEndpointById,
  getClaimedDelivery,
  hasSubscribers,
  insertClaimedDelivery,
  insertEndpoint,
  insertEventWithDeliveries,
  settleDelivery,
  type ClaimedDelivery,
} from '../db/repositories/webhooks.js';
import type { Alert } from '../contract/schemas/alerts.js';
import { newId } from './keys.js';

/** The event types an endpoint can subscribe to. `ping` is sent only by `webhooks test`. */
export const WEBHOOK_EVENT_TYPES = ['alert.created', 'action.created', 'action.updated'] as const;
export type WebhookEventType = (typeof WEBHOOK_EVENT_TYPES)[number];

/** Refusals an operator sees as one line. */
export class WebhookError extends Error {}

const MAX_RETRY_AFTER_MS = 24 * 3600e3;

/** `whsec_` + base64 of 32 random bytes, the format `standardwebhooks` reads. */
export const newWebhookSecret = () => `whsec_${randomBytes(32).toString('base64')}`;

const isLoopback = (hostname: string) => {
  const host = hostname.replace(/^\[|\]$/g, '').toLowerCase();
  if (host === 'localhost' || host === '::1') return true;
  return isIP(host) === 4 && host.startsWith('127.');
};

/** https:// to any host; http:// only to loopback (development). Checked when added and before every attempt. */
export function checkWebhookUrl(text: string): URL {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new WebhookError(`not a URL: ${JSON.stringify(text)}`);
  }
  if (text.length > 2048) throw new WebhookError('the URL is longer than 2048 characters');
  if (url.username || url.password) throw new WebhookError('the URL must not carry credentials');
  if (url.protocol === 'https:') return url;
  if (url.protocol === 'http:' && isLoopback(url.hostname)) return url;
  if (url.protocol === 'http:') throw new WebhookError('http:// is allowed only to 127.0.0.0/8, ::1 or localhost; use https://');
  throw new WebhookError(`the URL must be https:// (got ${url.protocol})`);
}

export function parseEventTypes(list: string | undefined): WebhookEventType[] | null {
  if (list === undefined) return null;
  const types = [...new Set(list.split(',').map((t) => t.trim()).filter(Boolean))];
  if (types.length === 0) throw new WebhookError('--events names no event type');
  for (const t of types) {
    if (!(WEBHOOK_EVENT_TYPES as readonly string[]).includes(t)) {
      throw new WebhookError(`unknown event type ${JSON.stringify(t)} (known: ${WEBHOOK_EVENT_TYPES.join(', ')})`);
    }
  }
  return types as WebhookEventType[];
}

export async function addEndpoint(
  db: Queryable,
  orgId: string,
  opts: { url: string; eventTypes: WebhookEventType[] | null; now?: Date },
): Promise<{ id: string; url: string; eventTypes: WebhookEventType[] | null; secret: string }> {
  const url = checkWebhookUrl(opts.url).toString();
  const id = newId('whe');
  const secret = newWebhookSecret();
  await insertEndpoint(db, orgId, { id, url, secret, eventTypes: opts.eventTypes, createdAt: opts.now ?? new Date() });
  return { id, url, eventTypes: opts.eventTypes, secret };
}

const body = (type: string, at: Date, data: unknown, extra: Record<string, unknown> = {}) =>
  JSON.stringify({ type, timestamp: at.toISOString(), data, ...extra });

/**
 * Writes an event to the outbox inside the caller's transaction: one delivery per enabled
 * endpoint of the organization subscribed to `type`. It is sent only if that transaction
 * commits, and it cannot be lost once it has. Returns the event id (the `webhook-id`), or
 * null when no endpoint subscribes. `extra` adds top-level fields beside `data` (the `changes`
 * of `action.updated`).
 */
export async function recordEvent(
  tx: Queryable,
  orgId: string,
  type: WebhookEventType,
  data: unknown,
  at = new Date(),
  extra?: Record<string, unknown>,
): Promise<string | null> {
  const id = newId('msg');
  const deliveries = await insertEventWithDeliveries(tx, orgId, { id, type, payload: body(type, at, data, extra), createdAt: at });
  return deliveries.length > 0 ? id : null;
}

/** Whether an event of `type` would reach any endpoint: lets a caller skip building its data. */
export const isSubscribed = (tx: Queryable, orgId: string, type: WebhookEventType) => hasSubscribers(tx, orgId, type);

/**
 * `alert.created` with the alert as GET /alerts shows it. The fields are copied one by one, so
 * a database row with more columns (a team id, say) cannot widen what leaves the service.
 */
export function recordAlertCreated(tx: Queryable, orgId: string, alert: Alert, at = new Date()) {
  const { id, type, message, weekISO, subteamName, readAt, createdAt } = alert;
  return recordEvent(tx, orgId, 'alert.created', { id, type, message, weekISO, subteamName, readAt, createdAt }, at);
}

/** The three Standard Webhooks headers for one attempt: signed at the attempt's time, same id on every attempt. */
export function signedHeaders(secret: string, msgId: string, payload: string, at = new Date()): Record<string, string> {
  return {
    'webhook-id': msgId,
    'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
    'webhook-signature': new Webhook(secret).sign(msgId, at, payload),
  };
}

export type AttemptResult =
  | { kind: 'ok'; statusCode: number }
  | { kind: 'gone'; statusCode: 410 }
  | { kind: 'retryable'; statusCode: number | null; error: string; retryAfterMs?: number }
  | { kind: 'invalid'; error: string }
  | { kind: 'aborted' };

/** Retry-After as seconds or as an HTTP date; undefined when absent or unreadable. */
export function parseRetryAfter(value: string | null, now = Date.now()): number | undefined {
  if (!value) return undefined;
  const ms = /^\s*\d+\s*$/.test(value) ? Number(value) * 1000 : Date.parse(value) - now;
  return Number.isFinite(ms) ? Math.min(Math.max(ms, 0), MAX_RETRY_AFTER_MS) : undefined;
}

/** One POST of a delivery: no redirects followed, a hard timeout, and `stop` to abandon it at shutdown. */
export async function attemptDelivery(d: ClaimedDelivery, opts: { timeoutMs: number; stop?: AbortSignal }): Promise<AttemptResult> {
  try {
    checkWebhookUrl(d.url);
  } catch (err) {
    return { kind: 'invalid', error: (err as Error).message };
  }
  const timeout = AbortSignal.timeout(opts.timeoutMs);
  const signal = opts.stop ? AbortSignal.any([timeout, opts.stop]) : timeout;
  try {
    const res = await fetch(d.url, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'user-agent': 'climate-pulse-webhooks/1',
        ...signedHeaders(d.secret, d.eventId, d.payload),
      },
      body: d.payload,
      redirect: 'manual',
      signal,
    });
    await res.body?.cancel().catch(() => {}); // the answer's body is not read
    if (res.status >= 200 && res.status < 300) return { kind: 'ok', statusCode: res.status };
    if (res.status === 410) return { kind: 'gone', statusCode: 410 };
    const error = res.status >= 300 && res.status < 400 ? `HTTP ${res.status} (redirects are not followed)` : `HTTP ${res.status}`;
    return { kind: 'retryable', statusCode: res.status, error, retryAfterMs: parseRetryAfter(res.headers.get('retry-after')) };
  } catch (err) {
    if (opts.stop?.aborted) return { kind: 'aborted' };
    if (timeout.aborted) return { kind: 'retryable', statusCode: null, error: `timed out after ${opts.timeoutMs} ms` };
    const cause = (err as { cause?: { code?: string; message?: string } }).cause;
    return { kind: 'retryable', statusCode: null, error: `network error: ${cause?.code ?? cause?.message ?? (err as Error).message}` };
  }
}

/** The wait before the next attempt, or null when `attempts` used the whole schedule. Jitter: +-10%. */
export function retryDelayMs(attempts: number, scheduleMs: number[], retryAfterMs?: number, random = Math.random): number | null {
  if (attempts > scheduleMs.length) return null;
  const planned = Math.round(scheduleMs[attempts - 1] * (0.9 + 0.2 * random()));
  return Math.max(planned, retryAfterMs ?? 0);
}

export type DeliveryOutcome = 'succeeded' | 'retry' | 'failed' | 'endpoint_disabled' | 'released';

/**
 * Records what one attempt did. 2xx: succeeded. 410: the endpoint is disabled and its pending
 * deliveries fail. Anything else: retried on the schedule (no sooner than Retry-After), failed
 * after the last retry or when `final`. Abandoned at shutdown: due again at once.
 */
export async function settleAttempt(
  db: Queryable,
  d: ClaimedDelivery,
  result: AttemptResult,
  opts: { scheduleMs: number[]; final?: boolean },
): Promise<DeliveryOutcome> {
  const settle = (s: Parameters<typeof settleDelivery>[4]) => settleDelivery(db, d.orgId, d.id, d.attempts, s);
  switch (result.kind) {
    case 'ok':
      await settle({ status: 'succeeded', statusCode: result.statusCode, error: null });
      return 'succeeded';
    case 'gone':
      await settle({ status: 'failed', statusCode: 410, error: 'HTTP 410: endpoint disabled' });
      await disableEndpoint(db, d.orgId, d.endpointId, 'HTTP 410 Gone', d.id);
      return 'endpoint_disabled';
    case 'invalid':
      await settle({ status: 'failed', statusCode: null, error: result.error });
      return 'failed';
    case 'aborted':
      await settle({ status: 'pending', retryInMs: 0, statusCode: null, error: 'abandoned at shutdown' });
      return 'released';
    case 'retryable': {
      const delay = opts.final ? null : retryDelayMs(d.attempts, opts.scheduleMs, result.retryAfterMs);
      if (delay === null) {
        await settle({ status: 'failed', statusCode: result.statusCode, error: result.error });
        return 'failed';
      }
      await settle({ status: 'pending', retryInMs: delay, statusCode: result.statusCode, error: result.error });
      return 'retry';
    }
  }
}

/** A delivery whose endpoint was disabled after it was claimed is not sent. */
export async function deliver(
  db: Queryable,
  d: ClaimedDelivery,
  opts: { timeoutMs: number; scheduleMs: number[]; stop?: AbortSignal; final?: boolean },
): Promise<{ outcome: DeliveryOutcome; result: AttemptResult }> {
  const result: AttemptResult = d.enabled ? await attemptDelivery(d, opts) : { kind: 'invalid', error: 'endpoint disabled' };
  return { outcome: await settleAttempt(db, d, result, opts), result };
}

/**
 * `webhooks test`: a `ping` event to one endpoint, attempted once by the caller (not retried)
 * and recorded as a delivery like any other, so it shows in `webhooks deliveries`.
 */
export async function sendPing(db: Queryable, endpointId: string, opts: { timeoutMs: number }) {
  const endpoint = await findEndpointById(db, endpointId);
  if (!endpoint) throw new WebhookError(`no webhook endpoint ${JSON.stringify(endpointId)}`);
  const at = new Date();
  const eventId = newId('msg');
  const deliveryId = await insertClaimedDelivery(
    db,
    endpoint.orgId,
    { id: eventId, type: 'ping', payload: body('ping', at, { endpointId }), createdAt: at },
    endpointId,
    2 * opts.timeoutMs,
  );
  const claimed = await getClaimedDelivery(db, endpoint.orgId, deliveryId);
  const { outcome, result } = await deliver(db, { ...claimed!, enabled: true }, { ...opts, scheduleMs: [], final: true });
  return { endpoint, eventId, deliveryId, outcome, result };
}
