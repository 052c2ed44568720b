import type { AuditEventList } from '../../../contract/schemas/admin-audit.js';
import { AUDIT_ACTIONS } from '../../../contract/schemas/admin-audit.js';
import { AUDIT_ACTOR_KINDS } from '../../../domain/audit.js';
import type { ConsoleSession } from '../../../domain/sessions.js';
import { html, type PageOptions } from '../../html.js';
import { navFor } from '../../views/nav.js';
import { hostOf, when } from '../../views/layout.js';

const KINDS = AUDIT_ACTOR_KINDS;

interface AuditPage {
  session: ConsoleSession;
  log: AuditEventList;
  actorKind?: string;
  action?: string;
  /** The link to the next page, with the same filters. */
  next: string | null;
}

/** The audit log page: the filters, and one page of changes, newest first. */
export function auditView({ session: s, log, actorKind, action, next }: AuditPage): PageOptions {
  // What only owners may see stays out of a viewer's log: members' emails and addresses, and of a
  // webhook endpoint anything but its host.
  const viewer = s.member.role === 'viewer';
  const forViewer = (k: string, v: unknown): string | null => {
    if (k === 'email' || k === 'address') return null;
    if (typeof v === 'string' && (k === 'url' || /^https?:\/\//.test(v))) return hostOf(v);
    if (typeof v === 'string' && v.includes('@')) return '(hidden)';
    return typeof v === 'string' ? v : JSON.stringify(v);
  };
  const detail = (d: Record<string, unknown>) =>
    Object.entries(d)
      .map(([k, v]) => {
        const text = viewer ? forViewer(k, v) : typeof v === 'string' ? v : JSON.stringify(v);
        return text === null ? null : `${k}: ${text}`;
      })
      .filter((x) => x !== null)
      .join(', ');
  const who = (e: (typeof log.items)[number]) =>
    e.actor.kind === 'operator'
      ? 'operator'
      : viewer && e.actor.kind === 'member'
        ? `a member (${e.actor.id ?? 'unknown'})`
        : `${e.actor.label} (${e.actor.kind})`;
  return {
    title: 'Audit log',
    nav: navFor(s, '/console/audit'),
    body: html`<h1>Audit log</h1>
<form method="get" action="/console/audit" class="filters">
<label for="f-actor">Actor</label> <select name="actor" id="f-actor"><option value="">any</option>${KINDS.map((k) => html`<option value="${k}"${k === actorKind ? html` selected` : ''}>${k}</option>`)}</select>
<label for="f-action">Action</label> <select name="action" id="f-action"><option value="">any</option>${AUDIT_ACTIONS.map((a) => html`<option value="${a}"${a === action ? html` selected` : ''}>${a}</option>`)}</select>
<button type="submit" class="secondary">Filter</button>
</form>
${
  log.items.length === 0
    ? html`<p>No changes recorded${actorKind || action ? ' with these filters' : ''}.</p>`
    : html`<table>
<caption>Changes to ${s.orgName}, newest first</caption>
<thead><tr><th scope="col">When</th><th scope="col">Who</th><th scope="col">What</th><th scope="col">On</th><th scope="col">From</th><th scope="col">Details</th></tr></thead>
<tbody>${log.items.map((e) => html`<tr><td>${when(e.createdAt, 'never', 'second')}</td><td>${who(e)}</td><td>${e.action}</td><td>${e.target.kind}${e.target.id ? ` ${e.target.id}` : ''}</td><td>${viewer ? 'hidden' : (e.address ?? '-')}</td><td>${detail(e.details)}</td></tr>`)}</tbody>
</table>`
}
${next ? html`<p><a href="${next}">Older changes</a></p>` : ''}`,
  };
}
