import {
  CreateActionBodySchema,
  UpdateActionBodySchema,
  type Action,
  type CreateActionBody,
  type UpdateActionBody,
} from '../../../contract/schemas/actions.js';
import { asApiRequest, type Form } from '../../plugins/index.js';

/** A form's end date (a calendar day) as the API's endDate: the end of that day, UTC. */
const endOfDay = (date: string) => (/^\d{4}-\d\d-\d\d$/.test(date) ? `${date}T23:59:59.999Z` : date);

/** The create form as POST /v1/actions' body, checked by its schema: empty optional fields are left out. */
export function createBodyOf(form: Form): CreateActionBody {
  const body: Record<string, unknown> = { title: form.title ?? '' };
  if (form.description) body.description = form.description;
  if (form.endDate) body.endDate = endOfDay(form.endDate);
  if (form.subteamId) body.subteamId = form.subteamId;
  return asApiRequest<CreateActionBody>(CreateActionBodySchema, body);
}

/**
 * The edit form as PATCH /v1/actions/{id}'s body, checked by its schema: only the fields whose value
 * the form changes; an empty field clears. None changed: null.
 */
export function changeBodyOf(form: Form, current: Action): UpdateActionBody | null {
  const body: Record<string, unknown> = {};
  if (form.title !== undefined && form.title !== current.title) body.title = form.title;
  const description = form.description ? form.description : null;
  if (form.description !== undefined && description !== current.description) body.description = description;
  if (form.endDate !== undefined && form.endDate !== (current.endDate ?? '').slice(0, 10)) body.endDate = form.endDate ? endOfDay(form.endDate) : null;
  const team = form.subteamId ? form.subteamId : null;
  if (form.subteamId !== undefined && team !== current.subteamId) body.subteamId = team;
  if (form.status !== undefined && form.status !== current.status) body.status = form.status;
  return Object.keys(body).length === 0 ? null : asApiRequest<UpdateActionBody>(UpdateActionBodySchema, body);
}
