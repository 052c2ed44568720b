import type { DatabaseExecutor, Queryable } from '../db/executor.js';
import {
  insertAuditEvent,
  listAuditEvents as listRows,
  listAuditEventsInRange,
  type AuditActorKind,
  type AuditKeyset,
  type AuditRow,
} from '../db/repositories/audit.js';
import { getOrgRecord } from '../db/repositories/orgs.js';
import { AUDIT_ACTIONS, type AuditAction, type AuditEvent, type AuditEventList } from '../contract/schemas/admin-audit.js';
import { ApiError, invalid } from '../contract/errors.js';
import { csvLine } from './csv.js';
import { newId } from './ids.js';
import { decodeKeysetCursor, encodeKeysetCursor } from './pulses.js';

/**
 * Who makes a change (CONTRACT.md sections 10 and 11). Every domain operation that changes an
 * organization's data takes one (required, like `now`) and writes its audit row with
 * `recordAudit`, in the transaction of the change: a change that rolls back leaves no row, and
 * the console, the operator API and the public API read one log.
 *
 * - operator: the operator API (its TCP listener, its Unix socket, the CLI in-process);
 * - key: an API key of the organization (the public API), named by its display prefix;
 * - member: a person signed in to the console, named by their email;
 * - scim: an organization's SCIM token (issue 56), written as a key named by its display prefix
 *   (`cp_scim_...`): the identity provider that used it, never a member.
 *
 * `address` is the client's address as the face sees it (request.ip, so TRUST_PROXY decides).
 */
export type Actor =
  | { kind: 'operator'; address?: string | null }
  | { kind: 'key'; keyId: string; prefix: string; address?: string | null }
  | { kind: 'member'; memberId: string; email: string; address?: string | null }
  | { kind: 'scim'; tokenId: string; prefix: string; address?: string | null };

/** The operator, from `address` (none over the Unix socket). */
export const operatorActor = (address?: string | null): Actor => ({ kind: 'operator', address: address ?? null });

/** What an audit row says was done, and to what. `details` holds small facts, never a secret. */
export interface AuditChange {
  action: AuditAction;
  target: { kind: string; id: string | null };
  details?: Record<string, unknown>;
}

/**
 * Names no detail may have: a secret, key, hash, password, token or comment never enters the
 * log. A guard against a mistake in this code, not a filter of input: an operation that passes one
 * is a bug and fails (its change rolls back with it).
 */
const FORBIDDEN_DETAIL = /secret|password|hash|token|comment|^key$/i;

function who(actor: Actor): { kind: AuditActorKind; id: string | null; label: string } {
  switch (actor.kind) {
    case 'operator':
      return { kind: 'operator', id: null, label: 'operator' };
    case 'key':
      return { kind: 'key', id: actor.keyId, label: actor.prefix };
    case 'member':
      return { kind: 'member', id: actor.memberId, label: actor.email };
    case 'scim':
      return { kind: 'key', id: actor.tokenId, label: actor.prefix };
  }
}

/** How the log names an actor: a member's email, `operator`, or a key's display prefix. */
export const actorLabel = (actor: Actor): string => who(actor).label;

/** An address as stored: what the face saw, bounded; none when there was none. */
const addressOf = (actor: Actor): string | null => {
  const a = actor.address;
  return typeof a === 'string' && a.length > 0 && a.length <= 64 ? a : null;
};

/**
 * The audit row of a change, checked: for an operation that writes it within the statement of the
 * change itself (POST /actions' hot path), or through `recordAudit`.
 */
export function auditRow(actor: Actor, change: AuditChange, now: Date): AuditRow {
  const details = change.details ?? {};
  for (const name of Object.keys(details)) {
    if (FORBIDDEN_DETAIL.test(name)) throw new Error(`audit detail ${JSON.stringify(name)} of ${change.action} may hold a secret or a comment`);
  }
  const by = who(actor);
  return {
    id: newId('aud'),
    createdAt: new Date(Math.floor(now.getTime())).toISOString(),
    actorKind: by.kind,
    actorId: by.id,
    actorLabel: by.label,
    action: change.action,
    targetKind: change.target.kind,
    targetId: change.target.id,
    address: addressOf(actor),
    details,
  };
}

