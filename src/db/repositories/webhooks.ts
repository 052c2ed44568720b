import { sql, type Queryable } from '../executor.js';
import { iso, isoOrNull } from './time.js';

export interface WebhookEndpoint {
  orgId: string;
  id: string;
  url: string;
  /** null: every event type. */
  eventTypes: string[] | null;
  enabled: boolean;
  disabledReason: string | null;
  createdAt: string;
  disabledAt: string | null;
  /** Until when the secret replaced by the last rotation is accepted too (null: never rotated). */
  previousSecretExpiresAt: string | null;
}

type DbEndpoint = {
  org_id: string;
  id: string;
  url: string;
  event_types: string[] | null;
  enabled: boolean;
  disabled_reason: string | null;
  created_at: Date;
  disabled_at: Date | null;
  previous_secret_expires_at: Date | null;
};

const toEndpoint = (r: DbEndpoint): WebhookEndpoint => ({
  orgId: r.org_id,
  id: r.id,
  url: r.url,
  eventTypes: r.event_types,
  enabled: r.enabled,
  disabledReason: r.disabled_reason,
  createdAt: iso(r.created_at),
  disabledAt: isoOrNull(r.disabled_at),
  previousSecretExpiresAt: isoOrNull(r.previous_secret_expires_at),
});

const ENDPOINT_COLUMNS = 'org_id, id, url, event_types, enabled, disabled_reason, created_at, disabled_at, previous_secret_expires_at';

/**
 * Organization $1 is not deleted. Every query that makes or claims a delivery carries it: a deleted
 * organization's webhooks send nothing (docs/webhooks.md). Not correlated with the outer query:
 * Citus runs no subquery correlated with a reference table.
 */
const ORG_IS_LIVE = 'EXISTS (SELECT 1 FROM organizations o WHERE o.id = $1 AND o.deleted_at IS NULL)';

const insertEndpointQuery = sql(
  'webhook_endpoints.insert',
  `INSERT INTO webhook_endpoints (org_id, id, url, secret, event_types, created_at) VALUES ($1, $2, $3, $4, $5, $6)`,
);

export async function insertEndpoint(
  db: Queryable,
  orgId: string,
  e: { id: string; url: string; secret: string; eventTypes: string[] | null; createdAt: Date },
): Promise<void> {
  await db.query(insertEndpointQuery, [orgId, e.id, e.url, e.secret, e.eventTypes, e.createdAt.toISOString()]);
}

const listEndpointsQuery = sql('webhook_endpoints.list', `SELECT ${ENDPOINT_COLUMNS} FROM webhook_endpoints WHERE org_id = $1 ORDER BY created_at, id`);

/** Never the secrets. */
export async function listEndpoints(db: Queryable, orgId: string): Promise<WebhookEndpoint[]> {
  return (await db.query<DbEndpoint>(listEndpointsQuery, [orgId])).map(toEndpoint);
}

const endpointByIdQuery = sql('webhook_endpoints.by_id', `SELECT ${ENDPOINT_COLUMNS}, secret FROM webhook_endpoints WHERE id = $1`);

/** Operator commands name an endpoint by its id alone (like `keys revoke PREFIX`). */
export async function findEndpointById(db: Queryable, id: string): Promise<(WebhookEndpoint & { secret: string }) | null> {
  const [r] = await db.query<DbEndpoint & { secret: string }>(endpointByIdQuery, [id]);
  return r ? { ...toEndpoint(r), secret: r.secret } : null;
}

const deleteEndpointQuery = sql('webhook_endpoints.delete', `DELETE FROM webhook_endpoints WHERE org_id = $1 AND id = $2`);

/** Its deliveries go with it (ON DELETE CASCADE). */
export async function deleteEndpointRow(db: Queryable, orgId: string, id: string): Promise<void> {
  await db.query(deleteEndpointQuery, [orgId, id]);
}

