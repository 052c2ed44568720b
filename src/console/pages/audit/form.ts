import { checkActorKind, checkKnownAction } from '../../../domain/audit.js';

/** The filters of the audit page, as listAuditEvents takes them; each checked by the domain's rule, actor first. */
export function auditFiltersOf(q: { actor?: string; action?: string; cursor?: string }) {
  const actorKind = checkActorKind(q.actor);
  const action = checkKnownAction(q.action);
  return { actorKind, action, cursor: q.cursor };
}
