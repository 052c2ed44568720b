import type { DatabaseExecutor, Queryable } from '../db/executor.js';
import {
  deleteEndpointRow,
  disableEndpoint,
  enableEndpoint,
  findDeliveryById,
  findEndpointById,
  listDeliveries,
  listDeliveryPage,
  listEndpoints,
  replayDelivery,
  resendFailedDeliveries,
  rotateEndpointSecret,
  type DeliveryListing,
  type WebhookEndpoint,
} from '../db/repositories/webhooks.js';
import { ApiError, invalid } from '../contract/errors.js';
import { recordAudit, type Actor } from './audit.js';
import { requireLiveOrg } from './orgs.js';
import { parseDateTime } from './time.js';
import { createEndpoint, newWebhookSecret, SECRET_OVERLAP_MS, sendPing, WEBHOOK_EVENT_TYPES, type WebhookEventType } from './webhook-deliveries.js';

/**
 * The operator's webhook operations (`webhooks ...` and `/admin/v1/.../webhook-endpoints`), on
 * top of domain/webhook-deliveries.ts. Messages are the ones the CLI prints. Every one of them answers 404
 * not_found for a deleted organization, as the rest of the operator API does (requireLiveOrg),
 * including the ones that name an endpoint or a delivery by its id alone.
 */
export interface EndpointView {
  id: string;
  orgId: string;
  url: string;
  eventTypes: WebhookEventType[];
  enabled: boolean;
  disabledReason: string | null;
  createdAt: string;
  /** Until when the secret the last rotation replaced is still accepted (null: never rotated). */
  previousSecretExpiresAt: string | null;
}

/**
 * What the audit log says of an endpoint: its host, never its URL, which may carry a credential in
 * its path or query (many receivers take one there), nor its signing secret.
 */
const hostOf = (url: string): string => {
  try {
    return new URL(url).host;
  } catch {
    return '';
  }
};

const view = (e: WebhookEndpoint): EndpointView => ({
  id: e.id,
  orgId: e.orgId,
  url: e.url,
  eventTypes: (e.eventTypes ?? [...WEBHOOK_EVENT_TYPES]) as WebhookEventType[],
  enabled: e.enabled,
  disabledReason: e.disabledReason,
  createdAt: e.createdAt,
  previousSecretExpiresAt: e.previousSecretExpiresAt,
});

export async function createWebhookEndpoint(
  db: DatabaseExecutor,
  orgId: string,
  opts: { url: string; eventTypes: WebhookEventType[] | null; allowPrivate?: boolean },
  actor: Actor,
  now: Date,
): Promise<EndpointView & { secret: string }> {
  return db.transaction(async (tx) => {
    await requireLiveOrg(tx, orgId);
    const e = await createEndpoint(tx, orgId, { url: opts.url, eventTypes: opts.eventTypes, now, allowPrivate: opts.allowPrivate });
    const details = { host: hostOf(e.url), eventTypes: e.eventTypes };
    await recordAudit(tx, orgId, actor, { action: 'webhook_endpoint.created', target: { kind: 'webhook_endpoint', id: e.id }, details }, now);
    return {
      id: e.id,
      orgId,
      url: e.url,
      eventTypes: e.eventTypes ?? [...WEBHOOK_EVENT_TYPES],
      enabled: true,
      disabledReason: null,
      createdAt: new Date(now).toISOString(),
      previousSecretExpiresAt: null,
      secret: e.secret,
    };
  });
}

export async function listOrgEndpoints(db: Queryable, orgId: string): Promise<EndpointView[]> {
  await requireLiveOrg(db, orgId);
  return (await listEndpoints(db, orgId)).map(view);
}

/**
 * Which organization an id must belong to: the console and the organization's routes name it
 * (another organization's endpoint or delivery is not found, as an unknown one is not); the
 * operator's id-alone commands (`webhooks enable|test|replay ID`) pass null, any organization.
 */
export type OrgScope = string | null;

const noEndpoint = (id: string) => new ApiError('not_found', `no webhook endpoint ${JSON.stringify(id)}`);

/** An endpoint of a live organization, with its secret (for the domain only). */
async function endpointIn(db: Queryable, orgId: OrgScope, id: string) {
  const e = await findEndpointById(db, id);
  if (!e || (orgId !== null && e.orgId !== orgId)) throw noEndpoint(id);
  await requireLiveOrg(db, e.orgId);
  return e;
}

