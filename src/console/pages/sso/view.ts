import type { ConsoleSession } from '../../../domain/sessions.js';
import type { MemberView } from '../../../domain/members.js';
import type { SsoDomainView, SsoSettingsView } from '../../../domain/sso/settings.js';
import type { SamlSettingsView, SamlUrls } from '../../../domain/sso/saml.js';
import { csrfField, escapeHtml, html, notice, page, type PageOptions, type Safe } from '../../html.js';
import { navFor } from '../../views/nav.js';
import { when } from '../../views/layout.js';

/** The words of the single sign-on pages, together (src/console/words.ts's rule). */
export const SSO_WORDS = {
  title: 'Single sign-on',
  intro:
    "Let your organization's identity provider (Okta, Microsoft Entra ID, Google Workspace, Keycloak and others) sign people in. People whose work address is on a verified domain below are sent there from the sign-in page.",
  forIdp: 'What to give your identity provider',
  redirectUri: 'Redirect URI (sign-in callback)',
  logoutUri: 'Back-channel logout URI',
  scopes: 'Scopes asked for',
  claims: 'Claims read from the ID token',
  connection: 'OpenID Connect connection',
  issuer: 'Issuer URL',
  issuerHelp: 'The address your identity provider gives as its issuer; its /.well-known/openid-configuration must answer.',
  clientId: 'Client ID',
  clientSecret: 'Client secret',
  clientSecretKept: 'A secret is saved. Leave this empty to keep it.',
  groupsClaim: 'Groups claim',
  groupRoles: 'Groups and roles',
  groupRolesHelp: "One line per group: 'group = role' (owner, admin, viewer), or for a manager 'group = manager: team_a, team_b'.",
  defaultRole: 'Role of people in none of these groups',
  noAccess: 'No access',
  sessionMax: 'Longest session (hours, at most 168)',
  save: 'Save connection',
  remove: 'Turn off single sign-on',
  removeConfirm: 'Turn off single sign-on? People of your domains will sign in with a password again (if they have one).',
  domains: 'Domains',
  domainsHelp:
    'Add each domain of your work addresses, then prove it is yours: publish the TXT record shown, and choose Verify. The platform operator can also verify a domain for you.',
  domain: 'Domain',
  txtName: 'TXT record name',
  txtValue: 'TXT record value',
  state: 'State',
  verified: (by: string, at: string) => `Verified (${by === 'dns' ? 'by DNS' : 'by the operator'}) ${at}`,
  notVerified: 'Not verified yet',
  verify: 'Verify',
  removeDomain: 'Remove',
  addDomain: 'Add domain',
  required: 'Require single sign-on',
  requiredHelp:
    'When required, password and two-factor sign-in stop for every member. Only the break-glass owner keeps a way in without the identity provider (a passkey), in case it fails.',
  requiredOn: 'Single sign-on is required.',
  requiredOff: 'Single sign-on is not required: members may also sign in with a password.',
  breakGlass: 'Break-glass owner',
  none: 'None',
  requireOn: 'Require single sign-on',
  requireOff: 'Stop requiring single sign-on',
  notSetUp: 'Single sign-on is not set up.',
  redirecting: "Taking you to your organization's sign-in",
  continueIdp: "Continue to your organization's sign-in",
  signedIn: 'Signed in',
  continueConsole: 'Continue to the console',
  refused: 'Sign-in did not complete',
  backToSignIn: 'Back to the sign-in page',
  saved: 'The OpenID Connect connection is saved.',
  removed: 'Single sign-on is turned off.',
  domainAdded: (d: string) => `${d} is added. Publish its TXT record, then choose Verify.`,
  domainVerified: (d: string) => `${d} is verified.`,
  domainRemoved: (d: string) => `${d} is removed.`,
  samlTitle: 'SAML 2.0 connection',
  samlIntro:
    'Use this instead of OpenID Connect if your identity provider speaks SAML. Give it the three addresses below (or just the metadata address), then paste its metadata here or give the address where it publishes it. Saving replaces any OpenID Connect connection.',
  samlMetadataUrl: 'Our metadata address',
  samlEntityId: 'Our entity ID (audience)',
  samlAcsUrl: 'Assertion consumer service (HTTP-POST)',
  samlSloUrl: 'Single logout (HTTP-Redirect and HTTP-POST)',
  samlConnected: (entityId: string) => `Connected to the identity provider ${entityId}.`,
  samlIdpMetadataXml: "Your identity provider's metadata (paste the XML)",
  samlIdpMetadataUrl: "Or the address of your identity provider's metadata",
  samlMetadataHelp: 'Fill in one of the two. An address is read now, and must be a public https address.',
  samlEmailAttribute: 'Attribute holding the email address',
  samlEmailHelp: 'Leave empty to use the usual ones (email, mail, emailaddress), then the NameID if it is an address.',
  samlGroupsAttribute: 'Attribute holding the groups',
  samlGroupsHelp: 'Leave empty to use the usual ones (groups, memberOf).',
  samlGroupRoles: 'Group mapping',
  samlDefaultRole: 'Role of people in no mapped group',
  samlSessionMax: 'Longest session through SAML (hours, at most 168)',
  samlSave: 'Save SAML connection',
  samlSaved: 'The SAML connection is saved.',
  logoutRefused: 'The sign-out request from your identity provider was not accepted.',
  signedOut: 'Signed out',
  signedOutText: 'Your identity provider signed you out of the console.',
} as const;