/**
 * Writes the audit row of a change. `tx` must be the transaction of the change itself, so that
 * the row exists exactly when the change does.
 */
export async function recordAudit(tx: Queryable, orgId: string, actor: Actor, change: AuditChange, now: Date): Promise<void> {
  await insertAuditEvent(tx, orgId, auditRow(actor, change, now));
}

const toItem = (r: AuditRow): AuditEvent => ({
  id: r.id,
  createdAt: r.createdAt,
  actor: { kind: r.actorKind, id: r.actorId, label: r.actorLabel },
  action: r.action,
  target: { kind: r.targetKind, id: r.targetId },
  address: r.address,
  details: r.details,
});

export const DEFAULT_AUDIT_LIMIT = 50;

/**
 * `GET /admin/v1/organizations/{orgId}/audit-events` and `climate-pulse audit`: the organization's
 * audit log, newest first by (createdAt, id), a page at a time. The cursor is `createdAt|id` of the
 * last item, as GET /pulses's. Deleted organizations too (a soft delete keeps the log); an unknown
 * one has an empty log (the route checks that it exists).
 */
export const AUDIT_ACTOR_KINDS = ['member', 'operator', 'key'] as const;

/** An actor filter: member, operator or key (the operator API's schema says the same). */
export function checkActorKind(kind: string | undefined): AuditActorKind | undefined {
  if (kind !== undefined && !AUDIT_ACTOR_KINDS.includes(kind as AuditActorKind)) throw invalid('The actor filter must be member, operator or key.');
  return kind as AuditActorKind | undefined;
}

/**
 * An action filter that names a known action. The operator API filters by any action text (an
 * unknown one finds nothing); the console offers only the known ones and refuses the others.
 */
export function checkKnownAction(action: string | undefined): string | undefined {
  if (action !== undefined && !AUDIT_ACTIONS.includes(action as AuditAction)) throw invalid('Unknown action filter.');
  return action;
}

export async function listAuditEvents(
  db: Queryable,
  orgId: string,
  q: { limit?: number; cursor?: string; actorKind?: AuditActorKind; action?: string },
): Promise<AuditEventList> {
  const limit = q.limit ?? DEFAULT_AUDIT_LIMIT;
  const after = q.cursor !== undefined ? decodeKeysetCursor(q.cursor, 'this audit log') : undefined;
  // One extra row tells whether another page exists, so nextCursor is never a dead end.
  const rows = await listRows(db, orgId, { actorKind: q.actorKind, action: q.action, after, limit: limit + 1 });
  const items = rows.slice(0, limit).map(toItem);
  const last = items[items.length - 1];
  return { items, nextCursor: rows.length > limit ? encodeKeysetCursor({ createdAt: last.createdAt, id: last.id }) : null };
}

/** A URL's host, or a word saying it could not be read (a viewer sees a webhook endpoint's host only). */
function hostOf(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return '(unreadable URL)';
  }
}

/**
 * An event as a viewer may read it (CONTRACT.md section 11: members' emails, addresses and
 * invitations are for owners and admins): a member actor by id only, no address, no detail named
 * email or address, a URL as its host, any other text with an `@` hidden. The console's audit page
 * and every export a viewer makes go through this one function.
 */
