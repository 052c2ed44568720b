import type { KeyListing } from '../../../contract/schemas/admin-keys.js';
import type { Translate } from '../../../i18n/index.js';
import { ROLL_DELAYS, type RollDelay } from '../../../domain/keys.js';
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

/**
 * A key's creator as a viewer reads it: a member by their role today ('an admin'), or 'a former
 * member', never by email (issue 52, L3); 'the operator'; a key (its display prefix) as it is.
 * `roles`: the organization's members' roles by lower-cased email. In the reader's words (`t`).
 */
export function creatorForViewer(createdBy: string | null, roles: ReadonlyMap<string, MemberRole>, t: Translate = PLAIN.t): string | null {
  if (createdBy === null) return null;
  if (createdBy === 'operator') return t('console.keys.creatorForViewer', { creator: 'operator' });
  if (!createdBy.includes('@')) return createdBy;
  return t('console.keys.creatorForViewer', { creator: roles.get(createdBy.toLowerCase()) ?? 'former' });
}

/** A roll's delay in words ("in 24 hours"); the provisioning page's tokens roll the same way. */
export const rollDelayWords = (value: RollDelay, t: Translate) => t('console.keys.rollDelay', { delay: `d${value}` });

/** Who made a key or a token as owners and admins read it: an email or a key's prefix as it is (the prefix as code), the operator in words. */
export function creatorCell(createdBy: string | null, t: Translate): Safe | string {
  if (createdBy === null) return t('console.keys.unknownCreator');
  if (createdBy === 'operator') return t('console.keys.operator');
  return createdBy.includes('@') ? createdBy : html`<code>${createdBy}</code>`;
}

/** The API keys page: the keys, newest first, and for admins and owners the forms that change them. */
export function keysView({
  session: s,
  keys,
  message,
  speaker: sp = PLAIN,
}: {
  session: ConsoleSession;
  keys: ConsoleKey[];
  message?: Safe;
  /** The reader's words, and dates in their locale and the organization's time zone (PLAIN: English, UTC). */
  speaker?: Speaker;
}): PageOptions {
  const { t } = sp;
  const when = (iso: string | null) => sp.when(iso, t('console.keys.never'));
  const canChange = s.member.role !== 'viewer';
  const nameOf = (k: ConsoleKey) => k.name ?? k.prefix;
  // A viewer's keys come with their creators already in words (creatorForViewer), or a key's prefix.
  const creator = (k: ConsoleKey) => (canChange || k.createdBy === null || /^cp_/.test(k.createdBy) ? creatorCell(k.createdBy, t) : k.createdBy);
  const row = (k: ConsoleKey) => html`<tr>
<td>${k.name ?? t('console.keys.noName')}</td><td><code>${k.prefix}…</code></td><td>${t('console.keys.scope', { scope: k.scope })}</td><td>${creator(k)}</td>
<td>${when(k.createdAt)}</td><td>${when(k.lastUsedAt)}</td><td>${when(k.expiresAt)}</td><td>${t('console.keys.state', { state: k.state })}</td>
<td>${
    canChange && k.state === 'active'
      ? html`<form method="post" action="/console/keys/${encodeURIComponent(k.id)}/roll">${csrfField(s.csrfToken)}
<label for="f-expiresIn-${k.id}">${t('console.keys.oldKeyExpires', { name: nameOf(k) })}</label> <select name="expiresIn" id="f-expiresIn-${k.id}">${ROLL_DELAYS.map((d) => html`<option value="${d.value}"${d.value === DEFAULT_ROLL_DELAY ? html` selected` : ''}>${rollDelayWords(d.value, t)}</option>`)}</select>
<button type="submit" class="secondary">${t('console.keys.roll')}</button></form>
<form method="post" action="/console/keys/${encodeURIComponent(k.id)}/revoke" data-confirm="${t('console.keys.revokeConfirm', { name: nameOf(k) })}">${csrfField(s.csrfToken)}
<button type="submit" class="danger" aria-label="${t('console.keys.revokeLabel', { name: nameOf(k) })}">${t('console.keys.revoke')}</button></form>`
      : ''
  }</td></tr>`;
  return {
    title: t('console.keys.title'),
    speaker: sp,
    nav: navFor(s, '/console/keys'),
    body: html`<h1>${t('console.keys.title')}</h1>
${message ?? ''}
<p>${sp.rich('console.keys.intro', { api: html`<code>/v1</code>` })}</p>
${
  keys.length === 0
    ? html`<p>${t('console.keys.none')}</p>`
    : html`<div class="table-scroll" role="region" aria-labelledby="keys-caption" tabindex="0"><table>
<caption id="keys-caption">${t('console.keys.caption', { org: s.orgName })}</caption>
<thead><tr><th scope="col">${t('console.keys.name')}</th><th scope="col">${t('console.keys.prefix')}</th><th scope="col">${t('console.keys.scopeHeading')}</th><th scope="col">${t('console.keys.creator')}</th><th scope="col">${t('console.keys.created')}</th><th scope="col">${t('console.keys.lastUsed')}</th><th scope="col">${t('console.keys.expires')}</th><th scope="col">${t('console.keys.stateHeading')}</th><th scope="col">${t('console.keys.change')}</th></tr></thead>
<tbody>${keys.map(row)}</tbody>
</table></div>`
}
${
  canChange
    ? html`<h2>${t('console.keys.createHeading')}</h2>
<form method="post" action="/console/keys" class="stack">
${csrfField(s.csrfToken)}
<label for="f-name">${t('console.keys.name')}</label> <input name="name" required maxlength="128" id="f-name">
<label for="f-scope">${t('console.keys.scopeHeading')}</label> <select name="scope" id="f-scope"><option value="read" selected>${t('console.keys.scopeRead')}</option><option value="read_write">${t('console.keys.scopeReadWrite')}</option></select>
<label for="f-expires">${t('console.keys.expiresOptional')}</label> <input type="date" name="expires" id="f-expires">
<button type="submit">${t('console.keys.create')}</button>
</form>`
    : html`<p class="muted">${t('console.keys.viewersOnly')}</p>`
}`,
  };
}
