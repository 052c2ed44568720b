import { Readable } from 'node:stream';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { DatabaseExecutor } from '../../../domain/database.js';
import { exportAuditLog, listAuditEvents } from '../../../domain/audit.js';
import { getRetention, updateRetention } from '../../../domain/retention.js';
import { notice, type Safe } from '../../html.js';
import { auditFiltersOf, exportOf, retentionOf } from './form.js';
import { auditView } from './view.js';
import { sendPage } from '../../views/layout.js';
import { speakerOf } from '../../views/speaker.js';
import { actorOf, changeOutcome, OWNERS, queryText, type ConsoleDeps, type Form } from '../../plugins/index.js';

const EXPORT_TYPES = { jsonl: 'application/x-ndjson', csv: 'text/csv; charset=utf-8' } as const;

/**
 * The audit log page (CONTRACT.md section 11): every change to the organization, by a member, the
 * operator or a key; filterable by actor kind and action; never a secret, key or comment (the log
 * holds none). Every member exports a range of it (a viewer without what only owners and admins
 * see, as on the page); owners set how long it is kept.
 */
export function registerAuditPage(scope: FastifyInstance, deps: ConsoleDeps & { db: DatabaseExecutor }) {
  const { db, now } = deps;

  const auditPage = async (request: FastifyRequest, reply: FastifyReply, status: number, message?: Safe) => {
    const s = request.member;
    const one = (name: string) => queryText(request, name);
    const { actorKind, action, cursor } = auditFiltersOf({ actor: one('actor'), action: one('action'), cursor: one('cursor') });
    const log = await listAuditEvents(db, s.orgId, { limit: 50, cursor, actorKind, action });
    const next = log.nextCursor
      ? `/console/audit?${new URLSearchParams({ ...(actorKind ? { actor: actorKind } : {}), ...(action ? { action } : {}), cursor: log.nextCursor })}`
      : null;
    const [retention, speaker] = await Promise.all([getRetention(db, s.orgId), speakerOf(db, request)]);
    return sendPage(reply, status, auditView({ session: s, log, actorKind, action, next, retention, today: now(), message, speaker }));
  };

  scope.get<{ Querystring: Record<string, string | string[]> }>('/audit', async (request, reply) => auditPage(request, reply, 200));

  scope.get('/audit/export', async (request, reply) => {
    const s = request.member;
    const at = now();
    const { format, range } = exportOf({ format: queryText(request, 'format'), from: queryText(request, 'from'), to: queryText(request, 'to') }, at);
    const lines = await exportAuditLog(db, s.orgId, { format, range, viewer: s.member.role === 'viewer' }, actorOf(request), at);
    return reply
      .type(EXPORT_TYPES[format])
      .header('content-disposition', `attachment; filename="audit-log-${range.from.slice(0, 10)}-${range.to.slice(0, 10)}.${format}"`)
      .send(Readable.from(lines));
  });

  scope.post<{ Body: Form }>('/audit/retention', { config: { roles: OWNERS } }, async (request, reply) =>
    changeOutcome(auditPage)(request, reply, async () => {
      const r = await updateRetention(db, request.member.orgId, retentionOf(request.body), actorOf(request), now());
      return notice(`Retention saved: audit entries are kept ${r.auditDays} days, webhook delivery logs ${r.deliveryDays} days.`, 'ok');
    }),
  );
}
