import { Readable } from 'node:stream';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { DatabaseExecutor } from '../../../domain/database.js';
import { exportAuditLog, listAuditEvents } from '../../../domain/audit.js';
import { getRetention, updateRetention } from '../../../domain/retention.js';
import type { ApiError } from '../../../contract/errors.js';
import { notice, type Safe } from '../../html.js';
import { inWords } from '../members/refusals.js';
import type { Speaker } from '../../words.js';
import { auditFiltersOf, exportOf, retentionOf } from './form.js';
import { auditView } from './view.js';
import { sendPage } from '../../views/layout.js';
import { speakerOf } from '../../views/speaker.js';
import { actorOf, changeOutcome, OWNERS, queryText, type ConsoleDeps, type Form } from '../../plugins/index.js';

const EXPORT_TYPES = { jsonl: 'application/x-ndjson', csv: 'text/csv; charset=utf-8' } as const;

/** The audit page's refusals (its filters, the export's range and format, retention) in the reader's words; null: one it does not know. */
export function auditRefusal(sp: Speaker) {
  const { t } = sp;
  return (err: ApiError): string | null => {
    const m = err.message;
    let found: RegExpExecArray | null;
    if ((found = /^(From|To) must be a date \(YYYY-MM-DD\)\.$/.exec(m))) return t('console.audit.errorDate', { field: found[1] === 'From' ? 'from' : 'to' });
    if (m.startsWith("'format' must be")) return t('console.audit.errorFormat');
    if (m.startsWith("'from' must be before 'to'")) return t('console.audit.errorRange');
    if (m.startsWith('The actor filter must be')) return t('console.audit.errorActor');
    if (m.startsWith('Unknown action filter')) return t('console.audit.errorAction');
    if ((found = /^The (audit|delivery) log retention must be a whole number of days from (\d+) to (\d+)\.$/.exec(m)))
      return t(found[1] === 'audit' ? 'console.audit.errorRetentionAudit' : 'console.audit.errorRetentionDelivery', {
        min: Number(found[2]),
        max: Number(found[3]),
      });
    return null;
  };
}

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
    const speaker = await speakerOf(db, request);
    const one = (name: string) => queryText(request, name);
    const { actorKind, action, cursor } = await inWords(
      async () => auditFiltersOf({ actor: one('actor'), action: one('action'), cursor: one('cursor') }),
      auditRefusal(speaker),
    );
    const log = await listAuditEvents(db, s.orgId, { limit: 50, cursor, actorKind, action });
    const next = log.nextCursor
      ? `/console/audit?${new URLSearchParams({ ...(actorKind ? { actor: actorKind } : {}), ...(action ? { action } : {}), cursor: log.nextCursor })}`
      : null;
    const retention = await getRetention(db, s.orgId);
    return sendPage(reply, status, auditView({ session: s, log, actorKind, action, next, retention, today: now(), message, speaker }));
  };

  scope.get<{ Querystring: Record<string, string | string[]> }>('/audit', async (request, reply) => auditPage(request, reply, 200));

  scope.get('/audit/export', async (request, reply) => {
    const s = request.member;
    const at = now();
    const { format, range } = await inWords(
      async () => exportOf({ format: queryText(request, 'format'), from: queryText(request, 'from'), to: queryText(request, 'to') }, at),
      auditRefusal(await speakerOf(db, request)),
    );
    const lines = await exportAuditLog(db, s.orgId, { format, range, viewer: s.member.role === 'viewer' }, actorOf(request), at);
    return reply
      .type(EXPORT_TYPES[format])
      .header('content-disposition', `attachment; filename="audit-log-${range.from.slice(0, 10)}-${range.to.slice(0, 10)}.${format}"`)
      .send(Readable.from(lines));
  });

  scope.post<{ Body: Form }>('/audit/retention', { config: { roles: OWNERS } }, async (request, reply) =>
    changeOutcome(auditPage)(request, reply, async () => {
      const sp = await speakerOf(db, request);
      const r = await inWords(() => updateRetention(db, request.member.orgId, retentionOf(request.body), actorOf(request), now()), auditRefusal(sp));
      return notice(sp.t('console.audit.retentionSaved', { auditDays: r.auditDays, deliveryDays: r.deliveryDays }), 'ok');
    }),
  );
}
