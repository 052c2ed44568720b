import type { Queryable } from '../db/executor.js';
import {
  getAction,
  getActionForUpdate,
  insertActionNotingSubscribers,
  listActions,
  recentActions,
  updateActionRow,
  type ActionRow,
  type ActionStatus,
} from '../db/repositories/actions.js';
import { teamExists } from '../db/repositories/teams.js';
import { ApiError, invalid, notFound } from '../contract/errors.js';
import type { Action, CreateActionBody, UpdateActionBody } from '../contract/schemas/actions.js';
import type { ActionChanges } from '../contract/schemas/webhook-events.js';
import { auditRow, recordAudit, type Actor } from './audit.js';
import { newId } from './ids.js';
import { parseDateTime } from './time.js';
import { isSubscribed, recordEvent } from './webhook-deliveries.js';

/** An action as GET /actions shows it: the id under the key `$id`. */
export const toActionItem = ({ id, ...rest }: ActionRow): Action => ({ $id: id, ...rest });

/** GET /actions: every action of the organization, newest first, each with its id under `$id`. */
export async function listActionItems(db: Queryable, orgId: string): Promise<Action[]> {
  return (await listActions(db, orgId)).map(toActionItem);
}

/** The console's lists: the newest `limit` actions (or only the open ones), and whether there are more. */
export async function listRecentActionItems(db: Queryable, orgId: string, limit: number, only?: 'open'): Promise<{ items: Action[]; more: boolean }> {
  const { rows, more } = await recentActions(db, orgId, limit, only);
  return { items: rows.map(toActionItem), more };
}

/** One action as GET /actions shows it, or null when the organization has none with this id. */
export async function getActionItem(db: Queryable, orgId: string, id: string): Promise<Action | null> {
  const row = await getAction(db, orgId, id);
  return row ? toActionItem(row) : null;
}

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

/** POST /actions, inside its idempotency transaction (`tx`), which the audit row shares. */
export async function createAction(tx: Queryable, orgId: string, body: CreateActionBody, actor: Actor, now: Date): Promise<{ id: string }> {
  const start = now.toISOString();
  const endDate = body.endDate !== undefined ? parseDateTime(body.endDate, 'endDate') : null;
  if (endDate && endDate < now) throw invalid("Body field 'endDate' must not be before the action's start (now).");
  await checkTeam(tx, orgId, body.subteamId);
  const id = newId('act');
  const details = { status: 'active', subteamId: body.subteamId ?? null };
  const audit = auditRow(actor, { action: 'action.created', target: { kind: 'action', id }, details }, now);
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
    audit,
  );
  if (subscribed) await recordEvent(tx, orgId, 'action.created', await currentItem(tx, orgId, id), now);
  return { id };
}

/** What an `action.updated` event carries besides the action: each changed field, before and after (its schema: ActionChangesSchema). */
function changesBetween(before: Action, after: Action): ActionChanges {
  const out: Record<string, { from: unknown; to: unknown }> = {};
  for (const k of Object.keys(after) as (keyof Action)[]) {
    if (before[k] !== after[k]) out[k] = { from: before[k], to: after[k] };
  }
  return out as ActionChanges;
}

/**
 * CONTRACT section 5: active -> done | cancelled, done | cancelled -> active; the same status
 * again changes nothing; done <-> cancelled is refused (reopen first).
 */
export function checkTransition(from: ActionStatus, to: ActionStatus) {
  if (from === to || from === 'active' || to === 'active') return;
  throw new ApiError('invalid_transition', `An action that is ${from} cannot become ${to} directly; set its status to active first.`);
}

/**
 * PATCH /actions/{id}, in the caller's transaction (`tx`), which the audit row shares: it names the
 * fields whose value changed and the new status, never the title's or description's text.
 */
export async function updateAction(tx: Queryable, orgId: string, id: string, body: UpdateActionBody, actor: Actor, now: Date): Promise<{ id: string }> {
  // Locks the row: two edits of one action apply one after the other.
  const action = await getActionForUpdate(tx, orgId, id);
  if (!action) throw notFound('Action');
  let endDate: string | null | undefined;
  if (body.endDate === null) endDate = null;
  else if (body.endDate !== undefined) {
    const end = parseDateTime(body.endDate, 'endDate');
    if (end < new Date(action.startDate)) throw invalid(`Body field 'endDate' must not be before the action's startDate (${action.startDate}).`);
    endDate = end.toISOString();
  }
  await checkTeam(tx, orgId, body.subteamId);
  // After the checks of the body's values: a request that breaks a rule is 400 whatever its status asks.
  if (body.status !== undefined) checkTransition(action.status, body.status);
  const before = (await isSubscribed(tx, orgId, 'action.updated')) ? await currentItem(tx, orgId, id) : null;
  await updateActionRow(tx, orgId, id, {
    title: body.title,
    description: body.description,
    endDate,
    subteamId: body.subteamId,
    status: body.status,
  });
  if (before) {
    const after = await currentItem(tx, orgId, id);
    const changes = changesBetween(before, after);
    // A PATCH that changes nothing visible raises no event.
    if (Object.keys(changes).length > 0) await recordEvent(tx, orgId, 'action.updated', after, now, { changes });
  }
  const next = { title: body.title, description: body.description, endDate, subteamId: body.subteamId, status: body.status };
  const changed = (Object.keys(next) as (keyof typeof next)[]).filter((k) => next[k] !== undefined && next[k] !== action[k]);
  const details = { changed, ...(changed.includes('status') ? { status: body.status } : {}) };
  await recordAudit(tx, orgId, actor, { action: 'action.updated', target: { kind: 'action', id }, details }, now);
  return { id };
}
