import type { AuditEvent, AuditEventList, Retention } from '../../../contract/schemas/admin-audit.js';
import { AUDIT_ACTIONS, RETENTION_BOUNDS } from '../../../contract/schemas/admin-audit.js';
import { AUDIT_ACTOR_KINDS, auditEventForViewer } from '../../../domain/audit.js';
import type { ConsoleSession } from '../../../domain/sessions.js';
import { csrfField, html, type PageOptions, type Safe } from '../../html.js';
import { navFor } from '../../views/nav.js';
import { AUDIT_AREA_KEYS, AUDIT_AREAS, AUDIT_WORDS, auditWords, PLAIN, type Speaker } from '../../words.js';

const KINDS = AUDIT_ACTOR_KINDS;

interface AuditPage {
  session: ConsoleSession;
  log: AuditEventList;
  retention: Retention;
  /** The export form's default days: the last 30 up to this one. */
  today: Date;
  message?: Safe;
  /** The reader's words, and dates in their locale and the organization's time zone (PLAIN: English, UTC). */
  speaker?: Speaker;
  actorKind?: string;
  action?: string;
  /** The link to the next page, with the same filters. */
  next: string | null;
}

/**
 * The audit log page: the filters, and one page of changes, newest first. What the log recorded
 * (ids, the details' names and values, a key's prefix) is data, shown as the API and the export
 * give it, in code; the page's own words are the reader's.
 */
export function auditView({ session: s, log, actorKind, action, next, retention, today, message, speaker: sp = PLAIN }: AuditPage): PageOptions {
  const { t } = sp;
  // What only owners may see stays out of a viewer's log: members' emails and addresses, and of a
  // webhook endpoint anything but its host (the domain's one rule, which the export applies too).
  const viewer = s.member.role === 'viewer';
  const items = viewer ? log.items.map(auditEventForViewer) : log.items;
  const detail = (d: Record<string, unknown>) =>
    Object.entries(d)
      .map(([k, v]) => `${k}: ${typeof v === 'string' ? v : JSON.stringify(v)}`)
      .join(', ');
  const code = (chunks: Safe | string) => html`<code>${chunks}</code>`;
  const who = (e: AuditEvent): Safe | string => {
    if (e.actor.kind === 'operator') return t('console.audit.operator');
    // A viewer sees a member by id only (auditEventForViewer): no email.
    if (viewer && e.actor.kind === 'member') return sp.rich('console.audit.aMember', { id: code(e.actor.id ?? '?') });
    return sp.rich('console.audit.actor', { label: e.actor.kind === 'key' ? code(e.actor.label) : e.actor.label, kind: e.actor.kind });
  };
  // What it was done to, in words, and its id as recorded.
  const on = (e: AuditEvent) => html`${t('console.audit.target', { kind: e.target.kind })}${e.target.id ? html` ${code(e.target.id)}` : ''}`;
  // The actions by area, in words, for the filter (the codes stay the values the URL carries), in the reader's order.
  const collator = new Intl.Collator(sp.lang);
  const grouped = AUDIT_AREAS.map((area) => ({
    area,
    actions: AUDIT_ACTIONS.filter((a) => AUDIT_WORDS[a].area === area)
      .map((a) => ({ a, words: auditWords(a, t) }))
      .sort((x, y) => collator.compare(x.words, y.words)),
  }));
  return {
    title: t('console.audit.title'),
    speaker: sp,
    nav: navFor(s, '/console/audit'),
    body: html`<h1>${t('console.audit.title')}</h1>
${message ?? ''}
<form method="get" action="/console/audit" class="filters">
<label for="f-actor">${t('console.audit.who')}</label> <select name="actor" id="f-actor"><option value="">${t('console.audit.any')}</option>${KINDS.map(
      (k) => html`<option value="${k}"${k === actorKind ? html` selected` : ''}>${t('console.audit.kind', { kind: k })}</option>`,
    )}</select>
<label for="f-action">${t('console.audit.what')}</label> <select name="action" id="f-action"><option value="">${t('console.audit.any')}</option>${grouped.map(
      (g) =>
        html`<optgroup label="${t(AUDIT_AREA_KEYS[g.area])}">${g.actions.map(({ a, words }) => html`<option value="${a}"${a === action ? html` selected` : ''}>${words}</option>`)}</optgroup>`,
    )}</select>
<button type="submit" class="secondary">${t('console.audit.filter')}</button>
</form>
${
  log.items.length === 0
    ? html`<p>${actorKind || action ? t('console.audit.noneFiltered') : t('console.audit.none')}</p>`
    : html`<div class="table-scroll" role="region" aria-labelledby="audit-caption" tabindex="0"><table>
<caption id="audit-caption">${t('console.audit.caption', { org: s.orgName })}</caption>
<thead><tr><th scope="col">${t('console.audit.when')}</th><th scope="col">${t('console.audit.who')}</th><th scope="col">${t('console.audit.what')}</th><th scope="col">${t('console.audit.on')}</th><th scope="col">${t('console.audit.from')}</th><th scope="col">${t('console.audit.details')}</th></tr></thead>
<tbody>${items.map((e) => {
        const d = detail(e.details);
        return html`<tr><td>${sp.when(e.createdAt, t('console.audit.never'), 'second')}</td><td>${who(e)}</td><td>${auditWords(e.action, t)}</td><td>${on(e)}</td><td>${viewer ? t('console.audit.hidden') : (e.address ?? '-')}</td><td>${d ? code(d) : ''}</td></tr>`;
      })}</tbody>
</table></div>`
}
${next ? html`<p><a href="${next}">${t('console.audit.older')}</a></p>` : ''}
${exportSection(s, today, sp)}
${retentionSection(s, retention, sp)}`,
  };
}

