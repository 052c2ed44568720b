import type { AuditEvent, AuditEventList, Retention } from '../../../contract/schemas/admin-audit.js';
import { AUDIT_ACTIONS, RETENTION_BOUNDS } from '../../../contract/schemas/admin-audit.js';
import { AUDIT_ACTOR_KINDS, auditEventForViewer } from '../../../domain/audit.js';
import type { ConsoleSession } from '../../../domain/sessions.js';
import { csrfField, html, type PageOptions, type Safe } from '../../html.js';
import { navFor } from '../../views/nav.js';
import { AUDIT_AREAS, AUDIT_WORDS, auditWords, PLAIN, type Speaker } from '../../words.js';

const KINDS = AUDIT_ACTOR_KINDS;

/** The page's words (English until the catalogue takes them). */
const W = {
  kinds: { member: 'a member', operator: 'the operator', key: 'an API key' } as Record<string, string>,
  any: 'any',
};

/** The actions by area, in words, for the filter: the codes stay the values the URL carries. */
const GROUPED = AUDIT_AREAS.map((area) => ({
  area,
  actions: AUDIT_ACTIONS.filter((a) => AUDIT_WORDS[a].area === area).sort((a, b) => AUDIT_WORDS[a].words.localeCompare(AUDIT_WORDS[b].words, 'en')),
}));

interface AuditPage {
  session: ConsoleSession;
  log: AuditEventList;
  retention: Retention;
  /** The export form's default days: the last 30 up to this one. */
  today: Date;
  message?: Safe;
  /** Dates in the reader's locale and the organization's time zone (PLAIN: en-GB, UTC). */
  speaker?: Speaker;
  actorKind?: string;
  action?: string;
  /** The link to the next page, with the same filters. */
  next: string | null;
}

/** The audit log page: the filters, and one page of changes, newest first. */
export function auditView({ session: s, log, actorKind, action, next, retention, today, message, speaker = PLAIN }: AuditPage): PageOptions {
  // What only owners may see stays out of a viewer's log: members' emails and addresses, and of a
  // webhook endpoint anything but its host (the domain's one rule, which the export applies too).
  const viewer = s.member.role === 'viewer';
  const items = viewer ? log.items.map(auditEventForViewer) : log.items;
  const detail = (d: Record<string, unknown>) =>
    Object.entries(d)
      .map(([k, v]) => `${k}: ${typeof v === 'string' ? v : JSON.stringify(v)}`)
      .join(', ');
  const who = (e: AuditEvent) =>
    e.actor.kind === 'operator' ? 'operator' : viewer && e.actor.kind === 'member' ? e.actor.label : `${e.actor.label} (${e.actor.kind})`;
  return {
    title: 'Audit log',
    nav: navFor(s, '/console/audit'),
    body: html`<h1>Audit log</h1>
${message ?? ''}
<form method="get" action="/console/audit" class="filters">
<label for="f-actor">Who</label> <select name="actor" id="f-actor"><option value="">${W.any}</option>${KINDS.map((k) => html`<option value="${k}"${k === actorKind ? html` selected` : ''}>${W.kinds[k] ?? k}</option>`)}</select>
<label for="f-action">What</label> <select name="action" id="f-action"><option value="">${W.any}</option>${GROUPED.map(
      (g) =>
        html`<optgroup label="${g.area}">${g.actions.map((a) => html`<option value="${a}"${a === action ? html` selected` : ''}>${AUDIT_WORDS[a].words}</option>`)}</optgroup>`,
    )}</select>
<button type="submit" class="secondary">Filter</button>
</form>
${
  log.items.length === 0
    ? html`<p>No changes recorded${actorKind || action ? ' with these filters' : ''}.</p>`
    : html`<table>
<caption>Changes to ${s.orgName}, newest first</caption>
<thead><tr><th scope="col">When</th><th scope="col">Who</th><th scope="col">What</th><th scope="col">On</th><th scope="col">From</th><th scope="col">Details</th></tr></thead>
<tbody>${items.map((e) => html`<tr><td>${speaker.when(e.createdAt, 'never', 'second')}</td><td>${who(e)}</td><td>${auditWords(e.action)}</td><td>${e.target.kind}${e.target.id ? ` ${e.target.id}` : ''}</td><td>${viewer ? 'hidden' : (e.address ?? '-')}</td><td>${detail(e.details)}</td></tr>`)}</tbody>
</table>`
}
${next ? html`<p><a href="${next}">Older changes</a></p>` : ''}
${exportSection(s, today)}
${retentionSection(s, retention)}`,
  };
}

const DAY_MS = 86_400_000;
const day = (d: Date) => d.toISOString().slice(0, 10);

/** The export form: a range of UTC days, both included, and a format; a file, never a page. */
function exportSection(s: ConsoleSession, today: Date): Safe {
  return html`<h2>Export</h2>
<form method="get" action="/console/audit/export" class="filters">
<label for="x-from">From</label> <input type="date" name="from" id="x-from" value="${day(new Date(today.getTime() - 29 * DAY_MS))}">
<label for="x-to">To</label> <input type="date" name="to" id="x-to" value="${day(today)}">
<label for="x-format">Format</label> <select name="format" id="x-format"><option value="csv" selected>CSV</option><option value="jsonl">JSON lines</option></select>
<button type="submit" class="secondary">Export</button>
</form>
<p class="muted">Every change of those days (UTC), oldest first. No CSV cell is read as a formula. The export is itself recorded in this log.${
    s.member.role === 'viewer' ? " As on this page, members' emails and addresses are left out." : ''
  }</p>`;
}

/** How long the log is kept: owners change it, every other member reads it. */
function retentionSection(s: ConsoleSession, r: Retention): Safe {
  const b = RETENTION_BOUNDS;
  if (s.member.role !== 'owner') {
    return html`<h2>Retention</h2>
<p>Audit entries are kept ${r.auditDays} days, webhook delivery logs ${r.deliveryDays} days; older ones are deleted. Owners can change this.</p>`;
  }
  return html`<h2>Retention</h2>
<form method="post" action="/console/audit/retention" class="stack">
${csrfField(s.csrfToken)}
<label for="r-audit">Keep audit entries (days, ${b.auditDays.min}-${b.auditDays.max})</label> <input type="number" name="auditDays" id="r-audit" required min="${b.auditDays.min}" max="${b.auditDays.max}" value="${r.auditDays}">
<label for="r-delivery">Keep webhook delivery logs (days, ${b.deliveryDays.min}-${b.deliveryDays.max})</label> <input type="number" name="deliveryDays" id="r-delivery" required min="${b.deliveryDays.min}" max="${b.deliveryDays.max}" value="${r.deliveryDays}">
<button type="submit">Save retention</button>
</form>
<p class="muted">Older entries are deleted within the hour and cannot be brought back.</p>`;
}