/** An endpoint named by its id alone (the CLI's `webhooks remove|enable|test ID`), of a live organization. */
export async function endpointById(db: Queryable, id: string, orgId: OrgScope = null): Promise<EndpointView> {
  return view(await endpointIn(db, orgId, id));
}

export async function deleteWebhookEndpoint(db: DatabaseExecutor, orgId: string, id: string, actor: Actor, now: Date): Promise<EndpointView> {
  return db.transaction(async (tx) => {
    await requireLiveOrg(tx, orgId);
    const e = await findEndpointById(tx, id);
    if (!e || e.orgId !== orgId) throw noEndpoint(id);
    await deleteEndpointRow(tx, orgId, id);
    const details = { host: hostOf(e.url) };
    await recordAudit(tx, orgId, actor, { action: 'webhook_endpoint.removed', target: { kind: 'webhook_endpoint', id }, details }, now);
    return view(e);
  });
}

export async function enableOrgEndpoint(db: DatabaseExecutor, orgId: OrgScope, id: string, actor: Actor, now: Date): Promise<EndpointView> {
  return db.transaction(async (tx) => {
    const e = view(await endpointIn(tx, orgId, id));
    await enableEndpoint(tx, e.orgId, id);
    const details = { host: hostOf(e.url), wasEnabled: e.enabled };
    await recordAudit(tx, e.orgId, actor, { action: 'webhook_endpoint.enabled', target: { kind: 'webhook_endpoint', id }, details }, now);
    return { ...e, enabled: true, disabledReason: null };
  });
}

/** Who a disabled endpoint's reason names. */
const byWhom = (actor: Actor) => (actor.kind === 'operator' ? 'the operator' : actor.kind === 'member' ? actor.email : `key ${actor.prefix}`);

/**
 * Stops sending to an endpoint: no new event is written for it, and its pending deliveries fail at
 * once (as after a 410), so that enabling it later sends nothing old by surprise; resend them with
 * `resendFailedOrgDeliveries` or replay them one by one. Disabling a disabled endpoint keeps its reason.
 */
export async function disableOrgEndpoint(db: DatabaseExecutor, orgId: OrgScope, id: string, actor: Actor, now: Date): Promise<EndpointView> {
  return db.transaction(async (tx) => {
    const e = view(await endpointIn(tx, orgId, id));
    const reason = `disabled by ${byWhom(actor)}`;
    if (e.enabled) await disableEndpoint(tx, e.orgId, id, reason);
    const details = { host: hostOf(e.url), wasEnabled: e.enabled };
    await recordAudit(tx, e.orgId, actor, { action: 'webhook_endpoint.disabled', target: { kind: 'webhook_endpoint', id }, details }, now);
    return e.enabled ? { ...e, enabled: false, disabledReason: reason } : e;
  });
}

/**
 * A new signing secret for an endpoint, returned here only. The secret it replaces stays valid
 * for SECRET_OVERLAP_MS (24 hours) from `now`: until then every attempt carries both signatures.
 * A secret an earlier rotation kept ends at once (an endpoint has at most two valid secrets).
 */
export async function rotateOrgEndpointSecret(
  db: DatabaseExecutor,
  orgId: OrgScope,
  id: string,
  actor: Actor,
  now: Date,
): Promise<EndpointView & { secret: string }> {
  return db.transaction(async (tx) => {
    const e = view(await endpointIn(tx, orgId, id));
    const secret = newWebhookSecret();
    const previousExpiresAt = new Date(now.getTime() + SECRET_OVERLAP_MS);
    if (!(await rotateEndpointSecret(tx, e.orgId, id, { secret, previousExpiresAt }))) throw noEndpoint(id);
    const details = { host: hostOf(e.url), oldValidUntil: previousExpiresAt.toISOString() };
    await recordAudit(tx, e.orgId, actor, { action: 'webhook_endpoint.secret_rotated', target: { kind: 'webhook_endpoint', id }, details }, now);
    return { ...e, previousSecretExpiresAt: previousExpiresAt.toISOString(), secret };
  });
}

/** `webhooks test`: the ping is recorded as a delivery, and audited, in one transaction before it is sent. */
export async function pingOrgEndpoint(
  db: DatabaseExecutor,
  orgId: OrgScope,
  id: string,
  opts: { timeoutMs: number; allowPrivate?: boolean },
  actor: Actor,
  now: Date,
) {
  await endpointIn(db, orgId, id);
  const ping = await sendPing(
    db,
    id,
    opts,
    (tx, owner) => recordAudit(tx, owner, actor, { action: 'webhook_endpoint.tested', target: { kind: 'webhook_endpoint', id } }, now),
    now,
  );
  const r = ping.result;
  const result = r.kind === 'ok' || r.kind === 'gone' ? `HTTP ${r.statusCode}` : 'error' in r ? r.error : r.kind;
  return { eventId: ping.eventId, deliveryId: ping.deliveryId, outcome: ping.outcome, result, url: ping.endpoint.url };
}

