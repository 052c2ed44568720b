import type { FastifyInstance } from 'fastify';
import type { DatabaseExecutor } from '../../../domain/database.js';
import { listAuditEvents } from '../../../domain/audit.js';
import { auditFiltersOf } from './form.js';
import { auditView } from './view.js';
import { sendPage } from '../../views/layout.js';
import { queryText, type ConsoleDeps } from '../../plugins/index.js';

/**
 * The audit log page (CONTRACT.md section 11): every change to the organization, by a member, the
 * operator or a key; filterable by actor kind and action; never a secret, key or comment (the log
 * holds none).
 */
export function registerAuditPage(scope: FastifyInstance, deps: ConsoleDeps & { db: DatabaseExecutor }) {
  scope.get<{ Querystring: Record<string, string | string[]> }>('/audit', async (request, reply) => {
    const s = request.member;
    const one = (name: string) => queryText(request, name);
    const { actorKind, action, cursor } = auditFiltersOf({ actor: one('actor'), action: one('action'), cursor: one('cursor') });
    const log = await listAuditEvents(deps.db, s.orgId, { limit: 50, cursor, actorKind, action });
    const next = log.nextCursor
      ? `/console/audit?${new URLSearchParams({ ...(actorKind ? { actor: actorKind } : {}), ...(action ? { action } : {}), cursor: log.nextCursor })}`
      : null;
    return sendPage(reply, 200, auditView({ session: s, log, actorKind, action, next }));
  });
}