export function auditEventForViewer(e: AuditEvent): AuditEvent {
  const details: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(e.details)) {
    if (k === 'email' || k === 'address') continue;
    if (typeof v === 'string' && (k === 'url' || /^https?:\/\//.test(v))) details[k] = hostOf(v);
    else if (typeof v === 'string' && v.includes('@')) details[k] = '(hidden)';
    else details[k] = v;
  }
  const actor = e.actor.kind === 'member' ? { kind: e.actor.kind, id: e.actor.id, label: `a member (${e.actor.id ?? 'unknown'})` } : e.actor;
  return { ...e, actor, address: null, details };
}

export const AUDIT_EXPORT_FORMATS = ['jsonl', 'csv'] as const;
export type AuditExportFormat = (typeof AUDIT_EXPORT_FORMATS)[number];

/** The columns of the CSV export, in order; `details` is the event's details as JSON. */
export const AUDIT_CSV_COLUMNS = ['id', 'createdAt', 'actorKind', 'actorId', 'actorLabel', 'action', 'targetKind', 'targetId', 'address', 'details'] as const;

/** One event as a CSV record (every cell through csvCell: none is read as a formula). */
export const auditCsvLine = (e: AuditEvent): string =>
  csvLine([e.id, e.createdAt, e.actor.kind, e.actor.id, e.actor.label, e.action, e.target.kind, e.target.id, e.address, JSON.stringify(e.details)]);

/** Events read per query while exporting: the memory an export holds, whatever the log's size. */
export const EXPORT_BATCH = 500;

export interface AuditExportRange {
  /** Inclusive. */
  from: string;
  /** Exclusive. */
  to: string;
}

const instantOf = (value: unknown, name: string): Date | undefined => {
  if (value === undefined || value === null || value === '') return undefined;
  const d = typeof value === 'string' ? new Date(value) : new Date(Number.NaN);
  if (Number.isNaN(d.getTime()) || d.getUTCFullYear() < 1 || d.getUTCFullYear() > 9999) throw invalid(`'${name}' must be a date-time (RFC 3339).`);
  return d;
};

/**
 * The range of an export: `from` inclusive (default: the log's beginning), `to` exclusive
 * (default: now, so that rows written while it streams are not in it). `from` must be before `to`.
 */
export function checkExportRange(q: { from?: unknown; to?: unknown }, now: Date): AuditExportRange {
  const from = instantOf(q.from, 'from') ?? new Date('1970-01-01T00:00:00.000Z');
  const to = instantOf(q.to, 'to') ?? now;
  if (from.getTime() >= to.getTime()) throw invalid("'from' must be before 'to'.");
  return { from: from.toISOString(), to: to.toISOString() };
}

export function checkExportFormat(format: unknown): AuditExportFormat {
  if (!AUDIT_EXPORT_FORMATS.includes(format as AuditExportFormat)) throw invalid("'format' must be jsonl or csv.");
  return format as AuditExportFormat;
}

/**
 * `GET /admin/v1/organizations/{orgId}/audit-events/export`, the console's export and
 * `climate-pulse audit export`: the organization's log over a range, oldest first, as JSON lines
 * (one AuditEvent per line) or CSV (a header, then AUDIT_CSV_COLUMNS), read EXPORT_BATCH rows at a
 * time as the reader takes them, so a large log is never held at once. `viewer`: every event as
 * auditEventForViewer makes it. The export is a change of its own in the log (`audit_log.exported`,
 * with its format and range), written before the first line: the organization sees who took a copy.
 * 404 for an unknown or erased organization; a deleted one keeps its log.
 */
export async function exportAuditLog(
  db: DatabaseExecutor,
  orgId: string,
  q: { format: AuditExportFormat; range: AuditExportRange; viewer: boolean },
  actor: Actor,
  now: Date,
): Promise<AsyncIterable<string>> {
  if (!(await getOrgRecord(db, orgId))) throw new ApiError('not_found', `no organization ${JSON.stringify(orgId)}`);
  await db.transaction((tx) =>
    recordAudit(
      tx,
      orgId,
      actor,
      {
        action: 'audit_log.exported',
        target: { kind: 'audit_log', id: null },
        details: { format: q.format, from: q.range.from, to: q.range.to, redacted: q.viewer },
      },
      now,
    ),
  );
  return auditLines(db, orgId, q);
}

async function* auditLines(db: Queryable, orgId: string, q: { format: AuditExportFormat; range: AuditExportRange; viewer: boolean }): AsyncGenerator<string> {
  if (q.format === 'csv') yield csvLine(AUDIT_CSV_COLUMNS);
  let after: AuditKeyset | null = null;
  for (;;) {
    const rows = await listAuditEventsInRange(db, orgId, { ...q.range, after, limit: EXPORT_BATCH });
    let chunk = '';
    for (const row of rows) {
      const e = q.viewer ? auditEventForViewer(toItem(row)) : toItem(row);
      chunk += q.format === 'csv' ? auditCsvLine(e) : `${JSON.stringify(e)}\n`;
    }
    if (chunk) yield chunk;
    if (rows.length < EXPORT_BATCH) return;
    const last = rows[rows.length - 1];
    after = { createdAt: last.createdAt, id: last.id };
  }
}