const disableEndpointQuery = sql(
  'webhook_endpoints.disable',
  `WITH ep AS (
     UPDATE webhook_endpoints SET enabled = false, disabled_reason = $3, disabled_at = now()
      WHERE org_id = $1 AND id = $2 AND enabled
      RETURNING org_id, id)
   UPDATE webhook_deliveries d
      SET status = 'failed', next_attempt_at = NULL, completed_at = now(), last_error = 'endpoint disabled: ' || $3
     FROM ep
    WHERE d.org_id = ep.org_id AND d.endpoint_id = ep.id AND d.status = 'pending' AND d.id <> $4`,
);

/** Disables the endpoint and fails its other pending deliveries (an operator can replay them after `enable`). */
export async function disableEndpoint(db: Queryable, orgId: string, id: string, reason: string, exceptDeliveryId = ''): Promise<void> {
  await db.query(disableEndpointQuery, [orgId, id, reason, exceptDeliveryId]);
}

const enableEndpointQuery = sql(
  'webhook_endpoints.enable',
  `UPDATE webhook_endpoints SET enabled = true, disabled_reason = NULL, disabled_at = NULL WHERE org_id = $1 AND id = $2`,
);

export async function enableEndpoint(db: Queryable, orgId: string, id: string): Promise<void> {
  await db.query(enableEndpointQuery, [orgId, id]);
}

/**
 * The current secret becomes the previous one, valid until $4; a secret an earlier rotation kept
 * is dropped. On the right of SET, `secret` is the row's value before this statement.
 */
const rotateSecretQuery = sql(
  'webhook_endpoints.rotate_secret',
  `UPDATE webhook_endpoints SET previous_secret = secret, previous_secret_expires_at = $4, secret = $3
    WHERE org_id = $1 AND id = $2
   RETURNING id`,
);

export async function rotateEndpointSecret(db: Queryable, orgId: string, id: string, r: { secret: string; previousExpiresAt: Date }): Promise<boolean> {
  return (await db.query(rotateSecretQuery, [orgId, id, r.secret, r.previousExpiresAt.toISOString()])).length > 0;
}

const subscribedQuery = sql(
  'webhook_endpoints.subscribed',
  `SELECT EXISTS (SELECT 1 FROM webhook_endpoints
                   WHERE org_id = $1 AND enabled AND (event_types IS NULL OR $2 = ANY (event_types)) AND ${ORG_IS_LIVE}) AS subscribed`,
);

export async function hasSubscribers(db: Queryable, orgId: string, type: string): Promise<boolean> {
  const [r] = await db.query<{ subscribed: boolean }>(subscribedQuery, [orgId, type]);
  return r.subscribed;
}

const fanOutQuery = sql(
  'webhook_events.fan_out',
  `WITH targets AS (
     SELECT id FROM webhook_endpoints
      WHERE org_id = $1 AND enabled AND (event_types IS NULL OR $3 = ANY (event_types)) AND ${ORG_IS_LIVE}),
   ev AS (
     INSERT INTO webhook_events (org_id, id, type, payload, created_at)
     SELECT $1, $2, $3, $4, $5 WHERE EXISTS (SELECT 1 FROM targets)
     RETURNING id)
   INSERT INTO webhook_deliveries (org_id, id, event_id, endpoint_id, status, next_attempt_at, created_at)
   SELECT $1, 'whd_' || replace(gen_random_uuid()::text, '-', ''), ev.id, targets.id, 'pending', now(), now()
     FROM ev, targets
   RETURNING id`,
);

/**
 * Writes the event and one pending delivery per enabled endpoint of the organization that
 * subscribes to its type, in one statement of the caller's transaction. No subscriber, or the
 * organization is deleted (a key still cached for a few seconds can write): nothing.
 */
export async function insertEventWithDeliveries(
  db: Queryable,
  orgId: string,
  e: { id: string; type: string; payload: string; createdAt: Date },
): Promise<string[]> {
  const rows = await db.query<{ id: string }>(fanOutQuery, [orgId, e.id, e.type, e.payload, e.createdAt.toISOString()]);
  return rows.map((r) => r.id);
}

