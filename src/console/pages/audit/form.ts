import { checkActorKind, checkExportFormat, checkExportRange, checkKnownAction, type AuditExportFormat, type AuditExportRange } from '../../../domain/audit.js';
import { invalid } from '../../../contract/errors.js';
import type { Form } from '../../plugins/index.js';

/** The filters of the audit page, as listAuditEvents takes them; each checked by the domain's rule, actor first. */
export function auditFiltersOf(q: { actor?: string; action?: string; cursor?: string }) {
  const actorKind = checkActorKind(q.actor);
  const action = checkKnownAction(q.action);
  return { actorKind, action, cursor: q.cursor };
}

const DAY_MS = 86_400_000;

/** A date field (YYYY-MM-DD, a UTC day) as the instant its day starts; none when empty. */
function dayStart(value: string | undefined, label: string): Date | undefined {
  if (value === undefined || value === '') return undefined;
  const d = /^\d{4}-\d{2}-\d{2}$/.test(value) ? new Date(`${value}T00:00:00.000Z`) : new Date(Number.NaN);
  if (Number.isNaN(d.getTime()) || d.toISOString().slice(0, 10) !== value) throw invalid(`${label} must be a date (YYYY-MM-DD).`);
  return d;
}

/**
 * The export form: its format, and its days (UTC, both included) as the domain's range, `to` the
 * start of the day after the last one. An empty field is the domain's default.
 */
export function exportOf(q: { format?: string; from?: string; to?: string }, now: Date): { format: AuditExportFormat; range: AuditExportRange } {
  const format = checkExportFormat(q.format);
  const from = dayStart(q.from, 'From');
  const last = dayStart(q.to, 'To');
  const to = last ? new Date(last.getTime() + DAY_MS) : undefined;
  return { format, range: checkExportRange({ from: from?.toISOString(), to: to?.toISOString() }, now) };
}

/** The retention form's two fields as numbers for updateRetention (which checks them); empty keeps the value. */
export function retentionOf(form: Form): { auditDays?: unknown; deliveryDays?: unknown } {
  const days = (v: string | undefined) => (v === undefined || v.trim() === '' ? undefined : /^\s*\d{1,6}\s*$/.test(v) ? Number(v) : v);
  return { auditDays: days(form.auditDays), deliveryDays: days(form.deliveryDays) };
}
