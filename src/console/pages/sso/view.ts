import type { ConsoleSession } from '../../../domain/sessions.js';
import type { MemberView } from '../../../domain/members.js';
import type { SsoDomainView, SsoSettingsView } from '../../../domain/sso/settings.js';
import type { SamlSettingsView, SamlUrls } from '../../../domain/sso/saml.js';
import { csrfField, escapeHtml, html, notice, page, type PageOptions, type Safe } from '../../html.js';
import { navFor } from '../../views/nav.js';
import { PLAIN, type Speaker } from '../../words.js';

/** Text the owner types as it is (a mapping's syntax, a role's code): in `code`. */
const code = (chunks: Safe) => html`<code>${chunks}</code>`;

export interface SsoPageData {
  session: ConsoleSession;
  settings: SsoSettingsView | null;
  domains: SsoDomainView[];
  owners: MemberView[];
  urls: { redirectUri: string; backchannelLogoutUri: string };
  saml?: { urls: SamlUrls; settings: SamlSettingsView | null };
  message?: Safe;
  /** The reader's words, and dates in their locale and the organization's time zone. */
  speaker?: Speaker;
}

/** The single sign-on settings page (owners): what to give the IdP, the connection, the domains, and enforcement. */
export function ssoView({ session: s, settings, domains, owners, urls, saml, message, speaker: sp = PLAIN }: SsoPageData): PageOptions {
  const { t } = sp;
  const roles = ['admin', 'viewer'];
  const mapping = (settings?.groupRoles ?? []).map((g) => `${g.group} = ${g.role}${g.teams.length ? `: ${g.teams.join(', ')}` : ''}`).join('\n');
  return {
    title: t('console.sso.title'),
    speaker: sp,
    nav: navFor(s, '/console/sso'),
    body: html`<h1>${t('console.sso.title')}</h1>
${message ?? ''}
<p>${t('console.sso.intro')}</p>
<h2>${t('console.sso.forIdp')}</h2>
<dl class="facts">
<dt>${t('console.sso.redirectUri')}</dt><dd><code id="sso-redirect-uri">${urls.redirectUri}</code></dd>
<dt>${t('console.sso.logoutUri')}</dt><dd><code id="sso-logout-uri">${urls.backchannelLogoutUri}</code></dd>
<dt>${t('console.sso.scopes')}</dt><dd><code>openid email profile</code></dd>
<dt>${t('console.sso.claims')}</dt><dd><code>sub</code>, <code>email</code>, <code>email_verified</code>, <code>sid</code>, <code>${settings?.groupsClaim ?? 'groups'}</code></dd>
</dl>
<h2>${t('console.sso.connection')}</h2>
<form method="post" action="/console/sso/oidc" class="stack">
${csrfField(s.csrfToken)}
<label for="f-issuer">${t('console.sso.issuer')}</label> <input type="url" name="issuer" required maxlength="2048" id="f-issuer" aria-describedby="issuer-help" value="${settings?.issuer ?? ''}">
<p id="issuer-help" class="muted">${t('console.sso.issuerHelp')}</p>
<label for="f-client-id">${t('console.sso.clientId')}</label> <input name="clientId" required maxlength="512" id="f-client-id" autocomplete="off" value="${settings?.clientId ?? ''}">
<label for="f-client-secret">${t('console.sso.clientSecret')}</label> <input type="password" name="clientSecret" maxlength="1024" id="f-client-secret" autocomplete="new-password"${settings?.clientSecretSet ? html` aria-describedby="secret-help"` : html` required`}>
${settings?.clientSecretSet ? html`<p id="secret-help" class="muted">${t('console.sso.clientSecretKept')}</p>` : ''}
<label for="f-groups-claim">${t('console.sso.groupsClaim')}</label> <input name="groupsClaim" maxlength="200" id="f-groups-claim" value="${settings?.groupsClaim ?? 'groups'}">
<label for="f-group-roles">${t('console.sso.groupRoles')}</label> <textarea name="groupRoles" rows="4" id="f-group-roles" aria-describedby="group-roles-help">${mapping}</textarea>
<p id="group-roles-help" class="muted">${sp.rich('console.sso.groupRolesHelp', {}, { code })}</p>
<label for="f-default-role">${t('console.sso.defaultRole')}</label> <select name="defaultRole" id="f-default-role">
<option value=""${settings?.defaultRole ? '' : html` selected`}>${t('console.sso.noAccess')}</option>
${roles.map((r) => html`<option value="${r}"${settings?.defaultRole === r ? html` selected` : ''}>${t('console.sso.role', { role: r })}</option>`)}
</select>
<label for="f-session-max">${t('console.sso.sessionMax')}</label> <input type="number" name="sessionMaxHours" min="1" max="168" id="f-session-max" value="${String(settings?.sessionMaxHours ?? 168)}">
<button type="submit">${t('console.sso.save')}</button>
</form>
${
  settings
    ? html`<form method="post" action="/console/sso/remove" data-confirm="${t('console.sso.removeConfirm')}">${csrfField(s.csrfToken)}<button type="submit" class="danger">${t('console.sso.remove')}</button></form>`
    : html`<p class="muted">${t('console.sso.notSetUp')}</p>`
}
${saml ? samlSection(s, settings, saml, roles, mapping, sp) : ''}
<h2>${t('console.sso.domains')}</h2>
<p>${t('console.sso.domainsHelp')}</p>
${
  domains.length
    ? html`<div class="table-scroll" role="region" aria-labelledby="domains-caption" tabindex="0"><table>
<caption id="domains-caption">${t('console.sso.domains')}</caption>
<thead><tr><th scope="col">${t('console.sso.domain')}</th><th scope="col">${t('console.sso.txtName')}</th><th scope="col">${t('console.sso.txtValue')}</th><th scope="col">${t('console.sso.state')}</th><th scope="col">${t('console.sso.change')}</th></tr></thead>
<tbody>${domains.map(
        (d) => html`<tr><td>${d.domain}</td><td><code>${d.txtRecordName}</code></td><td><code>${d.txtRecordValue}</code></td>
<td>${d.verifiedAt ? t('console.sso.verified', { by: d.verifiedBy ?? 'dns', at: sp.when(d.verifiedAt) }) : t('console.sso.notVerified')}</td>
<td>${
          d.verifiedAt
            ? ''
            : html`<form method="post" action="/console/sso/domains/${encodeURIComponent(d.domain)}/verify">${csrfField(s.csrfToken)}<button type="submit" class="secondary" aria-label="${t('console.sso.verifyLabel', { domain: d.domain })}">${t('console.sso.verify')}</button></form>`
        }
<form method="post" action="/console/sso/domains/${encodeURIComponent(d.domain)}/remove">${csrfField(s.csrfToken)}<button type="submit" class="danger" aria-label="${t('console.sso.removeDomainLabel', { domain: d.domain })}">${t('console.sso.removeDomain')}</button></form></td></tr>`,
      )}</tbody></table></div>`
    : ''
}
<form method="post" action="/console/sso/domains" class="stack">
${csrfField(s.csrfToken)}
<label for="f-domain">${t('console.sso.domain')}</label> <input name="domain" required maxlength="253" id="f-domain" placeholder="${t('console.sso.domainExample')}">
<button type="submit">${t('console.sso.addDomain')}</button>
</form>
<h2>${t('console.sso.required')}</h2>
<p>${t('console.sso.requiredHelp')}</p>
<p>${t('console.sso.requiredEnds')}</p>
<p><strong>${settings?.required ? t('console.sso.requiredOn') : t('console.sso.requiredOff')}</strong></p>
<form method="post" action="/console/sso/required" class="stack">
${csrfField(s.csrfToken)}
<input type="hidden" name="required" value="${settings?.required ? 'false' : 'true'}">
<label for="f-break-glass">${t('console.sso.breakGlass')}</label> <select name="breakGlassMemberId" id="f-break-glass">
<option value="">${t('console.sso.none')}</option>
${owners.map((o) => html`<option value="${o.id}"${settings?.breakGlassMemberId === o.id ? html` selected` : ''}>${o.email}</option>`)}
</select>
<button type="submit">${settings?.required ? t('console.sso.requireOff') : t('console.sso.requireOn')}</button>
</form>`,
  };
}

