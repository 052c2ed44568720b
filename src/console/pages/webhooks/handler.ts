import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { DatabaseExecutor } from '../../../domain/database.js';
import {
  createWebhookEndpoint,
  disableOrgEndpoint,
  enableOrgEndpoint,
  pageOrgDeliveries,
  listOrgEndpoints,
  pingOrgEndpoint,
  deleteWebhookEndpoint,
  replayOrgDelivery,
  resendFailedOrgDeliveries,
  rotateOrgEndpointSecret,
} from '../../../domain/webhook-endpoints.js';
import { notice, type Safe } from '../../html.js';
import { actorOf, CHANGERS, changeOutcome, type ConsoleDeps, type Form } from '../../plugins/index.js';
import { sendPage } from '../../views/layout.js';
import { speakerOf } from '../../views/speaker.js';
import { deliveryFiltersOf, endpointBodyOf, resendBodyOf } from './form.js';
import { addedSecret, DELIVERIES_SHOWN, rotatedSecret, second, shownError, webhooksView } from './view.js';

/** What the webhooks page needs of the configuration (app.ts passes it to registerConsole). */
export interface ConsoleWebhookOptions {
  /** WEBHOOK_TIMEOUT_MS: how long a test event waits for the receiver. */
  timeoutMs: number;
  /** WEBHOOK_ALLOW_PRIVATE (tests only): endpoints on loopback over http and on private addresses. */
  allowPrivate: boolean;
}

declare module '../../index.js' {
  interface ConsoleOptions {
    webhooks?: ConsoleWebhookOptions;
  }
}

const DEFAULTS: ConsoleWebhookOptions = { timeoutMs: 15_000, allowPrivate: false };

/**
 * The webhooks page (CONTRACT.md section 11): every member reads the endpoints and the delivery
 * log; owners and admins add, test, rotate, disable, enable and remove endpoints, replay a
 * delivery and resend every failed one since a time, through the operator API's own domain
 * operations (each with its audit row, the member as actor).
 */
export function registerWebhookPages(scope: FastifyInstance, deps: ConsoleDeps & { db: DatabaseExecutor; webhooks?: ConsoleWebhookOptions }) {
  const { db, now } = deps;
  const options = deps.webhooks ?? DEFAULTS;
  const admin = { config: { roles: CHANGERS } };

  const webhooksPage = async (request: FastifyRequest, reply: FastifyReply, status: number, message?: Safe) => {
    const s = request.member;
    const { failed, cursor } = deliveryFiltersOf(request);
    const at = now();
    const [endpoints, { items: deliveries, nextCursor }, speaker] = await Promise.all([
      listOrgEndpoints(db, s.orgId),
      pageOrgDeliveries(db, s.orgId, { failed, limit: DELIVERIES_SHOWN, cursor }),
      speakerOf(db, request),
    ]);
    return sendPage(reply, status, webhooksView({ session: s, at, endpoints, deliveries, nextCursor, failedOnly: failed, cursor, message, speaker }));
  };
  const outcome = changeOutcome(webhooksPage);
  const orgOf = (request: FastifyRequest) => request.member.orgId;

  scope.get('/webhooks', async (request, reply) => webhooksPage(request, reply, 200));

  scope.post<{ Body: Form }>('/webhooks', admin, async (request, reply) =>
    outcome(request, reply, async () => {
      const body = endpointBodyOf(request.body);
      const e = await createWebhookEndpoint(db, orgOf(request), { ...body, allowPrivate: options.allowPrivate }, actorOf(request), now());
      return addedSecret(e);
    }),
  );

  scope.post<{ Params: { endpointId: string } }>('/webhooks/:endpointId/rotate', admin, async (request, reply) =>
    outcome(request, reply, async () =>
      rotatedSecret(await rotateOrgEndpointSecret(db, orgOf(request), request.params.endpointId, actorOf(request), now()), await speakerOf(db, request)),
    ),
  );

  scope.post<{ Params: { endpointId: string } }>('/webhooks/:endpointId/test', admin, async (request, reply) =>
    outcome(request, reply, async () => {
      const ping = await pingOrgEndpoint(db, orgOf(request), request.params.endpointId, options, actorOf(request), now());
      return ping.outcome === 'succeeded'
        ? notice(`Test event ${ping.eventId} delivered to ${ping.url}: ${ping.result}.`, 'ok')
        : notice(
            `Test event ${ping.eventId} to ${ping.url} failed: ${shownError(ping.result)}${ping.outcome === 'endpoint_disabled' ? '; the endpoint is now disabled' : ''}.`,
          );
    }),
  );

  scope.post<{ Params: { endpointId: string } }>('/webhooks/:endpointId/disable', admin, async (request, reply) =>
    outcome(request, reply, async () => {
      const e = await disableOrgEndpoint(db, orgOf(request), request.params.endpointId, actorOf(request), now());
      return notice(`Endpoint ${e.url} disabled: it receives nothing until enabled, and its pending deliveries failed (resend them after enabling it).`, 'ok');
    }),
  );

  scope.post<{ Params: { endpointId: string } }>('/webhooks/:endpointId/enable', admin, async (request, reply) =>
    outcome(request, reply, async () => {
      const e = await enableOrgEndpoint(db, orgOf(request), request.params.endpointId, actorOf(request), now());
      return notice(`Endpoint ${e.url} enabled: new events are sent to it.`, 'ok');
    }),
  );

  scope.post<{ Params: { endpointId: string } }>('/webhooks/:endpointId/remove', admin, async (request, reply) =>
    outcome(request, reply, async () => {
      const e = await deleteWebhookEndpoint(db, orgOf(request), request.params.endpointId, actorOf(request), now());
      return notice(`Endpoint ${e.url} removed, with its delivery history.`, 'ok');
    }),
  );

  scope.post<{ Params: { deliveryId: string } }>('/webhooks/deliveries/:deliveryId/replay', admin, async (request, reply) =>
    outcome(request, reply, async () => {
      const r = await replayOrgDelivery(db, orgOf(request), request.params.deliveryId, actorOf(request), now());
      return notice(`Delivery of ${r.type} ${r.eventId} to ${r.url} is sent again (same webhook-id, a new retry schedule).`, 'ok');
    }),
  );

  scope.post<{ Body: Form }>('/webhooks/resend-failed', admin, async (request, reply) =>
    outcome(request, reply, async () => {
      const r = await resendFailedOrgDeliveries(db, orgOf(request), resendBodyOf(request.body).since, actorOf(request), now());
      const n = (k: number) => `${k} failed ${k === 1 ? 'delivery' : 'deliveries'}`;
      const skipped = r.skipped > 0 ? ` ${n(r.skipped)} of disabled endpoints stay failed.` : '';
      return notice(`${n(r.resent)} since ${second(r.since, await speakerOf(db, request))} sent again.${skipped}`, 'ok');
    }),
  );
}