export interface SsoPageData {
  session: ConsoleSession;
  settings: SsoSettingsView | null;
  domains: SsoDomainView[];
  owners: MemberView[];
  urls: { redirectUri: string; backchannelLogoutUri: string };
  saml?: { urls: SamlUrls; settings: SamlSettingsView | null };
  message?: Safe;
}

const W = SSO_WORDS;

/** The single sign-on settings page (owners): what to give the IdP, the connection, the domains, and enforcement. */
export function ssoView({ session: s, settings, domains, owners, urls, saml, message }: SsoPageData): PageOptions {
  const roles = ['admin', 'viewer'];
  const mapping = (settings?.groupRoles ?? []).map((g) => `${g.group} = ${g.role}${g.teams.length ? `: ${g.teams.join(', ')}` : ''}`).join('\n');
  return {
    title: W.title,
    nav: navFor(s, '/console/sso'),
    body: html`<h1>${W.title}</h1>
${message ?? ''}
<p>${W.intro}</p>
<h2>${W.forIdp}</h2>
<dl class="facts">
<dt>${W.redirectUri}</dt><dd><code id="sso-redirect-uri">${urls.redirectUri}</code></dd>
<dt>${W.logoutUri}</dt><dd><code id="sso-logout-uri">${urls.backchannelLogoutUri}</code></dd>
<dt>${W.scopes}</dt><dd><code>openid email profile</code></dd>
<dt>${W.claims}</dt><dd><code>sub</code>, <code>email</code>, <code>email_verified</code>, <code>sid</code>, <code>${settings?.groupsClaim ?? 'groups'}</code></dd>
</dl>
<h2>${W.connection}</h2>
<form method="post" action="/console/sso/oidc" class="stack">
${csrfField(s.csrfToken)}
<label for="f-issuer">${W.issuer}</label> <input type="url" name="issuer" required maxlength="2048" id="f-issuer" aria-describedby="issuer-help" value="${settings?.issuer ?? ''}">
<p id="issuer-help" class="muted">${W.issuerHelp}</p>
<label for="f-client-id">${W.clientId}</label> <input name="clientId" required maxlength="512" id="f-client-id" autocomplete="off" value="${settings?.clientId ?? ''}">
<label for="f-client-secret">${W.clientSecret}</label> <input type="password" name="clientSecret" maxlength="1024" id="f-client-secret" autocomplete="new-password"${settings?.clientSecretSet ? html` aria-describedby="secret-help"` : html` required`}>
${settings?.clientSecretSet ? html`<p id="secret-help" class="muted">${W.clientSecretKept}</p>` : ''}
<label for="f-groups-claim">${W.groupsClaim}</label> <input name="groupsClaim" maxlength="200" id="f-groups-claim" value="${settings?.groupsClaim ?? 'groups'}">
<label for="f-group-roles">${W.groupRoles}</label> <textarea name="groupRoles" rows="4" id="f-group-roles" aria-describedby="group-roles-help">${mapping}</textarea>
<p id="group-roles-help" class="muted">${W.groupRolesHelp}</p>
<label for="f-default-role">${W.defaultRole}</label> <select name="defaultRole" id="f-default-role">
<option value=""${settings?.defaultRole ? '' : html` selected`}>${W.noAccess}</option>
${roles.map((r) => html`<option value="${r}"${settings?.defaultRole === r ? html` selected` : ''}>${r}</option>`)}
</select>
<label for="f-session-max">${W.sessionMax}</label> <input type="number" name="sessionMaxHours" min="1" max="168" id="f-session-max" value="${String(settings?.sessionMaxHours ?? 168)}">
<button type="submit">${W.save}</button>
</form>
${
  settings
    ? html`<form method="post" action="/console/sso/remove" data-confirm="${W.removeConfirm}">${csrfField(s.csrfToken)}<button type="submit" class="danger">${W.remove}</button></form>`
    : html`<p class="muted">${W.notSetUp}</p>`
}
${saml ? samlSection(s, settings, saml, roles, mapping) : ''}
<h2>${W.domains}</h2>
<p>${W.domainsHelp}</p>
${
  domains.length
    ? html`<div class="table-scroll" role="region" aria-labelledby="domains-caption" tabindex="0"><table>
<caption id="domains-caption">${W.domains}</caption>
<thead><tr><th scope="col">${W.domain}</th><th scope="col">${W.txtName}</th><th scope="col">${W.txtValue}</th><th scope="col">${W.state}</th><th scope="col">Change</th></tr></thead>
<tbody>${domains.map(
        (d) => html`<tr><td>${d.domain}</td><td><code>${d.txtRecordName}</code></td><td><code>${d.txtRecordValue}</code></td>
<td>${d.verifiedAt ? W.verified(d.verifiedBy ?? 'dns', when(d.verifiedAt)) : W.notVerified}</td>
<td>${
          d.verifiedAt
            ? ''
            : html`<form method="post" action="/console/sso/domains/${encodeURIComponent(d.domain)}/verify">${csrfField(s.csrfToken)}<button type="submit" class="secondary" aria-label="${W.verify} ${d.domain}">${W.verify}</button></form>`
        }
<form method="post" action="/console/sso/domains/${encodeURIComponent(d.domain)}/remove">${csrfField(s.csrfToken)}<button type="submit" class="danger" aria-label="${W.removeDomain} ${d.domain}">${W.removeDomain}</button></form></td></tr>`,
      )}</tbody></table></div>`
    : ''
}
<form method="post" action="/console/sso/domains" class="stack">
${csrfField(s.csrfToken)}
<label for="f-domain">${W.domain}</label> <input name="domain" required maxlength="253" id="f-domain" placeholder="example.com">
<button type="submit">${W.addDomain}</button>
</form>
<h2>${W.required}</h2>
<p>${W.requiredHelp}</p>
<p><strong>${settings?.required ? W.requiredOn : W.requiredOff}</strong></p>
<form method="post" action="/console/sso/required" class="stack">
${csrfField(s.csrfToken)}
<input type="hidden" name="required" value="${settings?.required ? 'false' : 'true'}">
<label for="f-break-glass">${W.breakGlass}</label> <select name="breakGlassMemberId" id="f-break-glass">
<option value="">${W.none}</option>
${owners.map((o) => html`<option value="${o.id}"${settings?.breakGlassMemberId === o.id ? html` selected` : ''}>${o.email}</option>`)}
</select>
<button type="submit">${settings?.required ? W.requireOff : W.requireOn}</button>
</form>`,
  };
}

