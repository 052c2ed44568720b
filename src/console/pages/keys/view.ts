import type { KeyListing } from '../../../contract/schemas/admin-keys.js';
import { ROLL_DELAYS } from '../../../domain/keys.js';
import type { MemberRole } from '../../../domain/members.js';
import type { ConsoleSession } from '../../../domain/sessions.js';
import { csrfField, html, type PageOptions, type Safe } from '../../html.js';
import { navFor } from '../../views/nav.js';
import { PLAIN, type Speaker } from '../../words.js';
import { DEFAULT_ROLL_DELAY } from './form.js';

export type ConsoleKey = KeyListing & { state: 'active' | 'expired' | 'revoked' };

/** A key's state as the page shows it, at `now`. */
export function stateOf(k: KeyListing, now: Date): ConsoleKey['state'] {
  if (k.revokedAt !== null) return 'revoked';
  return k.expiresAt !== null && Date.parse(k.expiresAt) <= now.getTime() ? 'expired' : 'active';
}

const ROLE_NAMES: Record<MemberRole, string> = { owner: 'an owner', admin: 'an admin', viewer: 'a viewer', manager: 'a manager' };

/**
 * A key's creator as a viewer reads it: a member by their role today ('an admin'), or 'a former
 * member', never by email (issue 52, L3); 'the operator'; a key (its display prefix) as it is.
 * `roles`: the organization's members' roles by lower-cased email.
 */
export function creatorForViewer(createdBy: string | null, roles: ReadonlyMap<string, MemberRole>): string | null {
  if (createdBy === null) return null;
  if (createdBy === 'operator') return 'the operator';
  if (!createdBy.includes('@')) return createdBy;
  const role = roles.get(createdBy.toLowerCase());
  return role ? ROLE_NAMES[role] : 'a former member';
}

/** The API keys page: the keys, newest first, and for admins and owners the forms that change them. */
export function keysView({
  session: s,
  keys,
  message,
  speaker = PLAIN,
}: {
  session: ConsoleSession;
  keys: ConsoleKey[];
  message?: Safe;
  speaker?: Speaker;
}): PageOptions {
  const when = speaker.when;
  const canChange = s.member.role !== 'viewer';
  const row = (k: ConsoleKey) => html`<tr>
<td>${k.name ?? '(no name)'}</td><td><code>${k.prefix}…</code></td><td>${k.scope === 'read' ? 'read' : 'read and write'}</td><td>${k.createdBy ?? 'unknown'}</td>
<td>${when(k.createdAt)}</td><td>${when(k.lastUsedAt)}</td><td>${when(k.expiresAt)}</td><td>${k.state}</td>
<td>${
    canChange && k.state === 'active'
      ? html`<form method="post" action="/console/keys/${encodeURIComponent(k.id)}/roll">${csrfField(s.csrfToken)}
<label for="f-expiresIn-${k.id}">Old key of ${k.name ?? k.prefix} expires</label> <select name="expiresIn" id="f-expiresIn-${k.id}">${ROLL_DELAYS.map((d) => html`<option value="${d.value}"${d.value === DEFAULT_ROLL_DELAY ? html` selected` : ''}>${d.label}</option>`)}</select>
<button type="submit" class="secondary">Roll</button></form>
<form method="post" action="/console/keys/${encodeURIComponent(k.id)}/revoke" data-confirm="Revoke ${k.name ?? k.prefix}? Clients using it get 401 within 5 seconds.">${csrfField(s.csrfToken)}
<button type="submit" class="danger" aria-label="Revoke ${k.name ?? k.prefix}">Revoke</button></form>`
      : ''
  }</td></tr>`;
  return {
    title: 'API keys',
    nav: navFor(s, '/console/keys'),
    body: html`<h1>API keys</h1>
${message ?? ''}
<p>Keys let programs read your organization's data through the REST API (<code>/v1</code>). A key is shown once, when it is made.</p>
${
  keys.length === 0
    ? html`<p>No keys yet.</p>`
    : html`<div class="table-scroll" role="region" aria-labelledby="keys-caption" tabindex="0"><table>
<caption id="keys-caption">Keys of ${s.orgName}</caption>
<thead><tr><th scope="col">Name</th><th scope="col">Prefix</th><th scope="col">Scope</th><th scope="col">Creator</th><th scope="col">Created</th><th scope="col">Last used</th><th scope="col">Expires</th><th scope="col">State</th><th scope="col">Change</th></tr></thead>
<tbody>${keys.map(row)}</tbody>
</table></div>`
}
${
  canChange
    ? html`<h2>Create key</h2>
<form method="post" action="/console/keys" class="stack">
${csrfField(s.csrfToken)}
<label for="f-name">Name</label> <input name="name" required maxlength="128" id="f-name">
<label for="f-scope">Scope</label> <select name="scope" id="f-scope"><option value="read" selected>read: GET only</option><option value="read_write">read_write: read and write</option></select>
<label for="f-expires">Expires (optional)</label> <input type="date" name="expires" id="f-expires">
<button type="submit">Create key</button>
</form>`
    : html`<p class="muted">Viewers can see keys but not make or change them.</p>`
}`,
  };
}
