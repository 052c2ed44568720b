import { randomBytes } from 'node:crypto';
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { BlockList, isIP, type LookupFunction } from 'node:net';
import { Webhook } from 'standardwebhooks';
import type { DatabaseExecutor, Queryable } from '../db/executor.js';
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
import type { WebhookEventBody, WebhookEventName } from '../contract/schemas/webhook-events.js';
import { newId } from './ids.js';
import { ApiError, invalid } from '../contract/errors.js';

/** The event types an endpoint can subscribe to. `ping` is sent only by `webhooks test`. */
export const WEBHOOK_EVENT_TYPES = ['alert.created', 'action.created', 'action.updated'] as const;
export type WebhookEventType = (typeof WEBHOOK_EVENT_TYPES)[number];

const MAX_RETRY_AFTER_MS = 24 * 3600e3;

/** `whsec_` + base64 of 32 random bytes, the format `standardwebhooks` reads. */
export const newWebhookSecret = () => `whsec_${randomBytes(32).toString('base64')}`;

/**
 * Addresses a webhook may never reach (SSRF): the service's own host, its private networks, the
 * cloud metadata service, and every special-purpose range (docs/security.md). IPv6 forms that carry
 * an IPv4 address (mapped, SIIT-translated, compatible, NAT64, 6to4) are judged by that address
 * first; an IPv6 address outside global unicast (2000::/3) is refused whatever it carries.
 */
const REFUSED_V4: [string, number, string][] = [
  ['0.0.0.0', 8, 'unspecified'],
  ['10.0.0.0', 8, 'private'],
  ['100.64.0.0', 10, 'private (shared)'],
  ['127.0.0.0', 8, 'loopback'],
  ['169.254.0.0', 16, 'link-local'],
  ['172.16.0.0', 12, 'private'],
  ['192.0.0.0', 24, 'reserved'],
  ['192.0.2.0', 24, 'reserved'],
  ['192.88.99.0', 24, 'reserved'],
  ['192.168.0.0', 16, 'private'],
  ['198.18.0.0', 15, 'reserved'],
  ['198.51.100.0', 24, 'reserved'],
  ['203.0.113.0', 24, 'reserved'],
  ['224.0.0.0', 4, 'multicast'],
  ['240.0.0.0', 4, 'reserved'],
];
const REFUSED_V6: [string, number, string][] = [
  ['::', 128, 'unspecified'],
  ['::1', 128, 'loopback'],
  ['fc00::', 7, 'private'],
  ['fe80::', 10, 'link-local'],
  ['fec0::', 10, 'private'],
  ['ff00::', 8, 'multicast'],
  ['100::', 64, 'reserved'],
  ['2001:db8::', 32, 'reserved'],
  ['2001::', 23, 'reserved'],
  // Local-use NAT64 (RFC 8215): its prefix length, so where an IPv4 address sits, is the network's own.
  ['64:ff9b:1::', 48, 'private'],
  ['::ffff:0:0:0', 96, 'reserved'], // SIIT, IPv4-translated (RFC 2765); its IPv4 is judged first
  ['3fff::', 20, 'reserved'], // documentation (RFC 9637)
  ['5f00::', 16, 'reserved'], // SRv6 SIDs (RFC 9602)
];
/** Global unicast: every public IPv6 address is in it (the ranges above carve out of it). */
const GLOBAL_UNICAST = new BlockList();
GLOBAL_UNICAST.addSubnet('2000::', 3, 'ipv6');
const blocks = new Map<string, BlockList>();
for (const [net, prefix, kind] of [...REFUSED_V4.map((r) => [...r, 'ipv4'] as const), ...REFUSED_V6.map((r) => [...r, 'ipv6'] as const)]) {
  const list = blocks.get(kind) ?? new BlockList();
  list.addSubnet(net, prefix, net.includes(':') ? 'ipv6' : 'ipv4');
  blocks.set(kind, list);
}