/**
 * A page that sends the browser on by itself (a meta refresh, no script) with a link for the
 * rest: a new navigation, not a redirect. Leaving for the IdP so is not a redirect of the sign-in
 * form's post (which `form-action 'self'` would block), and coming back from it so makes the next
 * request same-site, so the SameSite=Strict session cookie goes with it.
 */
export function onwardPage(o: { title: string; heading: string; to: string; link: string }): string {
  const doc = page({
    title: o.title,
    body: html`<h1>${o.heading}</h1>
<p><a href="${o.to}" id="onward">${o.link}</a></p>`,
  });
  return doc.replace('<meta charset="utf-8">', `<meta charset="utf-8">\n<meta http-equiv="refresh" content="0; url=${escapeHtml(o.to)}">`);
}

/** An SSO sign-in refused: what to do, in plain words. */
export const refusedView = (message: string): PageOptions => ({
  title: W.refused,
  body: html`<h1>${W.refused}</h1>
${notice(message)}
<p><a href="/console/sign-in">${W.backToSignIn}</a></p>`,
});

/** The SAML part of the settings page: our SP's addresses to give the IdP, and the IdP's metadata and mappings. */
function samlSection(
  s: ConsoleSession,
  settings: SsoSettingsView | null,
  saml: { urls: SamlUrls; settings: SamlSettingsView | null },
  roles: string[],
  mapping: string,
): Safe {
  const isSaml = settings?.kind === 'saml';
  const idp = saml.settings?.idp ?? null;
  return html`<h2>${W.samlTitle}</h2>
<p>${W.samlIntro}</p>
<dl class="facts">
<dt>${W.samlMetadataUrl}</dt><dd><code id="saml-metadata-url">${saml.urls.metadataUrl}</code></dd>
<dt>${W.samlEntityId}</dt><dd><code id="saml-entity-id">${saml.urls.entityId}</code></dd>
<dt>${W.samlAcsUrl}</dt><dd><code id="saml-acs-url">${saml.urls.acsUrl}</code></dd>
<dt>${W.samlSloUrl}</dt><dd><code id="saml-slo-url">${saml.urls.sloUrl}</code></dd>
</dl>
${isSaml && idp ? html`<p><strong>${W.samlConnected(idp.entityId)}</strong></p>` : ''}
<form method="post" action="/console/sso/saml" class="stack">
${csrfField(s.csrfToken)}
<label for="f-saml-xml">${W.samlIdpMetadataXml}</label> <textarea name="metadataXml" rows="4" id="f-saml-xml" aria-describedby="saml-metadata-help"></textarea>
<label for="f-saml-url">${W.samlIdpMetadataUrl}</label> <input type="url" name="metadataUrl" maxlength="2048" id="f-saml-url" aria-describedby="saml-metadata-help" value="${idp?.metadataUrl ?? ''}">
<p id="saml-metadata-help" class="muted">${W.samlMetadataHelp}</p>
<label for="f-saml-email">${W.samlEmailAttribute}</label> <input name="emailAttribute" maxlength="512" id="f-saml-email" aria-describedby="saml-email-help" value="${saml.settings?.emailAttribute ?? ''}">
<p id="saml-email-help" class="muted">${W.samlEmailHelp}</p>
<label for="f-saml-groups">${W.samlGroupsAttribute}</label> <input name="groupsAttribute" maxlength="512" id="f-saml-groups" aria-describedby="saml-groups-help" value="${saml.settings?.groupsAttribute ?? ''}">
<p id="saml-groups-help" class="muted">${W.samlGroupsHelp}</p>
<label for="f-saml-group-roles">${W.samlGroupRoles}</label> <textarea name="groupRoles" rows="4" id="f-saml-group-roles" aria-describedby="saml-group-roles-help">${isSaml ? mapping : ''}</textarea>
<p id="saml-group-roles-help" class="muted">${W.groupRolesHelp}</p>
<label for="f-saml-default-role">${W.samlDefaultRole}</label> <select name="defaultRole" id="f-saml-default-role">
<option value=""${isSaml && settings?.defaultRole ? '' : html` selected`}>${W.noAccess}</option>
${roles.map((r) => html`<option value="${r}"${isSaml && settings?.defaultRole === r ? html` selected` : ''}>${r}</option>`)}
</select>
<label for="f-saml-session-max">${W.samlSessionMax}</label> <input type="number" name="sessionMaxHours" min="1" max="168" id="f-saml-session-max" value="${String(settings?.sessionMaxHours ?? 168)}">
<button type="submit">${W.samlSave}</button>
</form>`;
}

/** What the browser sees after its IdP signed it out (when the IdP takes no LogoutResponse back). */
export const signedOutBody = (): Safe => html`<h1>${W.signedOut}</h1>
<p>${W.signedOutText}</p>
<p><a href="/console/sign-in">${W.backToSignIn}</a></p>`;
