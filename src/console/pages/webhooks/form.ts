import type { FastifyRequest } from 'fastify';
import { ApiError } from '../../../contract/errors.js';
import { CreateEndpointBodySchema, ResendFailedBodySchema, type CreateEndpointBody, type ResendFailedBody } from '../../../contract/schemas/admin-webhooks.js';
import { WEBHOOK_EVENT_TYPES, type WebhookEventType } from '../../../domain/webhook-deliveries.js';
import { html, type Safe } from '../../html.js';
import { asApiRequest, queryText, type Form } from '../../plugins/index.js';
import type { Speaker } from '../../words.js';
import { code, reasonWords, urlRuleWords } from './view.js';

/** The add form's event types: one checkbox per type (a form field is given once); none ticked is every type. */
function eventTypesOf(form: Form): WebhookEventType[] | null {
  const ticked = WEBHOOK_EVENT_TYPES.filter((t) => form[`event:${t}`] === 'on');
  return ticked.length === 0 || ticked.length === WEBHOOK_EVENT_TYPES.length ? null : ticked;
}

/**
 * The add form as the operator API's endpoint body, checked by its schema (the API's rules and
 * messages); the domain then checks what the URL may reach.
 */
export function endpointBodyOf(form: Form): { url: string; eventTypes: WebhookEventType[] | null } {
  const body = asApiRequest<CreateEndpointBody>(CreateEndpointBodySchema, { url: (form.url ?? '').trim(), eventTypes: eventTypesOf(form) });
  return { url: body.url, eventTypes: (body.eventTypes ?? null) as WebhookEventType[] | null };
}

const BAD_SINCE = 'Since must be a date and time (UTC), like 2026-11-20 09:00.';

/**
 * The resend form's "since" as the API's body: a datetime-local value (`YYYY-MM-DDTHH:MM`, seconds
 * optional), read as UTC as the page's times are, then checked by the body's schema.
 */
export function resendBodyOf(form: Form): ResendFailedBody {
  const v = (form.since ?? '').trim();
  if (!/^\d{4}-\d\d-\d\dT\d\d:\d\d(:\d\d(\.\d{1,3})?)?$/.test(v)) throw new ApiError('invalid_request', BAD_SINCE);
  return asApiRequest<ResendFailedBody>(ResendFailedBodySchema, { since: `${v.length === 16 ? `${v}:00` : v}Z` });
}

/** The delivery log's filters in the page's address: failed ones only, and the page. */
export const deliveryFiltersOf = (request: FastifyRequest) => ({
  failed: (request.query as Record<string, unknown> | undefined)?.failed === '1',
  cursor: queryText(request, 'cursor'),
});

/**
 * A refusal of the webhooks page in the reader's words, chosen by the domain's code and what it
 * names (the endpoint or delivery, the URL rule broken); one this page does not know keeps the
 * domain's English message.
 */
export function webhookRefusal(err: ApiError, sp: Speaker): Safe {
  const { t } = sp;
  const m = err.message;
  let x: RegExpExecArray | null;
  if (err.code === 'not_found' && (x = /^no webhook (endpoint|delivery) "(.*)"$/.exec(m)))
    return sp.rich(x[1] === 'endpoint' ? 'console.webhooks.noSuchEndpoint' : 'console.webhooks.noSuchDelivery', { id: code(x[2]) });
  if (err.code === 'invalid_cursor') return html`${t('console.webhooks.badCursor')}`;
  if (err.code === 'invalid_request') {
    if (m === BAD_SINCE) return html`${t('console.webhooks.badSince', { example: '2026-11-20 09:00' })}`;
    const rule = urlRuleWords(m, t);
    if (rule !== null) return html`${rule}`;
    if ((x = /^delivery (\S+) is (\w+); only failed deliveries are replayed$/.exec(m)))
      return sp.rich('console.webhooks.notFailed', { id: code(x[1]), status: x[2] });
    if ((x = /^endpoint (\S+) is disabled \((.*)\); enable it first$/.exec(m)))
      return sp.rich('console.webhooks.replayDisabled', { id: code(x[1]), reason: reasonWords(x[2] === 'null' ? null : x[2], t) });
    if ((x = /^delivery (\S+) changed meanwhile; list it again$/.exec(m))) return sp.rich('console.webhooks.changedMeanwhile', { id: code(x[1]) });
  }
  return html`${m}`;
}