/** The 8 groups of an IPv6 address (already valid), as numbers. */
function ipv6Groups(ip: string): number[] {
  let text = ip.toLowerCase().replace(/%.*$/, '');
  const v4 = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (v4) {
    const [a, b, c, d] = v4[1].split('.').map(Number);
    text = `${text.slice(0, -v4[1].length)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head, tail] = text.includes('::') ? text.split('::') : [text, undefined];
  const h = head ? head.split(':') : [];
  const t = tail === undefined ? [] : tail ? tail.split(':') : [];
  const zeros = tail === undefined ? [] : Array(8 - h.length - t.length).fill('0');
  return [...h, ...zeros, ...t].map((g) => parseInt(g, 16));
}

/**
 * The IPv4 address an IPv6 address carries, if any, and whether connecting to the IPv6 form
 * reaches that IPv4 host (mapped, compatible, NAT64, 6to4) or not (SIIT-translated, refused anyway).
 */
function embeddedIpv4(ip: string): { ipv4: string; reachesIt: boolean } | null {
  const g = ipv6Groups(ip);
  const v4 = (hi: number, lo: number, reachesIt = true) => ({ ipv4: `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`, reachesIt });
  const zero = (from: number, to: number) => g.slice(from, to).every((x) => x === 0);
  if (zero(0, 5) && g[5] === 0xffff) return v4(g[6], g[7]); // ::ffff:a.b.c.d
  if (zero(0, 4) && g[4] === 0xffff && g[5] === 0) return v4(g[6], g[7], false); // ::ffff:0:a.b.c.d (SIIT)
  if (zero(0, 6) && (g[6] !== 0 || g[7] > 1)) return v4(g[6], g[7]); // ::a.b.c.d (deprecated)
  if (g[0] === 0x64 && g[1] === 0xff9b && zero(2, 6)) return v4(g[6], g[7]); // 64:ff9b::/96
  if (g[0] === 0x2002) return v4(g[1], g[2]); // 6to4
  return null;
}

/** Why a webhook may not connect to `ip` ("loopback", "private", ...), or null when it may. */
export function refusedAddressKind(ip: string): string | null {
  const family = isIP(ip);
  if (family === 0) return 'not an IP address';
  if (family === 6) {
    const inner = embeddedIpv4(ip);
    if (inner) {
      const kind = refusedAddressKind(inner.ipv4);
      if (kind) return kind;
      if (inner.reachesIt) return null; // a public IPv4 address, written in IPv6
    }
  }
  for (const [kind, list] of blocks) if (list.check(ip, family === 4 ? 'ipv4' : 'ipv6')) return kind;
  if (family === 6 && !GLOBAL_UNICAST.check(ip, 'ipv6')) return 'reserved';
  return null;
}

/** The host without IPv6 brackets or the root label's dot ("localhost." is localhost). */
const bare = (hostname: string) =>
  hostname
    .replace(/^\[|\]$/g, '')
    .replace(/\.+$/, '')
    .toLowerCase();
const isLocalhostName = (host: string) => host === 'localhost' || host.endsWith('.localhost');
const isLoopback = (hostname: string) => {
  const host = bare(hostname);
  return isLocalhostName(host) || (isIP(host) !== 0 && refusedAddressKind(host) === 'loopback');
};

export interface WebhookUrlRules {
  /** WEBHOOK_ALLOW_PRIVATE (local development and tests): http://, loopback and private addresses. */
  allowPrivate?: boolean;
}

/**
 * https:// to a public host. An address written in the URL (in any notation: the URL parser
 * turns `2130706433` into 127.0.0.1) is judged here; a host name is resolved and judged at each
 * delivery (`safeLookup`). Checked when added and before every attempt.
 */
export function checkWebhookUrl(text: string, rules: WebhookUrlRules = {}): URL {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw invalid(`not a URL: ${JSON.stringify(text)}`);
  }
  if (text.length > 2048) throw invalid('the URL is longer than 2048 characters');
  if (url.username || url.password) throw invalid('the URL must not carry credentials');
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw invalid(`the URL must be https:// (got ${url.protocol})`);
  const host = bare(url.hostname);
  if (url.protocol === 'http:' && !(rules.allowPrivate && isLoopback(host))) {
    throw invalid('the URL must be https:// (http:// only to loopback, in tests, with WEBHOOK_ALLOW_PRIVATE=true)');
  }
  if (!rules.allowPrivate) {
    const kind = isIP(host) ? refusedAddressKind(host) : isLocalhostName(host) ? 'loopback' : null;
    if (kind) throw invalid(`the URL points to a ${kind} address (${host}); webhooks go to public hosts only`);
  }
  return url;
}

/**
 * The DNS lookup of every delivery: all addresses of the host are resolved, and the connection is
 * refused when any of them is not public (so a name that also resolves to 10.0.0.5 is refused,
 * whichever address a retry would pick). The socket connects to an address checked here, so a
 * name that changes its answer between check and connect gains nothing.
 */
export function safeLookup(rules: WebhookUrlRules, resolveAll: typeof dnsLookup = dnsLookup): LookupFunction {
  return (hostname, options, callback) => {
    resolveAll(hostname, { all: true, family: options.family, hints: options.hints }, (err, addresses) => {
      if (err) return callback(err, '', 0);
      const list = addresses as LookupAddress[];
      const refused = rules.allowPrivate ? undefined : list.find((a) => refusedAddressKind(a.address));
      if (refused || list.length === 0) {
        // The message reaches the organization's admins (the console's delivery log): it names the
        // kind of address, never the address, which would map the internal network behind the resolver.
        const e = Object.assign(new Error(`${hostname} resolves to a ${refused ? refusedAddressKind(refused.address) : 'missing'} address`), {
          code: 'EADDRREFUSED',
        });
        return callback(e, '', 0);
      }
      if (options.all) return (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, list);
      callback(null, list[0].address, list[0].family);
    });
  };
}

export function parseEventTypes(list: string | undefined): WebhookEventType[] | null {
  if (list === undefined) return null;
  const types = [
    ...new Set(
      list
        .split(',')
        .map((t) => t.trim())
        .filter(Boolean),
    ),
  ];
  if (types.length === 0) throw invalid('--events names no event type');
  for (const t of types) {
    if (!(WEBHOOK_EVENT_TYPES as readonly string[]).includes(t)) {
      throw invalid(`unknown event type ${JSON.stringify(t)} (known: ${WEBHOOK_EVENT_TYPES.join(', ')})`);
    }
  }
  return types as WebhookEventType[];
}

export async function createEndpoint(
  db: Queryable,
  orgId: string,
  opts: { url: string; eventTypes: WebhookEventType[] | null; now: Date } & WebhookUrlRules,
): Promise<{ id: string; url: string; eventTypes: WebhookEventType[] | null; secret: string }> {
  const url = checkWebhookUrl(opts.url, opts).toString();
  const id = newId('whe');
  const secret = newWebhookSecret();
  await insertEndpoint(db, orgId, { id, url, secret, eventTypes: opts.eventTypes, createdAt: opts.now });
  return { id, url, eventTypes: opts.eventTypes, secret };
}

/** The exact bytes sent: an event of its schema's shape (contract/schemas/webhook-events.ts, the OpenAPI document's `webhooks`). */
const body = <T extends WebhookEventName>(event: WebhookEventBody<T>) => JSON.stringify(event);

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
  at: Date,
  extra?: Record<string, unknown>,
): Promise<string | null> {
  const id = newId('msg');
  const event = { type, timestamp: at.toISOString(), data, ...extra } as WebhookEventBody<typeof type>;
  const deliveries = await insertEventWithDeliveries(tx, orgId, { id, type, payload: body(event), createdAt: at });
  return deliveries.length > 0 ? id : null;
}

