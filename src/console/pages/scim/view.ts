import type { Translate } from '../../../i18n/index.js';
import { ROLL_DELAYS } from '../../../domain/keys.js';
import type { ScimTeamFrom, ScimTokenView } from '../../../domain/scim.js';
import type { ConsoleSession } from '../../../domain/sessions.js';
import { csrfField, html, type PageOptions, type Safe } from '../../html.js';
import { navFor } from '../../views/nav.js';
import { PLAIN, type Speaker } from '../../words.js';
import { creatorCell, rollDelayWords } from '../keys/view.js';

export interface ProvisioningData {
  session: ConsoleSession;
  tokens: ScimTokenView[];
  teamFrom: ScimTeamFrom;
  scimUrl: string;
  message?: Safe;
  /** The reader's words, and dates in their locale and the organization's time zone (PLAIN: English, UTC). */
  speaker?: Speaker;
}

/** A refusal of the Provisioning page in the reader's words, by the domain's code and rule; an unknown one as the domain wrote it. */
export function provisioningRefusal(err: { code: string; message: string }, t: Translate): string {
  const m = err.message;
  if (err.code === 'not_found') return t('console.provisioning.notFound');
  if (m.startsWith("The old token's expiry must be")) return t('console.provisioning.badDelay');
  if (m.startsWith("'teamFrom' must be")) return t('console.provisioning.badTeamFrom');
  if (m.startsWith('The name must be') || m.startsWith("Body field 'name'")) return t('console.provisioning.badName', { max: 128 });
  return m;
}

/** The Provisioning page: the SCIM address, the tokens (newest first) with their changes, and how teams are found. */
export function provisioningView(d: ProvisioningData): PageOptions {
  const s = d.session;
  const sp = d.speaker ?? PLAIN;
  const { t } = sp;
  const when = (iso: string | null) => sp.when(iso, t('console.provisioning.never'));
  const csrf = csrfField(s.csrfToken);
  const nameOf = (tk: ScimTokenView) => tk.name ?? tk.prefix;
  const live = (tk: ScimTokenView) => tk.state === 'active' || tk.state === 'expiring';
  const row = (
    tk: ScimTokenView,
  ) => html`<tr><td>${tk.name ?? t('console.provisioning.noName')}</td><td><code>${tk.prefix}…</code></td><td>${tk.createdBy === null ? '' : creatorCell(tk.createdBy, t)}</td><td>${when(tk.createdAt)}</td>
<td>${t('console.provisioning.state', { state: tk.state })}</td><td>${when(tk.revokedAt ?? tk.expiresAt)}</td><td>${
    live(tk)
      ? html`${
          tk.state === 'active'
            ? html`<form method="post" action="/console/provisioning/tokens/${encodeURIComponent(tk.id)}/roll">${csrf}
<label for="f-roll-${tk.id}">${t('console.provisioning.rollLabel', { name: nameOf(tk) })}</label> <select name="expiresIn" id="f-roll-${tk.id}">${ROLL_DELAYS.map((r) => html`<option value="${r.value}"${r.value === '24h' ? html` selected` : ''}>${rollDelayWords(r.value, t)}</option>`)}</select>
<button type="submit" class="secondary">${t('console.provisioning.roll')}</button></form>`
            : ''
        }
<form method="post" action="/console/provisioning/tokens/${encodeURIComponent(tk.id)}/revoke" data-confirm="${t('console.provisioning.revokeConfirm', { name: nameOf(tk) })}">${csrf}<button type="submit" class="danger" aria-label="${t('console.provisioning.revokeLabel', { name: nameOf(tk) })}">${t('console.provisioning.revoke')}</button></form>`
      : ''
  }</td></tr>`;
  return {
    title: t('console.provisioning.title'),
    speaker: sp,
    nav: navFor(s, '/console/provisioning'),
    body: html`<h1>${t('console.provisioning.title')}</h1>
${d.message ?? ''}
<p>${t('console.provisioning.intro')}</p>
<p>${sp.rich('console.provisioning.baseUrl', { url: html`<code id="scim-url">${d.scimUrl}</code>` })}</p>
<h2>${t('console.provisioning.tokens')}</h2>
${
  d.tokens.length === 0
    ? html`<p>${t('console.provisioning.noTokens')}</p>`
    : html`<div class="table-scroll" role="region" aria-labelledby="tokens-caption" tabindex="0"><table>
<caption id="tokens-caption">${t('console.provisioning.tokensCaption')}</caption>
<thead><tr><th scope="col">${t('console.provisioning.name')}</th><th scope="col">${t('console.provisioning.prefix')}</th><th scope="col">${t('console.provisioning.createdBy')}</th><th scope="col">${t('console.provisioning.created')}</th><th scope="col">${t('console.provisioning.stateHeading')}</th><th scope="col">${t('console.provisioning.stops')}</th><th scope="col">${t('console.provisioning.change')}</th></tr></thead>
<tbody>${d.tokens.map(row)}</tbody></table></div>`
}
<h2>${t('console.provisioning.createHeading')}</h2>
<form method="post" action="/console/provisioning/tokens" class="stack">${csrf}
<label for="f-name">${t('console.provisioning.name')}</label> <input name="name" required maxlength="128" id="f-name">
<button type="submit">${t('console.provisioning.create')}</button>
</form>
<h2>${t('console.provisioning.teamsHeading')}</h2>
<p>${t('console.provisioning.teamsIntro')}</p>
<form method="post" action="/console/provisioning/teams" class="stack">${csrf}
<label for="f-team-from">${t('console.provisioning.teamFromLabel')}</label> <select name="teamFrom" id="f-team-from">${(['groups', 'department'] as const).map(
      (v) => html`<option value="${v}"${v === d.teamFrom ? html` selected` : ''}>${t('console.provisioning.teamFrom', { from: v })}</option>`,
    )}</select>
<button type="submit" class="secondary">${t('console.provisioning.save')}</button>
</form>`,
  };
}
