import type { FastifyRequest } from 'fastify';
import { ApiError } from '../../../contract/errors.js';
import { CreateEndpointBodySchema, ResendFailedBodySchema, type CreateEndpointBody, type ResendFailedBody } from '../../../contract/schemas/admin-webhooks.js';
import { WEBHOOK_EVENT_TYPES, type WebhookEventType } from '../../../domain/webhook-deliveries.js';
import { asApiRequest, queryText, type Form } from '../../plugins/index.js';

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

/**
 * The resend form's "since" as the API's body: a datetime-local value (`YYYY-MM-DDTHH:MM`, seconds
 * optional), read as UTC as the page's times are, then checked by the body's schema.
 */
export function resendBodyOf(form: Form): ResendFailedBody {
  const v = (form.since ?? '').trim();
  if (!/^\d{4}-\d\d-\d\dT\d\d:\d\d(:\d\d(\.\d{1,3})?)?$/.test(v))
    throw new ApiError('invalid_request', 'Since must be a date and time (UTC), like 2026-11-20 09:00.');
  return asApiRequest<ResendFailedBody>(ResendFailedBodySchema, { since: `${v.length === 16 ? `${v}:00` : v}Z` });
}

/** The delivery log's filters in the page's address: failed ones only, and the page. */
export const deliveryFiltersOf = (request: FastifyRequest) => ({
  failed: (request.query as Record<string, unknown> | undefined)?.failed === '1',
  cursor: queryText(request, 'cursor'),
});