const insertClaimedQuery = sql(
  'webhook_events.insert_claimed',
  `WITH ev AS (
     INSERT INTO webhook_events (org_id, id, type, payload, created_at) VALUES ($1, $2, $3, $4, $5) RETURNING id)
   INSERT INTO webhook_deliveries (org_id, id, event_id, endpoint_id, status, attempts, next_attempt_at, last_attempt_at, created_at)
   SELECT $1, 'whd_' || replace(gen_random_uuid()::text, '-', ''), ev.id, $6, 'pending', 1,
          now() + make_interval(secs => $7::float8 / 1000), now(), now()
     FROM ev
   RETURNING id`,
);

/** An event for one endpoint whose first attempt the caller makes itself (a ping): written already leased. */
export async function insertClaimedDelivery(
  db: Queryable,
  orgId: string,
  e: { id: string; type: string; payload: string; createdAt: Date },
  endpointId: string,
  leaseMs: number,
): Promise<string> {
  const [r] = await db.query<{ id: string }>(insertClaimedQuery, [orgId, e.id, e.type, e.payload, e.createdAt.toISOString(), endpointId, leaseMs]);
  return r.id;
}

export interface ClaimedDelivery {
  orgId: string;
  id: string;
  eventId: string;
  endpointId: string;
  /** Attempts made, this one included. */
  attempts: number;
  type: string;
  payload: string;
  url: string;
  secret: string;
  /** The secret the last rotation replaced, and until when it is valid (both null: none). */
  previousSecret: string | null;
  previousSecretExpiresAt: Date | null;
  enabled: boolean;
}

type DbClaimed = {
  org_id: string;
  id: string;
  event_id: string;
  endpoint_id: string;
  attempts: number;
  type: string;
  payload: string;
  url: string;
  secret: string;
  previous_secret: string | null;
  previous_secret_expires_at: Date | null;
  enabled: boolean;
};

const toClaimed = (r: DbClaimed): ClaimedDelivery => ({
  orgId: r.org_id,
  id: r.id,
  eventId: r.event_id,
  endpointId: r.endpoint_id,
  attempts: r.attempts,
  type: r.type,
  payload: r.payload,
  url: r.url,
  secret: r.secret,
  previousSecret: r.previous_secret,
  previousSecretExpiresAt: r.previous_secret_expires_at === null ? null : new Date(r.previous_secret_expires_at),
  enabled: r.enabled,
});

/**
 * Organizations with due deliveries, the longest-waiting first, and whether each is deleted: the
 * one query of the worker across organizations. It locks nothing (Citus runs row locks only inside
 * one organization's shard).
 */
const dueOrgsQuery = sql(
  'webhook_deliveries.due_orgs',
  `SELECT d.org_id, o.deleted_at IS NOT NULL AS deleted
     FROM webhook_deliveries d JOIN organizations o ON o.id = d.org_id
    WHERE d.status = 'pending' AND d.next_attempt_at <= now()
    GROUP BY d.org_id, o.deleted_at
    ORDER BY min(d.next_attempt_at), d.org_id
    LIMIT $1`,
);

export const ORG_DELETED_ERROR = 'organization deleted';

const cancelOrgQuery = sql(
  'webhook_deliveries.cancel_org',
  `UPDATE webhook_deliveries
      SET status = 'failed', next_attempt_at = NULL, completed_at = now(), last_error = '${ORG_DELETED_ERROR}'
    WHERE org_id = $1 AND status = 'pending'
   RETURNING id`,
);

/**
 * A deleted organization's pending deliveries, due or not, fail without being sent: none is sent
 * after the delete. An attempt in flight then settles nothing (its settle requires 'pending').
 */
export async function cancelOrgDeliveries(db: Queryable, orgId: string): Promise<number> {
  return (await db.query(cancelOrgQuery, [orgId])).length;
}

/**
 * Claims one organization's due deliveries, skipping rows another process holds, and leases them
 * by moving next_attempt_at past the attempt's timeout, so the claim of a process that dies
 * mid-attempt expires by itself.
 */
