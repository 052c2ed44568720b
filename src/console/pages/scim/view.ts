import { ROLL_DELAYS } from '../../../domain/keys.js';
import type { ScimTeamFrom, ScimTokenView } from '../../../domain/scim.js';
import type { ConsoleSession } from '../../../domain/sessions.js';
import { csrfField, html, type PageOptions, type Safe } from '../../html.js';
import { navFor } from '../../views/nav.js';
import { PLAIN, PROVISIONING_WORDS as W, type Speaker } from '../../words.js';

export interface ProvisioningData {
  session: ConsoleSession;
  tokens: ScimTokenView[];
  teamFrom: ScimTeamFrom;
  scimUrl: string;
  message?: Safe;
  speaker?: Speaker;
}

/** The Provisioning page: the SCIM address, the tokens (newest first) with their changes, and how teams are found. */
export function provisioningView(d: ProvisioningData): PageOptions {
  const s = d.session;
  const when = (d.speaker ?? PLAIN).when;
  const csrf = csrfField(s.csrfToken);
  const nameOf = (t: ScimTokenView) => t.name ?? t.prefix;
  const live = (t: ScimTokenView) => t.state === 'active' || t.state === 'expiring';
  const row = (
    t: ScimTokenView,
  ) => html`<tr><td>${t.name ?? W.noName}</td><td><code>${t.prefix}…</code></td><td>${t.createdBy ?? ''}</td><td>${when(t.createdAt)}</td>
<td>${W.states[t.state]}</td><td>${when(t.revokedAt ?? t.expiresAt)}</td><td>${
    live(t)
      ? html`${
          t.state === 'active'
            ? html`<form method="post" action="/console/provisioning/tokens/${encodeURIComponent(t.id)}/roll">${csrf}
<label for="f-roll-${t.id}">${W.rollLabel(nameOf(t))}</label> <select name="expiresIn" id="f-roll-${t.id}">${ROLL_DELAYS.map((r) => html`<option value="${r.value}"${r.value === '24h' ? html` selected` : ''}>${r.label}</option>`)}</select>
<button type="submit" class="secondary">${W.roll}</button></form>`
            : ''
        }
<form method="post" action="/console/provisioning/tokens/${encodeURIComponent(t.id)}/revoke" data-confirm="${W.revokeConfirm(nameOf(t))}">${csrf}<button type="submit" class="danger" aria-label="${W.revokeLabel(nameOf(t))}">${W.revoke}</button></form>`
      : ''
  }</td></tr>`;
  return {
    title: W.title,
    nav: navFor(s, '/console/provisioning'),
    body: html`<h1>${W.title}</h1>
${d.message ?? ''}
<p>${W.intro}</p>
<p>${W.baseUrl}: <code id="scim-url">${d.scimUrl}</code></p>
<h2>${W.tokens}</h2>
${
  d.tokens.length === 0
    ? html`<p>${W.noTokens}</p>`
    : html`<div class="table-scroll" role="region" aria-labelledby="tokens-caption" tabindex="0"><table>
<caption id="tokens-caption">${W.tokensCaption}</caption>
<thead><tr><th scope="col">${W.name}</th><th scope="col">${W.prefix}</th><th scope="col">${W.createdBy}</th><th scope="col">${W.created}</th><th scope="col">${W.state}</th><th scope="col">${W.stops}</th><th scope="col">${W.change}</th></tr></thead>
<tbody>${d.tokens.map(row)}</tbody></table></div>`
}
<h2>${W.createHeading}</h2>
<form method="post" action="/console/provisioning/tokens" class="stack">${csrf}
<label for="f-name">${W.name}</label> <input name="name" required maxlength="128" id="f-name">
<button type="submit">${W.create}</button>
</form>
<h2>${W.teamsHeading}</h2>
<p>${W.teamsIntro}</p>
<form method="post" action="/console/provisioning/teams" class="stack">${csrf}
<label for="f-team-from">${W.teamFromLabel}</label> <select name="teamFrom" id="f-team-from">${(['groups', 'department'] as const).map(
      (v) => html`<option value="${v}"${v === d.teamFrom ? html` selected` : ''}>${W.teamFrom[v]}</option>`,
    )}</select>
<button type="submit" class="secondary">${W.save}</button>
</form>`,
  };
}
