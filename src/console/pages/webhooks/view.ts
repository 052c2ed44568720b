import type { Delivery, Endpoint } from '../../../contract/schemas/admin-webhooks.js';
import type { Translate } from '../../../i18n/index.js';
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

/** An identifier (an event's id or type, an endpoint's id) inside a sentence: code, as the developer copies it. */
export const code = (text: string) => html`<code>${text}</code>`;

/** The kinds of address a URL or a resolved host may be refused for (domain/webhook-deliveries.ts). */
const addressKind = (kind: string) =>
  ['private', 'loopback', 'link-local', 'multicast', 'unspecified', 'missing'].includes(kind) ? kind.replace('-', '') : 'other';

/**
 * What the delivery engine wrote of an attempt (its stored English text), in the reader's words:
 * never a host name of the network behind the resolver. A text this release does not know is shown
 * as it is.
 */
export function attemptWords(text: string, t: Translate = PLAIN.t): string {
  let m: RegExpExecArray | null;
  if ((m = /^HTTP (\d+)$/.exec(text))) return t('console.webhooks.resultStatus', { status: m[1] });
  if ((m = /^HTTP (\d+) \(redirects are not followed\)$/.exec(text))) return t('console.webhooks.resultRedirect', { status: m[1] });
  if (text === 'HTTP 410: endpoint disabled') return t('console.webhooks.resultGone');
  if ((m = /^timed out after (\d+) ms$/.exec(text))) return t('console.webhooks.resultTimeout', { ms: Number(m[1]) });
  if ((m = /^refused: \S+ resolves to an? (\S+) address$/.exec(text))) return t('console.webhooks.resultRefused', { kind: addressKind(m[1]) });
  if ((m = /^network error: (\S+)$/.exec(text))) return t('console.webhooks.resultNetwork', { error: m[1] });
  if (text === 'endpoint disabled') return t('console.webhooks.resultDisabled');
  if ((m = /^endpoint disabled: (.+)$/s.exec(text))) return t('console.webhooks.resultDisabledBy', { reason: reasonWords(m[1], t) });
  if (text === 'abandoned at shutdown') return t('console.webhooks.resultAbandoned');
  return urlRuleWords(text, t) ?? text.replace(/^refused: \S+ resolves to/, "refused: the endpoint's host resolves to");
}

/** The URL rule's refusals (checkWebhookUrl) in the reader's words; null for any other text. */
export function urlRuleWords(text: string, t: Translate): string | null {
  let m: RegExpExecArray | null;
  if ((m = /^not a URL: (.*)$/s.exec(text))) return t('console.webhooks.notUrl', { url: m[1] });
  if (text === 'the URL is longer than 2048 characters') return t('console.webhooks.urlTooLong', { max: 2048 });
  if (text === 'the URL must not carry credentials') return t('console.webhooks.urlCredentials');
  if ((m = /^the URL must be https:\/\/ \(got (\S+)\)$/.exec(text))) return t('console.webhooks.urlScheme', { scheme: m[1] });
  if (text.startsWith('the URL must be https:// (http:// only to loopback')) return t('console.webhooks.urlHttps');
  if ((m = /^the URL points to an? (\S+) address \((.*)\); webhooks go to public hosts only$/.exec(text)))
    return t('console.webhooks.urlAddress', { kind: addressKind(m[1]), host: m[2] });
  return null;
}

/** Why an endpoint is disabled (its stored reason), in the reader's words. */
export function reasonWords(reason: string | null, t: Translate = PLAIN.t): string {
  if (reason === null) return t('console.webhooks.noReason');
  if (reason === 'HTTP 410 Gone') return t('console.webhooks.reasonGone');
  if (reason === 'disabled by the operator') return t('console.webhooks.reasonOperator');
  const m = /^disabled by (key )?(.+)$/.exec(reason);
  if (m) return m[1] ? t('console.webhooks.reasonKey', { key: m[2] }) : t('console.webhooks.reasonMember', { email: m[2] });
  return reason;
}

/** An attempt's error as the page shows it (the reader's words; English without a translator). */
export const shownError = (text: string, t: Translate = PLAIN.t) => attemptWords(text, t);

/** The last attempt's error (a status that failed is one), else its status. */
const lastResult = (d: Delivery, t: Translate) =>
  d.lastError !== null
    ? attemptWords(d.lastError, t)
    : d.lastStatusCode !== null
      ? t('console.webhooks.resultStatus', { status: String(d.lastStatusCode) })
      : '-';

/** A new secret, shown once: in an element named "New webhook secret", with a copy button. */
const shownOnce = (heading: string, secret: string, extra: Safe, sp: Speaker) =>
  secretBox({ id: 'new-secret', heading, secret, label: sp.t('console.webhooks.newSecret'), copy: sp.t('console.webhooks.copySecret'), extra }, sp);