/** Whether an event of `type` would reach any endpoint: lets a caller skip building its data. */
export const isSubscribed = (tx: Queryable, orgId: string, type: WebhookEventType) => hasSubscribers(tx, orgId, type);

/**
 * `alert.created` with the alert as GET /alerts shows it. The fields are copied one by one, so
 * a database row with more columns (a team id, say) cannot widen what leaves the service.
 */
export function recordAlertCreated(tx: Queryable, orgId: string, alert: Alert, at: Date) {
  const { id, type, message, weekISO, subteamName, readAt, createdAt } = alert;
  const data: WebhookEventBody<'alert.created'>['data'] = { id, type, message, weekISO, subteamName, readAt, createdAt };
  return recordEvent(tx, orgId, 'alert.created', data, at);
}

/** How long the secret an endpoint's rotation replaces stays valid (docs/webhooks.md). */
export const SECRET_OVERLAP_MS = 24 * 3600e3;

/**
 * The secrets an attempt at `at` is signed with: the endpoint's secret, then the one its last
 * rotation replaced while that is still valid.
 */
export function signingSecrets(e: { secret: string; previousSecret: string | null; previousSecretExpiresAt: Date | null }, at: Date): string[] {
  const previousValid = e.previousSecret !== null && e.previousSecretExpiresAt !== null && at.getTime() < e.previousSecretExpiresAt.getTime();
  return previousValid ? [e.secret, e.previousSecret!] : [e.secret];
}

/**
 * The three Standard Webhooks headers for one attempt: signed at the attempt's time, same id on
 * every attempt. With several secrets (a rotation's overlap), `webhook-signature` holds one
 * `v1,<signature>` per secret, separated by a space, the current secret's first: a receiver that
 * knows either secret verifies it.
 */
