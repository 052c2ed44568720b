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
import { html, type Safe } from '../../html.js';
import { actorOf, CHANGERS, changeOutcome, type ConsoleDeps, type Form } from '../../plugins/index.js';
import { refusalsInWords, saidNotice, sendPage } from '../../views/layout.js';
import { speakerOf } from '../../views/speaker.js';
import { deliveryFiltersOf, endpointBodyOf, resendBodyOf, webhookRefusal } from './form.js';
import { addedSecret, attemptWords, code, DELIVERIES_SHOWN, rotatedSecret, second, webhooksView } from './view.js';

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
  const outcome = refusalsInWords(changeOutcome(webhooksPage), webhooksPage, async (err, request) => webhookRefusal(err, await speakerOf(db, request)));
  const orgOf = (request: FastifyRequest) => request.member.orgId;

  scope.get('/webhooks', async (request, reply) => webhooksPage(request, reply, 200));

  scope.post<{ Body: Form }>('/webhooks', admin, async (request, reply) =>
    outcome(request, reply, async () => {
      const body = endpointBodyOf(request.body);
      const e = await createWebhookEndpoint(db, orgOf(request), { ...body, allowPrivate: options.allowPrivate }, actorOf(request), now());
      return addedSecret(e, await speakerOf(db, request));
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
      const sp = await speakerOf(db, request);
      const values = { event: code(ping.eventId), url: ping.url, result: attemptWords(ping.result, sp.t) };
      if (ping.outcome === 'succeeded') return saidNotice(sp.rich('console.webhooks.testDelivered', values));
      return saidNotice(sp.rich(ping.outcome === 'endpoint_disabled' ? 'console.webhooks.testFailedDisabled' : 'console.webhooks.testFailed', values), 'error');
    }),
  );

  scope.post<{ Params: { endpointId: string } }>('/webhooks/:endpointId/disable', admin, async (request, reply) =>
    outcome(request, reply, async () => {
      const e = await disableOrgEndpoint(db, orgOf(request), request.params.endpointId, actorOf(request), now());
      return saidNotice(html`${(await speakerOf(db, request)).t('console.webhooks.disabledNotice', { url: e.url })}`);
    }),
  );

  scope.post<{ Params: { endpointId: string } }>('/webhooks/:endpointId/enable', admin, async (request, reply) =>
    outcome(request, reply, async () => {
      const e = await enableOrgEndpoint(db, orgOf(request), request.params.endpointId, actorOf(request), now());
      return saidNotice(html`${(await speakerOf(db, request)).t('console.webhooks.enabledNotice', { url: e.url })}`);
    }),
  );

  scope.post<{ Params: { endpointId: string } }>('/webhooks/:endpointId/remove', admin, async (request, reply) =>
    outcome(request, reply, async () => {
      const e = await deleteWebhookEndpoint(db, orgOf(request), request.params.endpointId, actorOf(request), now());
      return saidNotice(html`${(await speakerOf(db, request)).t('console.webhooks.removedNotice', { url: e.url })}`);
    }),
  );

  scope.post<{ Params: { deliveryId: string } }>('/webhooks/deliveries/:deliveryId/replay', admin, async (request, reply) =>
    outcome(request, reply, async () => {
      const r = await replayOrgDelivery(db, orgOf(request), request.params.deliveryId, actorOf(request), now());
      return saidNotice((await speakerOf(db, request)).rich('console.webhooks.replayed', { type: code(r.type), event: code(r.eventId), url: r.url }));
    }),
  );

  scope.post<{ Body: Form }>('/webhooks/resend-failed', admin, async (request, reply) =>
    outcome(request, reply, async () => {
      const r = await resendFailedOrgDeliveries(db, orgOf(request), resendBodyOf(request.body).since, actorOf(request), now());
      const sp = await speakerOf(db, request);
      const resent = sp.t('console.webhooks.resent', { resent: r.resent, since: second(r.since, sp) });
      return saidNotice(html`${resent}${r.skipped > 0 ? html` ${sp.t('console.webhooks.skipped', { skipped: r.skipped })}` : ''}`);
    }),
  );
}