/** The page after an endpoint is added: its secret, once. */
export const addedSecret = (e: { url: string; secret: string }, sp: Speaker = PLAIN) =>
  shownOnce(sp.t('console.webhooks.addedHeading', { url: e.url }), e.secret, html`<p>${sp.t('console.webhooks.addedHelp')}</p>`, sp);

/** The page after a secret is rotated: the new one, once, and until when the old one holds. */
export const rotatedSecret = (e: { url: string; secret: string; previousSecretExpiresAt: string | null }, sp: Speaker = PLAIN) =>
  shownOnce(
    sp.t('console.webhooks.rotatedHeading', { url: e.url }),
    e.secret,
    html`<p>${sp.t('console.webhooks.rotatedHelp', { when: minute(e.previousSecretExpiresAt, sp) })}</p>`,
    sp,
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
  // Members' emails are for owners and admins (issue 52, L3): others read who disabled an endpoint as "a member".
  const t: Translate = canChange
    ? sp.t
    : (key, values) => (key === 'console.webhooks.reasonMember' ? sp.t('console.webhooks.reasonAMember') : sp.t(key, values));
  const minute = (iso: string | null | undefined) => sp.when(iso, '-');
  const second = (iso: string | null | undefined) => sp.when(iso, '-', 'second');
  const pageLink = (q: Record<string, string>) => `/console/webhooks?${new URLSearchParams(failedOnly ? { failed: '1', ...q } : q).toString()}`;
  const shown = (url: string) => (canChange ? url : hostOf(url, t));
  const urlOf = new Map(endpoints.map((e) => [e.id, shown(e.url)]));
  const csrf = csrfField(s.csrfToken);
  const overlap = (e: Endpoint) => e.previousSecretExpiresAt !== null && Date.parse(e.previousSecretExpiresAt) > at.getTime();
  // Event types as code, listed the way the reader's locale lists things ("a, b, c").
  const typeList = (types: readonly string[]) =>
    new Intl.ListFormat(sp.locale, { type: 'unit', style: 'short' })
      .formatToParts(types)
      .map((part) => (part.type === 'element' ? html`<code>${part.value}</code>` : html`${part.value}`));

  const endpointRow = (e: Endpoint) => html`<tr>
<td><code>${shown(e.url)}</code></td>
<td>${e.eventTypes.length === WEBHOOK_EVENT_TYPES.length ? t('console.webhooks.allEvents') : typeList(e.eventTypes)}</td>
<td>${e.enabled ? t('console.webhooks.enabled') : t('console.webhooks.disabled', { reason: reasonWords(e.disabledReason, t) })}${overlap(e) ? html`<br><span class="muted">${t('console.webhooks.oldSecretUntil', { when: minute(e.previousSecretExpiresAt) })}</span>` : ''}</td>
<td class="when">${minute(e.createdAt)}</td>
<td>${
    canChange
      ? html`<form method="post" action="/console/webhooks/${encodeURIComponent(e.id)}/test">${csrf}<button type="submit" class="secondary" aria-label="${t('console.webhooks.testLabel', { url: e.url })}">${t('console.webhooks.test')}</button></form>
<form method="post" action="/console/webhooks/${encodeURIComponent(e.id)}/rotate" data-confirm="${t('console.webhooks.rotateConfirm', { url: e.url })}">${csrf}<button type="submit" class="secondary" aria-label="${t('console.webhooks.rotateLabel', { url: e.url })}">${t('console.webhooks.rotate')}</button></form>
${
  e.enabled
    ? html`<form method="post" action="/console/webhooks/${encodeURIComponent(e.id)}/disable">${csrf}<button type="submit" class="secondary" aria-label="${t('console.webhooks.disableLabel', { url: e.url })}">${t('console.webhooks.disable')}</button></form>`
    : html`<form method="post" action="/console/webhooks/${encodeURIComponent(e.id)}/enable">${csrf}<button type="submit" class="secondary" aria-label="${t('console.webhooks.enableLabel', { url: e.url })}">${t('console.webhooks.enable')}</button></form>`
}
<form method="post" action="/console/webhooks/${encodeURIComponent(e.id)}/remove" data-confirm="${t('console.webhooks.removeConfirm', { url: e.url })}">${csrf}<button type="submit" class="danger" aria-label="${t('console.webhooks.removeLabel', { url: e.url })}">${t('console.webhooks.remove')}</button></form>`
      : ''
  }</td></tr>`;

  const deliveryRow = (d: Delivery) => html`<tr>
<td id="delivery-${d.id}"><code>${d.type}</code><br><code class="muted">${d.eventId}</code></td>
<td><code>${urlOf.get(d.endpointId) ?? d.endpointId}</code></td>
<td class="when">${second(d.createdAt)}</td>
<td>${sp.number(d.attempts)}</td>
<td>${t('console.webhooks.deliveryStatus', { status: d.status })}</td>
<td>${lastResult(d, t)}</td>
<td class="when">${d.status === 'pending' ? second(d.nextAttemptAt) : '-'}</td>
${
  canChange
    ? html`<td>${
        d.status === 'failed'
          ? html`<form method="post" action="/console/webhooks/deliveries/${encodeURIComponent(d.id)}/replay">${csrf}<button type="submit" class="secondary" aria-describedby="delivery-${d.id}">${t('console.webhooks.replay')}</button></form>`
          : ''
      }</td>`
    : ''
}</tr>`;

  return {
    title: t('console.webhooks.title'),
    speaker: sp,
    nav: navFor(s, '/console/webhooks'),
    body: html`<h1>${t('console.webhooks.title')}</h1>
${message ?? ''}
<p>${sp.rich('console.webhooks.intro', { types: html`${typeList(WEBHOOK_EVENT_TYPES)}`, id: code('webhook-id') })}</p>
<h2>${t('console.webhooks.endpoints')}</h2>
${
  endpoints.length === 0
    ? html`<p>${t('console.webhooks.noEndpoints')}</p>`
    : html`<table>
<caption>${t('console.webhooks.endpointsCaption', { org: s.orgName })}</caption>
<thead><tr><th scope="col">${t('console.webhooks.url')}</th><th scope="col">${t('console.webhooks.events')}</th><th scope="col">${t('console.webhooks.state')}</th><th scope="col">${t('console.webhooks.created')}</th><th scope="col">${t('console.webhooks.change')}</th></tr></thead>
<tbody>${endpoints.map(endpointRow)}</tbody>
</table>`
}
${
  canChange
    ? html`<h2>${t('console.webhooks.addHeading')}</h2>
<form method="post" action="/console/webhooks" class="stack">
${csrf}
<label for="f-url">${t('console.webhooks.url')}</label> <input type="url" name="url" required maxlength="2048" id="f-url" placeholder="${t('console.webhooks.urlPlaceholder')}">
<fieldset class="checks"><legend>${t('console.webhooks.eventsLegend')}</legend>
${WEBHOOK_EVENT_TYPES.map((type, i) => html`<input type="checkbox" name="event:${type}" id="f-event-${i}"> <label for="f-event-${i}"><code>${type}</code></label>`)}
</fieldset>
<button type="submit">${t('console.webhooks.add')}</button>
</form>`
    : html`<p class="muted">${t('console.webhooks.viewersOnly')}</p>`
}
<h2>${t('console.webhooks.deliveries')}</h2>
<p>${failedOnly ? html`${t('console.webhooks.failedOnly')} <a href="/console/webhooks">${t('console.webhooks.showAll')}</a>` : html`${t('console.webhooks.perPage', { n: DELIVERIES_SHOWN })} <a href="/console/webhooks?failed=1">${t('console.webhooks.showFailed')}</a>`}${cursor ? html` <a href="${pageLink({})}">${t('console.webhooks.newest')}</a>` : ''}</p>
${
  deliveries.length === 0
    ? html`<p>${failedOnly ? t('console.webhooks.noFailed') : t('console.webhooks.noDeliveries')}</p>`
    : html`<table>
<caption>${t('console.webhooks.deliveriesCaption', { org: s.orgName })}</caption>
<thead><tr><th scope="col">${t('console.webhooks.event')}</th><th scope="col">${t('console.webhooks.endpoint')}</th><th scope="col">${t('console.webhooks.time')}</th><th scope="col">${t('console.webhooks.attempts')}</th><th scope="col">${t('console.webhooks.status')}</th><th scope="col">${t('console.webhooks.lastResult')}</th><th scope="col">${t('console.webhooks.nextTry')}</th>${canChange ? html`<th scope="col">${t('console.webhooks.change')}</th>` : ''}</tr></thead>
<tbody>${deliveries.map(deliveryRow)}</tbody>
</table>`
}
${nextCursor ? html`<p><a href="${pageLink({ cursor: nextCursor })}">${t('console.webhooks.older')}</a></p>` : ''}
${
  canChange
    ? html`<h2>${t('console.webhooks.resendHeading')}</h2>
<form method="post" action="/console/webhooks/resend-failed" class="stack">
${csrf}
<label for="f-since">${t('console.webhooks.since')}</label> <input type="datetime-local" name="since" id="f-since" step="1" required value="${localValue(new Date(at.getTime() - SECRET_OVERLAP_MS))}">
<p class="muted">${t('console.webhooks.resendHelp')}</p>
<button type="submit">${t('console.webhooks.resend')}</button>
</form>`
    : ''
}`,
  };
}