export function signedHeaders(secrets: string | string[], msgId: string, payload: string, at = new Date()): Record<string, string> {
  return {
    'webhook-id': msgId,
    'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
    'webhook-signature': [secrets]
      .flat()
      .map((secret) => new Webhook(secret).sign(msgId, at, payload))
      .join(' '),
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

/** POSTs `payload` to `url` through `safeLookup`; resolves with the answer's status and headers (its body is not read). */
function post(url: URL, headers: Record<string, string>, payload: string, rules: WebhookUrlRules, signal: AbortSignal): Promise<IncomingMessage> {
  const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
  return new Promise((resolve, reject) => {
    const req = send(url, {
      method: 'POST',
      headers: { ...headers, 'content-length': String(Buffer.byteLength(payload)) },
      lookup: safeLookup(rules),
      signal,
      agent: false,
    });
    req.once('response', (res) => {
      res.resume(); // the answer's body is not read
      resolve(res);
    });
    req.once('error', reject);
    req.end(payload);
  });
}

/**
 * One POST of a delivery: the URL rule checked again, the host resolved and judged, no redirects
 * followed (node:http never follows them), a hard timeout, and `stop` to abandon it at shutdown.
 */
export async function attemptDelivery(d: ClaimedDelivery, opts: { timeoutMs: number; stop?: AbortSignal } & WebhookUrlRules): Promise<AttemptResult> {
  let url: URL;
  try {
    url = checkWebhookUrl(d.url, opts);
  } catch (err) {
    return { kind: 'invalid', error: (err as Error).message };
  }
  const timeout = AbortSignal.timeout(opts.timeoutMs);
  const signal = opts.stop ? AbortSignal.any([timeout, opts.stop]) : timeout;
  const at = new Date();
  try {
    const res = await post(
      url,
      { 'content-type': 'application/json', 'user-agent': 'climate-pulse-webhooks/1', ...signedHeaders(signingSecrets(d, at), d.eventId, d.payload, at) },
      d.payload,
      opts,
      signal,
    );
    const status = res.statusCode ?? 0;
    if (status >= 200 && status < 300) return { kind: 'ok', statusCode: status };
    if (status === 410) return { kind: 'gone', statusCode: 410 };
    const error = status >= 300 && status < 400 ? `HTTP ${status} (redirects are not followed)` : `HTTP ${status}`;
    const retryAfter = res.headers['retry-after'];
    return { kind: 'retryable', statusCode: status, error, retryAfterMs: parseRetryAfter(typeof retryAfter === 'string' ? retryAfter : null) };
  } catch (err) {
    if (opts.stop?.aborted) return { kind: 'aborted' };
    if (timeout.aborted) return { kind: 'retryable', statusCode: null, error: `timed out after ${opts.timeoutMs} ms` };
    const e = err as NodeJS.ErrnoException;
    if (e.code === 'EADDRREFUSED') return { kind: 'retryable', statusCode: null, error: `refused: ${e.message}` };
    return { kind: 'retryable', statusCode: null, error: `network error: ${e.code ?? e.message}` };
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
  opts: { timeoutMs: number; scheduleMs: number[]; stop?: AbortSignal; final?: boolean } & WebhookUrlRules,
): Promise<{ outcome: DeliveryOutcome; result: AttemptResult }> {
  const result: AttemptResult = d.enabled ? await attemptDelivery(d, opts) : { kind: 'invalid', error: 'endpoint disabled' };
  return { outcome: await settleAttempt(db, d, result, opts), result };
}

/**
 * `webhooks test`: a `ping` event to one endpoint, attempted once by the caller (not retried)
 * and recorded as a delivery like any other, so it shows in `webhooks deliveries`. `record` runs in
 * the transaction that writes the delivery (the operation's audit row), before the attempt.
 */
export async function sendPing(
  db: DatabaseExecutor,
  endpointId: string,
  opts: { timeoutMs: number } & WebhookUrlRules,
  record: (tx: Queryable, orgId: string) => Promise<void>,
  now: Date,
) {
  const endpoint = await findEndpointById(db, endpointId);
  if (!endpoint) throw new ApiError('not_found', `no webhook endpoint ${JSON.stringify(endpointId)}`);
  const at = now;
  const eventId = newId('msg');
  const deliveryId = await db.transaction(async (tx) => {
    const id = await insertClaimedDelivery(
      tx,
      endpoint.orgId,
      { id: eventId, type: 'ping', payload: body<'ping'>({ type: 'ping', timestamp: at.toISOString(), data: { endpointId } }), createdAt: at },
      endpointId,
      2 * opts.timeoutMs,
    );
    await record(tx, endpoint.orgId);
    return id;
  });
  const claimed = await getClaimedDelivery(db, endpoint.orgId, deliveryId);
  const { outcome, result } = await deliver(db, { ...claimed!, enabled: true }, { ...opts, scheduleMs: [], final: true });
  return { endpoint, eventId, deliveryId, outcome, result };
}
