import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ApiError } from '../../../contract/errors.js';
import type { Delivery, Endpoint } from '../../../contract/schemas/admin-webhooks.js';
import type { DatabaseExecutor } from '../../../domain/database.js';
import {
  addOrgEndpoint,
  disableOrgEndpoint,
  enableOrgEndpoint,
  pageOrgDeliveries,
  listOrgEndpoints,
  pingOrgEndpoint,
  removeOrgEndpoint,
  replayOrgDelivery,
  resendFailedOrgDeliveries,
  rotateOrgEndpointSecret,
} from '../../../domain/webhook-endpoints.js';
import { SECRET_OVERLAP_MS, WEBHOOK_EVENT_TYPES, type WebhookEventType } from '../../../domain/webhook-deliveries.js';
import { csrfField, html, notice, type Safe } from '../../html.js';
import { actorOf, CHANGERS, changeOutcome, queryText, type ConsoleDeps, type Form } from '../../plugins/index.js';
import { navFor } from '../../views/nav.js';
import { hostOf, secretBox, sendPage, when } from '../../views/layout.js';

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
const DELIVERIES_SHOWN = 50;

const minute = (iso: string | null | undefined) => when(iso, '-');
const second = (iso: string | null | undefined) => when(iso, '-', 'second');
/** A value for `<input type="datetime-local">` (read as UTC): the instant to the second. */
const localValue = (d: Date) => d.toISOString().slice(0, 19);

/**
 * The form's "since": a datetime-local value (`YYYY-MM-DDTHH:MM`, seconds optional), read as UTC
 * as the page's times are. The domain checks the instant itself (resendFailedOrgDeliveries).
 */
function sinceOf(text: string | undefined): string {
  const v = (text ?? '').trim();
  if (!/^\d{4}-\d\d-\d\dT\d\d:\d\d(:\d\d(\.\d{1,3})?)?$/.test(v))
    throw new ApiError('invalid_request', 'Since must be a date and time (UTC), like 2026-11-20 09:00.');
  return `${v.length === 16 ? `${v}:00` : v}Z`;
}

/** The add form's event types: one checkbox per type (a form field is given once); none ticked is every type. */
function eventTypesOf(form: Form): WebhookEventType[] | null {
  const ticked = WEBHOOK_EVENT_TYPES.filter((t) => form[`event:${t}`] === 'on');
  return ticked.length === 0 || ticked.length === WEBHOOK_EVENT_TYPES.length ? null : ticked;
}

/** An attempt's error as the page shows it: never a host name of the network behind the resolver. */
export const shownError = (text: string) => text.replace(/^refused: \S+ resolves to/, "refused: the endpoint's host resolves to");

/** The last attempt's error (a status that failed is one), else its status. */
const lastResult = (d: Delivery) => (d.lastError !== null ? shownError(d.lastError) : d.lastStatusCode !== null ? `HTTP ${d.lastStatusCode}` : '-');

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
    const canChange = s.member.role !== 'viewer';
    const failedOnly = (request.query as Record<string, unknown> | undefined)?.failed === '1';
    const cursor = queryText(request, 'cursor');
    const at = now();
    const [endpoints, { items: deliveries, nextCursor }] = await Promise.all([
      listOrgEndpoints(db, s.orgId),
      pageOrgDeliveries(db, s.orgId, { failed: failedOnly, limit: DELIVERIES_SHOWN, cursor }),
    ]);
    const pageLink = (q: Record<string, string>) => `/console/webhooks?${new URLSearchParams(failedOnly ? { failed: '1', ...q } : q).toString()}`;
    const shown = (url: string) => (canChange ? url : hostOf(url));
    const urlOf = new Map(endpoints.map((e) => [e.id, shown(e.url)]));
    const csrf = csrfField(s.csrfToken);
    const overlap = (e: Endpoint) => e.previousSecretExpiresAt !== null && Date.parse(e.previousSecretExpiresAt) > at.getTime();

    const endpointRow = (e: Endpoint) => html`<tr>
<td><code>${shown(e.url)}</code></td>
<td>${e.eventTypes.length === WEBHOOK_EVENT_TYPES.length ? 'all' : e.eventTypes.join(', ')}</td>
<td>${e.enabled ? 'enabled' : `disabled (${e.disabledReason ?? 'no reason given'})`}${overlap(e) ? html`<br><span class="muted">old secret valid until ${minute(e.previousSecretExpiresAt)}</span>` : ''}</td>
<td class="when">${minute(e.createdAt)}</td>
<td>${
      canChange
        ? html`<form method="post" action="/console/webhooks/${encodeURIComponent(e.id)}/test">${csrf}<button type="submit" class="secondary" aria-label="Send test event to ${e.url}">Send test event</button></form>