/**
 * A page that sends the browser on by itself (a meta refresh, no script) with a link for the
 * rest: a new navigation, not a redirect. Leaving for the IdP so is not a redirect of the sign-in
 * form's post (which `form-action 'self'` would block), and coming back from it so makes the next
 * request same-site, so the SameSite=Strict session cookie goes with it.
 */
export function onwardPage(o: { title: string; heading: string; to: string; link: string; speaker?: Speaker }): string {
  const doc = page({
    title: o.title,
    speaker: o.speaker,
    body: html`<h1>${o.heading}</h1>
<p><a href="${o.to}" id="onward">${o.link}</a></p>`,
  });
  return doc.replace('<meta charset="utf-8">', `<meta charset="utf-8">\n<meta http-equiv="refresh" content="0; url=${escapeHtml(o.to)}">`);
}

/** An SSO sign-in refused: what to do, in plain words. */
export const refusedView = (message: string, sp: Speaker = PLAIN): PageOptions => ({
  title: sp.t('console.sso.refused'),
  speaker: sp,
  body: html`<h1>${sp.t('console.sso.refused')}</h1>
${notice(message)}
<p><a href="/console/sign-in">${sp.t('console.sso.backToSignIn')}</a></p>`,
});

/** The SAML part of the settings page: our SP's addresses to give the IdP, and the IdP's metadata and mappings. */
function samlSection(
  s: ConsoleSession,
  settings: SsoSettingsView | null,
  saml: { urls: SamlUrls; settings: SamlSettingsView | null },
  roles: string[],
  mapping: string,
  sp: Speaker,
): Safe {
  const { t } = sp;
  const isSaml = settings?.kind === 'saml';
  const idp = saml.settings?.idp ?? null;
  return html`<h2>${t('console.sso.samlTitle')}</h2>
<p>${t('console.sso.samlIntro')}</p>
<dl class="facts">
<dt>${t('console.sso.samlMetadataUrl')}</dt><dd><code id="saml-metadata-url">${saml.urls.metadataUrl}</code></dd>
<dt>${t('console.sso.samlEntityId')}</dt><dd><code id="saml-entity-id">${saml.urls.entityId}</code></dd>
<dt>${t('console.sso.samlAcsUrl')}</dt><dd><code id="saml-acs-url">${saml.urls.acsUrl}</code></dd>
<dt>${t('console.sso.samlSloUrl')}</dt><dd><code id="saml-slo-url">${saml.urls.sloUrl}</code></dd>
</dl>
${isSaml && idp ? html`<p><strong>${t('console.sso.samlConnected', { entityId: idp.entityId })}</strong></p>` : ''}
<form method="post" action="/console/sso/saml" class="stack">
${csrfField(s.csrfToken)}
<label for="f-saml-xml">${t('console.sso.samlIdpMetadataXml')}</label> <textarea name="metadataXml" rows="4" id="f-saml-xml" aria-describedby="saml-metadata-help"></textarea>
<label for="f-saml-url">${t('console.sso.samlIdpMetadataUrl')}</label> <input type="url" name="metadataUrl" maxlength="2048" id="f-saml-url" aria-describedby="saml-metadata-help" value="${idp?.metadataUrl ?? ''}">
<p id="saml-metadata-help" class="muted">${t('console.sso.samlMetadataHelp')}</p>
<label for="f-saml-email">${t('console.sso.samlEmailAttribute')}</label> <input name="emailAttribute" maxlength="512" id="f-saml-email" aria-describedby="saml-email-help" value="${saml.settings?.emailAttribute ?? ''}">
<p id="saml-email-help" class="muted">${t('console.sso.samlEmailHelp')}</p>
<label for="f-saml-groups">${t('console.sso.samlGroupsAttribute')}</label> <input name="groupsAttribute" maxlength="512" id="f-saml-groups" aria-describedby="saml-groups-help" value="${saml.settings?.groupsAttribute ?? ''}">
<p id="saml-groups-help" class="muted">${t('console.sso.samlGroupsHelp')}</p>
<label for="f-saml-group-roles">${t('console.sso.samlGroupRoles')}</label> <textarea name="groupRoles" rows="4" id="f-saml-group-roles" aria-describedby="saml-group-roles-help">${isSaml ? mapping : ''}</textarea>
<p id="saml-group-roles-help" class="muted">${sp.rich('console.sso.groupRolesHelp', {}, { code })}</p>
<label for="f-saml-default-role">${t('console.sso.samlDefaultRole')}</label> <select name="defaultRole" id="f-saml-default-role">
<option value=""${isSaml && settings?.defaultRole ? '' : html` selected`}>${t('console.sso.noAccess')}</option>
${roles.map((r) => html`<option value="${r}"${isSaml && settings?.defaultRole === r ? html` selected` : ''}>${t('console.sso.role', { role: r })}</option>`)}
</select>
<label for="f-saml-session-max">${t('console.sso.samlSessionMax')}</label> <input type="number" name="sessionMaxHours" min="1" max="168" id="f-saml-session-max" value="${String(settings?.sessionMaxHours ?? 168)}">
<button type="submit">${t('console.sso.samlSave')}</button>
</form>`;
}

/** What the browser sees after its IdP signed it out (when the IdP takes no LogoutResponse back). */
export const signedOutBody = (sp: Speaker = PLAIN): Safe => html`<h1>${sp.t('console.sso.signedOut')}</h1>
<p>${sp.t('console.sso.signedOutText')}</p>
<p><a href="/console/sign-in">${sp.t('console.sso.backToSignIn')}</a></p>`;