const claimQuery = sql(
  'webhook_deliveries.claim',
  `WITH due AS (
     SELECT org_id, id FROM webhook_deliveries
      WHERE org_id = $1 AND status = 'pending' AND next_attempt_at <= now() AND ${ORG_IS_LIVE}
      ORDER BY next_attempt_at
      LIMIT $2
      FOR UPDATE SKIP LOCKED)
   UPDATE webhook_deliveries d
      SET attempts = d.attempts + 1, last_attempt_at = now(),
          next_attempt_at = now() + make_interval(secs => $3::float8 / 1000)
     FROM due, webhook_events e, webhook_endpoints ep
    WHERE d.org_id = $1 AND d.org_id = due.org_id AND d.id = due.id
      AND e.org_id = d.org_id AND e.id = d.event_id
      AND ep.org_id = d.org_id AND ep.id = d.endpoint_id
   RETURNING d.org_id, d.id, d.event_id, d.endpoint_id, d.attempts, e.type, e.payload, ep.url, ep.secret,
             ep.previous_secret, ep.previous_secret_expires_at, ep.enabled`,
);

export async function claimOrgDeliveries(db: Queryable, orgId: string, limit: number, leaseMs: number): Promise<ClaimedDelivery[]> {
  return (await db.query<DbClaimed>(claimQuery, [orgId, limit, leaseMs])).map(toClaimed);
}

/**
 * Claims up to `limit` due deliveries across organizations: lists the organizations with due
 * deliveries, then claims organization by organization (each claim one statement on one shard
 * under Citus) until the limit is reached. A deleted organization's deliveries are cancelled, not
 * claimed (and its claim refuses them too, should the delete land in between).
 */
export async function claimDueDeliveries(db: Queryable, limit: number, leaseMs: number): Promise<ClaimedDelivery[]> {
  const claimed: ClaimedDelivery[] = [];
  if (limit <= 0) return claimed;
  const orgs = await db.query<{ org_id: string; deleted: boolean }>(dueOrgsQuery, [limit]);
  for (const { org_id, deleted } of orgs) {
    if (claimed.length >= limit) break;
    if (deleted) {
      await cancelOrgDeliveries(db, org_id);
      continue;
    }
    claimed.push(...(await claimOrgDeliveries(db, org_id, limit - claimed.length, leaseMs)));
  }
  return claimed;
}

const claimOneQuery = sql(
  'webhook_deliveries.claim_one',
  `SELECT d.org_id, d.id, d.event_id, d.endpoint_id, d.attempts, e.type, e.payload, ep.url, ep.secret,
          ep.previous_secret, ep.previous_secret_expires_at, ep.enabled
     FROM webhook_deliveries d
     JOIN webhook_events e ON e.org_id = d.org_id AND e.id = d.event_id
     JOIN webhook_endpoints ep ON ep.org_id = d.org_id AND ep.id = d.endpoint_id
    WHERE d.org_id = $1 AND d.id = $2`,
);

export async function getClaimedDelivery(db: Queryable, orgId: string, id: string): Promise<ClaimedDelivery | null> {
  const [r] = await db.query<DbClaimed>(claimOneQuery, [orgId, id]);
  return r ? toClaimed(r) : null;
}

/**
 * The outcome of one attempt. Guarded by the attempt number: if this attempt's lease expired
 * and another process took the delivery over, the stale outcome changes nothing. A retry and a
 * final outcome are two statements, not a CASE over now(): Citus runs no volatile or stable
 * function inside CASE or COALESCE.
 */
const SETTLE_GUARD = `WHERE org_id = $1 AND id = $2 AND attempts = $3 AND status = 'pending'
   RETURNING id`;
const retryQuery = sql(
  'webhook_deliveries.settle_retry',
  `UPDATE webhook_deliveries
      SET next_attempt_at = now() + make_interval(secs => $4::float8 / 1000), last_status_code = $5, last_error = $6
    ${SETTLE_GUARD}`,
);
const completeQuery = sql(
  'webhook_deliveries.settle_final',
  `UPDATE webhook_deliveries
      SET status = $4, next_attempt_at = NULL, completed_at = now(), last_status_code = $5, last_error = $6
    ${SETTLE_GUARD}`,
);

/**
 * A success is recorded even when the organization's deletion cancelled the delivery while the
 * attempt was on its way: the receiver has it, so it is delivered, not failed.
 */