<form method="post" action="/console/webhooks/${encodeURIComponent(e.id)}/rotate" data-confirm="Rotate the secret of ${e.url}? The old secret stays valid for 24 hours; deliveries carry both signatures until then.">${csrf}<button type="submit" class="secondary" aria-label="Rotate secret of ${e.url}">Rotate secret</button></form>
${
  e.enabled
    ? html`<form method="post" action="/console/webhooks/${encodeURIComponent(e.id)}/disable">${csrf}<button type="submit" class="secondary" aria-label="Disable ${e.url}">Disable</button></form>`
    : html`<form method="post" action="/console/webhooks/${encodeURIComponent(e.id)}/enable">${csrf}<button type="submit" class="secondary" aria-label="Enable ${e.url}">Enable</button></form>`
}
<form method="post" action="/console/webhooks/${encodeURIComponent(e.id)}/remove" data-confirm="Remove ${e.url} and its delivery history?">${csrf}<button type="submit" class="danger" aria-label="Remove ${e.url}">Remove</button></form>`
        : ''
    }</td></tr>`;

    const deliveryRow = (d: Delivery) => html`<tr>
<td>${d.type}<br><code class="muted">${d.eventId}</code></td>
<td><code>${urlOf.get(d.endpointId) ?? d.endpointId}</code></td>
<td class="when">${second(d.createdAt)}</td>
<td>${d.attempts}</td>
<td>${d.status}</td>
<td>${lastResult(d)}</td>
<td class="when">${d.status === 'pending' ? second(d.nextAttemptAt) : '-'}</td>
${
  canChange
    ? html`<td>${
        d.status === 'failed'
          ? html`<form method="post" action="/console/webhooks/deliveries/${encodeURIComponent(d.id)}/replay">${csrf}<button type="submit" class="secondary" aria-label="Replay ${d.type} ${d.eventId}">Replay</button></form>`
          : ''
      }</td>`
    : ''
}</tr>`;

    return sendPage(reply, status, {
      title: 'Webhooks',
      nav: navFor(s, '/console/webhooks'),
      body: html`<h1>Webhooks</h1>
${message ?? ''}
<p>Climate Pulse sends events (${WEBHOOK_EVENT_TYPES.join(', ')}) to your endpoints as signed POST requests (Standard Webhooks): verify each with the endpoint's secret, then deduplicate on its <code>webhook-id</code>. A failed attempt is retried for about 28 hours.</p>
<h2>Endpoints</h2>
${
  endpoints.length === 0
    ? html`<p>No endpoints yet.</p>`
    : html`<table>
<caption>Endpoints of ${s.orgName}</caption>
<thead><tr><th scope="col">URL</th><th scope="col">Events</th><th scope="col">State</th><th scope="col">Created</th><th scope="col">Change</th></tr></thead>
<tbody>${endpoints.map(endpointRow)}</tbody>
</table>`
}
${
  canChange
    ? html`<h2>Add endpoint</h2>
<form method="post" action="/console/webhooks" class="stack">
${csrf}
<label for="f-url">URL</label> <input type="url" name="url" required maxlength="2048" id="f-url" placeholder="https://hooks.example.com/climate-pulse">
<fieldset class="checks"><legend>Events (none ticked: every type, also types added later)</legend>
${WEBHOOK_EVENT_TYPES.map((t, i) => html`<input type="checkbox" name="event:${t}" id="f-event-${i}"> <label for="f-event-${i}">${t}</label>`)}
</fieldset>
<button type="submit">Add endpoint</button>
</form>`
    : html`<p class="muted">Viewers can see endpoints and deliveries but not change them.</p>`
}
<h2>Deliveries</h2>
<p>${failedOnly ? html`Failed deliveries only. <a href="/console/webhooks">Show every delivery</a>` : html`${DELIVERIES_SHOWN} a page, newest first. <a href="/console/webhooks?failed=1">Show failed deliveries only</a>`}${cursor ? html` <a href="${pageLink({})}">Newest deliveries</a>` : ''}</p>
${
  deliveries.length === 0
    ? html`<p>No deliveries${failedOnly ? ' failed' : ' yet'}.</p>`
    : html`<table>
<caption>Deliveries of ${s.orgName}, newest first</caption>
<thead><tr><th scope="col">Event</th><th scope="col">Endpoint</th><th scope="col">Time</th><th scope="col">Attempts</th><th scope="col">Status</th><th scope="col">Last result</th><th scope="col">Next try</th>${canChange ? html`<th scope="col">Change</th>` : ''}</tr></thead>
<tbody>${deliveries.map(deliveryRow)}</tbody>
</table>`
}
${nextCursor ? html`<p><a href="${pageLink({ cursor: nextCursor })}">Older deliveries</a></p>` : ''}
${
  canChange
    ? html`<h2>Resend failed deliveries</h2>
<form method="post" action="/console/webhooks/resend-failed" class="stack">
${csrf}
<label for="f-since">Since (UTC)</label> <input type="datetime-local" name="since" id="f-since" step="1" required value="${localValue(new Date(at.getTime() - SECRET_OVERLAP_MS))}">
<p class="muted">Every failed delivery whose time is at or after this is sent again (same webhook-id, a new retry schedule); those of a disabled endpoint stay failed.</p>
<button type="submit">Resend failed</button>
</form>`
    : ''
}`,
    });
  };

  /** A new secret, shown once: in an element named "New webhook secret", with a copy button. */
  const shownOnce = (heading: string, secret: string, extra?: Safe) =>
    secretBox({ id: 'new-secret', heading, secret, label: 'New webhook secret', copy: 'Copy secret', extra });

  const outcome = changeOutcome(webhooksPage);
  const orgOf = (request: FastifyRequest) => request.member.orgId;

  scope.get('/webhooks', async (request, reply) => webhooksPage(request, reply, 200));

  scope.post('/webhooks', admin, async (request, reply) =>
    outcome(request, reply, async () => {
      const form = request.body as Form;
      const url = (form.url ?? '').trim();
      if (url.length === 0) throw new ApiError('invalid_request', 'The URL is required.');
      const e = await addOrgEndpoint(db, orgOf(request), { url, eventTypes: eventTypesOf(form), allowPrivate: options.allowPrivate }, actorOf(request), now());
      return shownOnce(
        `Endpoint ${e.url} added`,
        e.secret,
        html`<p>Every delivery to it is signed with this secret. Send a test event to check your receiver.</p>`,
      );
    }),
  );

  scope.post<{ Params: { endpointId: string } }>('/webhooks/:endpointId/rotate', admin, async (request, reply) =>
    outcome(request, reply, async () => {
      const e = await rotateOrgEndpointSecret(db, orgOf(request), request.params.endpointId, actorOf(request), now());
      return shownOnce(
        `New secret for ${e.url}`,
        e.secret,
        html`<p>The old secret stays valid until ${minute(e.previousSecretExpiresAt)}: until then every delivery carries two signatures, one under each secret, so your receiver can switch to the new one at any moment before that.</p>`,
      );
    }),
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
      const e = await removeOrgEndpoint(db, orgOf(request), request.params.endpointId, actorOf(request), now());
      return notice(`Endpoint ${e.url} removed, with its delivery history.`, 'ok');
    }),
  );

  scope.post<{ Params: { deliveryId: string } }>('/webhooks/deliveries/:deliveryId/replay', admin, async (request, reply) =>
    outcome(request, reply, async () => {
      const r = await replayOrgDelivery(db, orgOf(request), request.params.deliveryId, actorOf(request), now());
      return notice(`Delivery of ${r.type} ${r.eventId} to ${r.url} is sent again (same webhook-id, a new retry schedule).`, 'ok');
    }),
  );

  scope.post('/webhooks/resend-failed', admin, async (request, reply) =>
    outcome(request, reply, async () => {
      const r = await resendFailedOrgDeliveries(db, orgOf(request), sinceOf((request.body as Form).since), actorOf(request), now());
      const n = (k: number) => `${k} failed ${k === 1 ? 'delivery' : 'deliveries'}`;
      const skipped = r.skipped > 0 ? ` ${n(r.skipped)} of disabled endpoints stay failed.` : '';
      return notice(`${n(r.resent)} since ${second(r.since)} sent again.${skipped}`, 'ok');
    }),
  );
}
