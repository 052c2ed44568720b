import type { Queryable } from '../db/executor.js';
import { getAction, getActionForUpdate, insertActionNotingSubscribers, updateAction, type ActionRow } from '../db/repositories/actions.js';
import { teamExists } from '../db/repositories/teams.js';
import { invalid, notFound } from '../contract/errors.js';
import type { Action, CreateActionBody, UpdateActionBody } from '../contract/schemas/actions.js';
import { newId } from './keys.js';
import { parseDateTime } from './time.js';
import { isSubscribed, recordEvent } from './webhooks.js';

/** An action as GET /actions shows it: the id under the key `$id`. */
export const toActionItem = ({ id, ...rest }: ActionRow): Action => ({ $id: id, ...rest });

/** The action as GET /actions shows it, read inside the transaction that changed it. */
async function currentItem(tx: Queryable, orgId: string, id: string): Promise<Action> {
  const row = await getAction(tx, orgId, id);
  if (!row) throw new Error(`action ${id} is missing inside its own transaction`);
  return toActionItem(row);
}

async function checkTeam(tx: Queryable, orgId: string, subteamId: string | null | undefined) {
  if (subteamId != null && !(await teamExists(tx, orgId, subteamId))) {
    throw invalid(`Body field 'subteamId' names no team of this organization: ${JSON.stringify(subteamId)}.`);
  }
}

export async function createAction(tx: Queryable, orgId: string, body: CreateActionBody, now: Date): Promise<{ id: string }> {
  const start = now.toISOString();
  const endDate = body.endDate !== undefined ? parseDateTime(body.endDate, 'endDate') : null;
  if (endDate && endDate < now) throw invalid("Body field 'endDate' must not be before the action's start (now).");
  await checkTeam(tx, orgId, body.subteamId);
  const id = newId('act');
  const subscribed = await insertActionNotingSubscribers(
    tx,
    orgId,
    {
      id,
      title: body.title,
      description: body.description ?? null,
      startDate: start,
      endDate: endDate?.toISOString() ?? null,
      status: 'active',
      subteamId: body.subteamId ?? null,
      createdAt: start,
    },
    'action.created',
  );
  if (subscribed) await recordEvent(tx, orgId, 'action.created', await currentItem(tx, orgId, id), now);
  return { id };
}

export async function editAction(tx: Queryable, orgId: string, id: string, body: UpdateActionBody): Promise<{ id: string }> {
  // Locks the row: two edits of one action apply one after the other.
  const action = await getActionForUpdate(tx, orgId, id);
  if (!action) throw notFound('Action');
  let endDate: string | undefined;
  if (body.endDate !== undefined) {
    const end = parseDateTime(body.endDate, 'endDate');
    if (end < new Date(action.startDate)) throw invalid(`Body field 'endDate' must not be before the action's startDate (${action.startDate}).`);
    endDate = end.toISOString();
  }
  await checkTeam(tx, orgId, body.subteamId);
  const before = (await isSubscribed(tx, orgId, 'action.updated')) ? await currentItem(tx, orgId, id) : null;
  await updateAction(tx, orgId, id, { title: body.title, description: body.description, endDate, subteamId: body.subteamId });
  if (before) {
    const after = await currentItem(tx, orgId, id);
    // A PATCH that changes nothing visible raises no event.
    if (JSON.stringify(after) !== JSON.stringify(before)) await recordEvent(tx, orgId, 'action.updated', after);
  }
  return { id };
}
