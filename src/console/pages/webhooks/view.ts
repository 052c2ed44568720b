import type { Delivery, Endpoint } from '../../../contract/schemas/admin-webhooks.js';
import { SECRET_OVERLAP_MS, WEBHOOK_EVENT_TYPES } from '../../../domain/webhook-deliveries.js';
import type { ConsoleSession } from '../../../domain/sessions.js';
import { csrfField, html, type PageOptions, type Safe } from '../../html.js';
import { navFor } from '../../views/nav.js';
import { hostOf, secretBox } from '../../views/layout.js';
import { PLAIN, type Speaker } from '../../words.js';

export const DELIVERIES_SHOWN = 50;

/** An instant in the reader's locale and the organization's time zone (PLAIN: en-GB, UTC), to the minute or the second. */
export const minute = (iso: string | null | undefined, sp: Speaker = PLAIN) => sp.when(iso, '-');
export const second = (iso: string | null | undefined, sp: Speaker = PLAIN) => sp.when(iso, '-', 'second');
/** A value for `<input type="datetime-local">` (read as UTC): the instant to the second. */
const localValue = (d: Date) => d.toISOString().slice(0, 19);

/** An attempt's error as the page shows it: never a host name of the network behind the resolver. */
export const shownError = (text: string) => text.replace(/^refused: \S+ resolves to/, "refused: the endpoint's host resolves to");

/** The last attempt's error (a status that failed is one), else its status. */
const lastResult = (d: Delivery) => (d.lastError !== null ? shownError(d.lastError) : d.lastStatusCode !== null ? `HTTP ${d.lastStatusCode}` : '-');

/** A new secret, shown once: in an element named "New webhook secret", with a copy button. */
const shownOnce = (heading: string, secret: string, extra: Safe) =>
  secretBox({ id: 'new-secret', heading, secret, label: 'New webhook secret', copy: 'Copy secret', extra });

/** The page after an endpoint is added: its secret, once. */
export const addedSecret = (e: { url: string; secret: string }) =>
  shownOnce(`Endpoint ${e.url} added`, e.secret, html`<p>Every delivery to it is signed with this secret. Send a test event to check your receiver.</p>`);

/** The page after a secret is rotated: the new one, once, and until when the old one holds. */
export const rotatedSecret = (e: { url: string; secret: string; previousSecretExpiresAt: string | null }, sp: Speaker = PLAIN) =>
  shownOnce(
    `New secret for ${e.url}`,
    e.secret,
    html`<p>The old secret stays valid until ${minute(e.previousSecretExpiresAt, sp)}: until then every delivery carries two signatures, one under each secret, so your receiver can switch to the new one at any moment before that.</p>`,
  );

export interface WebhooksData {
  session: ConsoleSession;
  /** The page's time: an old secret's overlap, the resend form's default. */
  at: Date;
  endpoints: Endpoint[];
  /** One page of the delivery log, newest first, and the filters it was read with. */
  deliveries: Delivery[];
  nextCursor: string | null;
  failedOnly: boolean;
  cursor: string | undefined;
  message?: Safe;
  speaker?: Speaker;
}

/**
 * The webhooks page: the endpoints and the delivery log; for admins and owners the forms that add,
 * test, rotate, disable, enable and remove endpoints, replay a delivery and resend failed ones. A
 * viewer sees an endpoint's host, not its path or query.
 */
export function webhooksView({
  session: s,
  at,
  endpoints,
  deliveries,
  nextCursor,
  failedOnly,
  cursor,
  message,
  speaker: sp = PLAIN,
}: WebhooksData): PageOptions {
  const canChange = s.member.role === 'owner' || s.member.role === 'admin';
  const minute = (iso: string | null | undefined) => sp.when(iso, '-');
  const second = (iso: string | null | undefined) => sp.when(iso, '-', 'second');
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

  return {
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
  };
}
