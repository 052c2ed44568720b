import type { DatabaseExecutor, Queryable } from '../db/executor.js';
import {
  deleteEndpoint,
  enableEndpoint,
  findDeliveryById,
  findEndpointById,
  listDeliveries,
  listEndpoints,
  replayDelivery,
  type DeliveryListing,
  type WebhookEndpoint,
} from '../db/repositories/webhooks.js';
import { ApiError, invalid } from '../contract/errors.js';
import { recordAudit, type Actor } from './audit.js';
import { requireLiveOrg } from './orgs.js';
import { addEndpoint, sendPing, WEBHOOK_EVENT_TYPES, type WebhookEventType } from './webhooks.js';

/**
 * The operator's webhook operations (`webhooks ...` and `/admin/v1/.../webhook-endpoints`), on
 * top of domain/webhooks.ts. Messages are the ones the CLI prints. Every one of them answers 404
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
});

export async function addOrgEndpoint(
  db: DatabaseExecutor,
  orgId: string,
  opts: { url: string; eventTypes: WebhookEventType[] | null; allowPrivate?: boolean },
  actor: Actor,
  now: Date,
): Promise<EndpointView & { secret: string }> {
  return db.transaction(async (tx) => {
    await requireLiveOrg(tx, orgId);
    const e = await addEndpoint(tx, orgId, { url: opts.url, eventTypes: opts.eventTypes, now, allowPrivate: opts.allowPrivate });
    const details = { host: hostOf(e.url), eventTypes: e.eventTypes };
    await recordAudit(tx, orgId, actor, { action: 'webhook_endpoint.created', target: { kind: 'webhook_endpoint', id: e.id }, details }, now);
    return {
      id: e.id, orgId, url: e.url, eventTypes: e.eventTypes ?? [...WEBHOOK_EVENT_TYPES], enabled: true, disabledReason: null,
      createdAt: new Date(now).toISOString(), secret: e.secret,
    };
  });
}

export async function listOrgEndpoints(db: Queryable, orgId: string): Promise<EndpointView[]> {
  await requireLiveOrg(db, orgId);
  return (await listEndpoints(db, orgId)).map(view);
}

/** An endpoint named by its id alone (the CLI's `webhooks remove|enable|test ID`), of a live organization. */
export async function endpointById(db: Queryable, id: string): Promise<EndpointView> {
  const e = await findEndpointById(db, id);
  if (!e) throw new ApiError('not_found', `no webhook endpoint ${JSON.stringify(id)}`);
  await requireLiveOrg(db, e.orgId);
  return view(e);
}

export async function removeOrgEndpoint(db: DatabaseExecutor, orgId: string, id: string, actor: Actor, now: Date): Promise<EndpointView> {
  return db.transaction(async (tx) => {
    await requireLiveOrg(tx, orgId);
    const e = await findEndpointById(tx, id);
    if (!e || e.orgId !== orgId) throw new ApiError('not_found', `no webhook endpoint ${JSON.stringify(id)}`);
    await deleteEndpoint(tx, orgId, id);
    const details = { host: hostOf(e.url) };
    await recordAudit(tx, orgId, actor, { action: 'webhook_endpoint.removed', target: { kind: 'webhook_endpoint', id }, details }, now);
    return view(e);
  });
}

export async function enableEndpointById(db: DatabaseExecutor, id: string, actor: Actor, now: Date): Promise<EndpointView> {
  return db.transaction(async (tx) => {
    const e = await endpointById(tx, id);
    await enableEndpoint(tx, e.orgId, id);
    const details = { host: hostOf(e.url), wasEnabled: e.enabled };
    await recordAudit(tx, e.orgId, actor, { action: 'webhook_endpoint.enabled', target: { kind: 'webhook_endpoint', id }, details }, now);
    return { ...e, enabled: true, disabledReason: null };
  });
}

/** `webhooks test`: the ping is recorded as a delivery, and audited, in one transaction before it is sent. */
export async function pingEndpoint(db: DatabaseExecutor, id: string, opts: { timeoutMs: number; allowPrivate?: boolean }, actor: Actor, now: Date) {
  await endpointById(db, id);
  const ping = await sendPing(db, id, opts, (tx, orgId) =>
    recordAudit(tx, orgId, actor, { action: 'webhook_endpoint.tested', target: { kind: 'webhook_endpoint', id } }, now),
  );
  const r = ping.result;
  const result = r.kind === 'ok' || r.kind === 'gone' ? `HTTP ${r.statusCode}` : 'error' in r ? r.error : r.kind;
  return { eventId: ping.eventId, deliveryId: ping.deliveryId, outcome: ping.outcome, result, url: ping.endpoint.url };
}

export async function listOrgDeliveries(db: Queryable, orgId: string, opts: { failed?: boolean; limit?: number }): Promise<DeliveryListing[]> {
  await requireLiveOrg(db, orgId);
  return listDeliveries(db, orgId, { status: opts.failed ? 'failed' : undefined, limit: opts.limit ?? 50 });
}

/** Sends a failed delivery again (same webhook-id, the full retry schedule) from the running servers. */
export async function replayDeliveryById(
  db: DatabaseExecutor,
  id: string,
  actor: Actor,
  now: Date,
): Promise<{ id: string; eventId: string; type: string; url: string }> {
  return db.transaction(async (tx) => {
    const delivery = await findDeliveryById(tx, id);
    if (!delivery) throw new ApiError('not_found', `no webhook delivery ${JSON.stringify(id)}`);
    await requireLiveOrg(tx, delivery.orgId);
    if (delivery.status !== 'failed') throw invalid(`delivery ${id} is ${delivery.status}; only failed deliveries are replayed`);
    const endpoint = await endpointById(tx, delivery.endpointId);
    if (!endpoint.enabled) {
      throw invalid(`endpoint ${endpoint.id} is disabled (${endpoint.disabledReason}); enable it first: climate-pulse webhooks enable ${endpoint.id}`);
    }
    if (!(await replayDelivery(tx, delivery.orgId, id))) throw invalid(`delivery ${id} changed meanwhile; list it again`);
    const details = { eventType: delivery.type, endpointId: endpoint.id };
    await recordAudit(tx, delivery.orgId, actor, { action: 'webhook_delivery.replayed', target: { kind: 'webhook_delivery', id }, details }, now);
    return { id, eventId: delivery.eventId, type: delivery.type, url: endpoint.url };
  });
}