const succeededQuery = sql(
  'webhook_deliveries.settle_succeeded',
  `UPDATE webhook_deliveries
      SET status = 'succeeded', next_attempt_at = NULL, completed_at = now(), last_status_code = $4, last_error = NULL
    WHERE org_id = $1 AND id = $2 AND attempts = $3
      AND (status = 'pending' OR (status = 'failed' AND last_error = '${ORG_DELETED_ERROR}'))
   RETURNING id`,
);

export async function settleDelivery(
  db: Queryable,
  orgId: string,
  id: string,
  attempts: number,
  s: { status: 'pending' | 'succeeded' | 'failed'; retryInMs?: number; statusCode: number | null; error: string | null },
): Promise<boolean> {
  const rows =
    s.status === 'pending'
      ? await db.query(retryQuery, [orgId, id, attempts, s.retryInMs ?? 0, s.statusCode, s.error])
      : s.status === 'succeeded'
        ? await db.query(succeededQuery, [orgId, id, attempts, s.statusCode])
        : await db.query(completeQuery, [orgId, id, attempts, s.status, s.statusCode, s.error]);
  return rows.length > 0;
}

export interface DeliveryListing {
  id: string;
  eventId: string;
  type: string;
  endpointId: string;
  status: 'pending' | 'succeeded' | 'failed';
  attempts: number;
  lastStatusCode: number | null;
  lastError: string | null;
  createdAt: string;
  lastAttemptAt: string | null;
  nextAttemptAt: string | null;
  completedAt: string | null;
}

type DbDelivery = {
  id: string;
  event_id: string;
  type: string;
  endpoint_id: string;
  status: DeliveryListing['status'];
  attempts: number;
  last_status_code: number | null;
  last_error: string | null;
  created_at: Date;
  last_attempt_at: Date | null;
  next_attempt_at: Date | null;
  completed_at: Date | null;
};

const toListing = (r: DbDelivery): DeliveryListing => ({
  id: r.id,
  eventId: r.event_id,
  type: r.type,
  endpointId: r.endpoint_id,
  status: r.status,
  attempts: r.attempts,
  lastStatusCode: r.last_status_code,
  lastError: r.last_error,
  createdAt: iso(r.created_at),
  lastAttemptAt: isoOrNull(r.last_attempt_at),
  nextAttemptAt: isoOrNull(r.next_attempt_at),
  completedAt: isoOrNull(r.completed_at),
});

const DELIVERY_COLUMNS = `d.id, d.event_id, e.type, d.endpoint_id, d.status, d.attempts, d.last_status_code, d.last_error,
       d.created_at, d.last_attempt_at, d.next_attempt_at, d.completed_at`;

/**
 * Newest first. The keyset is the stored instant at its full (microsecond) precision, as text:
 * deliveries get the database's now(), and every delivery of one transaction shares it, so a
 * millisecond key would skip or repeat rows.
 */
const listDeliveriesQuery = sql(
  'webhook_deliveries.list',
  `SELECT ${DELIVERY_COLUMNS}, to_char(d.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS created_key
     FROM webhook_deliveries d
     JOIN webhook_events e ON e.org_id = d.org_id AND e.id = d.event_id
    WHERE d.org_id = $1 AND ($2::text IS NULL OR d.status = $2)
      AND ($4::timestamptz IS NULL OR (d.created_at, d.id) < ($4::timestamptz, $5::text))
    ORDER BY d.created_at DESC, d.id DESC
    LIMIT $3`,
);

/** Where a page of deliveries ended: the last row's exact instant (text, microseconds) and id. */
export interface DeliveryKey {
  createdAt: string;
  id: string;
}

export async function listDeliveries(db: Queryable, orgId: string, opts: { status?: DeliveryListing['status']; limit: number }): Promise<DeliveryListing[]> {
  return (await listDeliveryPage(db, orgId, opts)).items;
}