export async function listOrgDeliveries(db: Queryable, orgId: string, opts: { failed?: boolean; limit?: number }): Promise<DeliveryListing[]> {
  await requireLiveOrg(db, orgId);
  return listDeliveries(db, orgId, { status: opts.failed ? 'failed' : undefined, limit: opts.limit ?? 50 });
}

const DELIVERY_CURSOR = /^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z)\|(whd_[0-9a-f]{32})$/;

/** One page of the delivery log, newest first, and the cursor of the next page (null on the last). */
export async function pageOrgDeliveries(
  db: Queryable,
  orgId: string,
  opts: { failed?: boolean; limit: number; cursor?: string },
): Promise<{ items: DeliveryListing[]; nextCursor: string | null }> {
  await requireLiveOrg(db, orgId);
  let after: { createdAt: string; id: string } | undefined;
  if (opts.cursor) {
    const m = DELIVERY_CURSOR.exec(opts.cursor);
    if (!m || Number.isNaN(Date.parse(m[1]))) throw new ApiError('invalid_cursor', `'cursor' is not a cursor of the delivery log; follow the page's own link.`);
    after = { createdAt: m[1], id: m[2] };
  }
  const { items, keys } = await listDeliveryPage(db, orgId, { status: opts.failed ? 'failed' : undefined, limit: opts.limit + 1, after });
  if (items.length <= opts.limit) return { items, nextCursor: null };
  const last = keys[opts.limit - 1];
  return { items: items.slice(0, opts.limit), nextCursor: `${last.createdAt}|${last.id}` };
}

/** Sends a failed delivery again (same webhook-id, the full retry schedule) from the running servers. */
export async function replayOrgDelivery(
  db: DatabaseExecutor,
  orgId: OrgScope,
  id: string,
  actor: Actor,
  now: Date,
): Promise<{ id: string; eventId: string; type: string; url: string }> {
  return db.transaction(async (tx) => {
    const delivery = await findDeliveryById(tx, id);
    if (!delivery || (orgId !== null && delivery.orgId !== orgId)) throw new ApiError('not_found', `no webhook delivery ${JSON.stringify(id)}`);
    await requireLiveOrg(tx, delivery.orgId);
    if (delivery.status !== 'failed') throw invalid(`delivery ${id} is ${delivery.status}; only failed deliveries are replayed`);
    const endpoint = await endpointById(tx, delivery.endpointId);
    if (!endpoint.enabled) throw invalid(`endpoint ${endpoint.id} is disabled (${endpoint.disabledReason}); enable it first`);
    if (!(await replayDelivery(tx, delivery.orgId, id))) throw invalid(`delivery ${id} changed meanwhile; list it again`);
    const details = { eventType: delivery.type, endpointId: endpoint.id };
    await recordAudit(tx, delivery.orgId, actor, { action: 'webhook_delivery.replayed', target: { kind: 'webhook_delivery', id }, details }, now);
    return { id, eventId: delivery.eventId, type: delivery.type, url: endpoint.url };
  });
}

/**
 * Sends again every delivery of the organization that failed and whose event was written at or
 * after `since` (the time the delivery log shows), as a replay does: same webhook-id, a full retry
 * schedule. Deliveries of a disabled endpoint stay failed and are counted in `skipped`.
 */
export async function resendFailedOrgDeliveries(
  db: DatabaseExecutor,
  orgId: string,
  sinceText: string,
  actor: Actor,
  now: Date,
): Promise<{ since: string; resent: number; skipped: number }> {
  const since = parseDateTime(sinceText, 'since');
  return db.transaction(async (tx) => {
    await requireLiveOrg(tx, orgId);
    const { resent, skipped } = await resendFailedDeliveries(tx, orgId, since);
    const details = { since: since.toISOString(), resent: resent.length, skipped };
    await recordAudit(tx, orgId, actor, { action: 'webhook_deliveries.resent', target: { kind: 'webhook_deliveries', id: null }, details }, now);
    return { since: since.toISOString(), resent: resent.length, skipped };
  });
}