const DAY_MS = 86_400_000;
const day = (d: Date) => d.toISOString().slice(0, 10);

/** The export form: a range of UTC days, both included, and a format; a file, never a page. */
function exportSection(s: ConsoleSession, today: Date, sp: Speaker): Safe {
  const { t } = sp;
  return html`<h2>${t('console.audit.exportHeading')}</h2>
<form method="get" action="/console/audit/export" class="filters">
<label for="x-from">${t('console.audit.exportFrom')}</label> <input type="date" name="from" id="x-from" value="${day(new Date(today.getTime() - 29 * DAY_MS))}">
<label for="x-to">${t('console.audit.exportTo')}</label> <input type="date" name="to" id="x-to" value="${day(today)}">
<label for="x-format">${t('console.audit.format')}</label> <select name="format" id="x-format"><option value="csv" selected>${t('console.audit.formatCsv')}</option><option value="jsonl">${t('console.audit.formatJsonl')}</option></select>
<button type="submit" class="secondary">${t('console.audit.export')}</button>
</form>
<p class="muted">${t('console.audit.exportHelp')}${s.member.role === 'viewer' ? ` ${t('console.audit.exportViewer')}` : ''}</p>`;
}

/** How long the log is kept: owners change it, every other member reads it. */
function retentionSection(s: ConsoleSession, r: Retention, sp: Speaker): Safe {
  const { t } = sp;
  const b = RETENTION_BOUNDS;
  if (s.member.role !== 'owner') {
    return html`<h2>${t('console.audit.retentionHeading')}</h2>
<p>${t('console.audit.retentionKept', { auditDays: r.auditDays, deliveryDays: r.deliveryDays })}</p>`;
  }
  return html`<h2>${t('console.audit.retentionHeading')}</h2>
<form method="post" action="/console/audit/retention" class="stack">
${csrfField(s.csrfToken)}
<label for="r-audit">${t('console.audit.keepAudit', { min: String(b.auditDays.min), max: String(b.auditDays.max) })}</label> <input type="number" name="auditDays" id="r-audit" required min="${b.auditDays.min}" max="${b.auditDays.max}" value="${r.auditDays}">
<label for="r-delivery">${t('console.audit.keepDeliveries', { min: String(b.deliveryDays.min), max: String(b.deliveryDays.max) })}</label> <input type="number" name="deliveryDays" id="r-delivery" required min="${b.deliveryDays.min}" max="${b.deliveryDays.max}" value="${r.deliveryDays}">
<button type="submit">${t('console.audit.saveRetention')}</button>
</form>
<p class="muted">${t('console.audit.retentionNote')}</p>`;
}