/** A page newest first after `after`, and the key of its last row (null when empty). */
export async function listDeliveryPage(
  db: Queryable,
  orgId: string,
  opts: { status?: DeliveryListing['status']; limit: number; after?: DeliveryKey },
): Promise<{ items: DeliveryListing[]; keys: DeliveryKey[] }> {
  const rows = await db.query<DbDelivery & { created_key: string }>(listDeliveriesQuery, [
    orgId,
    opts.status ?? null,
    opts.limit,
    opts.after?.createdAt ?? null,
    opts.after?.id ?? null,
  ]);
  return { items: rows.map(toListing), keys: rows.map((r) => ({ createdAt: r.created_key, id: r.id })) };
}

const deliveryByIdQuery = sql(
  'webhook_deliveries.by_id',
  `SELECT d.org_id, ${DELIVERY_COLUMNS}
     FROM webhook_deliveries d
     JOIN webhook_events e ON e.org_id = d.org_id AND e.id = d.event_id
    WHERE d.id = $1`,
);

export async function findDeliveryById(db: Queryable, id: string): Promise<(DeliveryListing & { orgId: string }) | null> {
  const [r] = await db.query<DbDelivery & { org_id: string }>(deliveryByIdQuery, [id]);
  return r ? { ...toListing(r), orgId: r.org_id } : null;
}

const replayQuery = sql(
  'webhook_deliveries.replay',
  `UPDATE webhook_deliveries
      SET status = 'pending', attempts = 0, next_attempt_at = now(), completed_at = NULL
    WHERE org_id = $1 AND id = $2 AND status = 'failed' AND ${ORG_IS_LIVE}
   RETURNING id`,
);

/** A failed delivery starts over with a full retry schedule and the same webhook-id. */
export async function replayDelivery(db: Queryable, orgId: string, id: string): Promise<boolean> {
  return (await db.query(replayQuery, [orgId, id])).length > 0;
}

/**
 * Every failed delivery of the organization written at or after $2 whose endpoint is enabled
 * starts over, as a replay does. One statement on the organization's shard group (the endpoint
 * is joined on the distribution column).
 */
const resendFailedQuery = sql(
  'webhook_deliveries.resend_failed',
  `UPDATE webhook_deliveries d
      SET status = 'pending', attempts = 0, next_attempt_at = now(), completed_at = NULL
     FROM webhook_endpoints ep
    WHERE d.org_id = $1 AND d.status = 'failed' AND d.created_at >= $2
      AND ep.org_id = d.org_id AND ep.id = d.endpoint_id AND ep.enabled AND ${ORG_IS_LIVE}
   RETURNING d.id`,
);

/** Failed deliveries written at or after $2 that stay failed because their endpoint is disabled. */
const failedOfDisabledQuery = sql(
  'webhook_deliveries.failed_of_disabled',
  `SELECT count(*)::int AS n
     FROM webhook_deliveries d JOIN webhook_endpoints ep ON ep.org_id = d.org_id AND ep.id = d.endpoint_id
    WHERE d.org_id = $1 AND d.status = 'failed' AND d.created_at >= $2 AND NOT ep.enabled`,
);

export async function resendFailedDeliveries(db: Queryable, orgId: string, since: Date): Promise<{ resent: string[]; skipped: number }> {
  const resent = (await db.query<{ id: string }>(resendFailedQuery, [orgId, since.toISOString()])).map((r) => r.id);
  const [{ n }] = await db.query<{ n: number }>(failedOfDisabledQuery, [orgId, since.toISOString()]);
  return { resent, skipped: n };
}

/**
 * Across organizations, for the metric: seconds since the oldest pending delivery's event was
 * written. A deleted organization's wait to be cancelled is not a delay of the outbox.
 */
const oldestPendingQuery = sql(
  'webhook_deliveries.oldest_pending',
  `SELECT extract(epoch FROM now() - min(d.created_at))::float8 AS seconds
     FROM webhook_deliveries d JOIN organizations o ON o.id = d.org_id
    WHERE d.status = 'pending' AND o.deleted_at IS NULL`,
);

export async function oldestPendingSeconds(db: Queryable): Promise<number> {
  const [r] = await db.query<{ seconds: number | null }>(oldestPendingQuery);
  return Math.max(0, r?.seconds ?? 0);
}
