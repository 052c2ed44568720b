import { operatorActor } from '../../domain/audit.js';
import { requireJsonObject } from '../../http/plugins/index.js';
import { ApiError } from '../../contract/errors.js';
import { AdminNoQuerySchema, OrgIdParamsSchema, adminResponses } from '../../contract/schemas/admin-common.js';
import {
  AddSsoDomainBodySchema,
  OidcSettingsBodySchema,
  SamlSettingsBodySchema,
  SsoDomainListSchema,
  SsoDomainParamsSchema,
  SsoDomainSchema,
  SsoRemovedSchema,
  SsoRequirementBodySchema,
  SsoSettingsSchema,
  VerifySsoDomainBodySchema,
} from '../../contract/schemas/admin-sso.js';
import { oidcPaths } from '../../domain/sso/oidc.js';
import {
  addDomain,
  getSsoSettings,
  listDomains,
  removeDomain,
  removeSsoSettings,
  saveOidcSettings,
  setSsoRequired,
  verifyDomain,
  type SsoSettingsView,
} from '../../domain/sso/settings.js';
import { requireLiveOrg } from '../../domain/orgs.js';
import { saveSamlSso } from '../../domain/sso/saml-sign-in.js';
import { consoleBaseUrl } from '../../config.js';
import type { AdminRouteDeps, App } from './types.js';

/** An organization's single sign-on (CONTRACT.md section 11, amended), as the console's owners set it up. */
export function registerSsoRoutes(app: App, { db, now, config }: AdminRouteDeps) {
  const rules = { allowPrivate: config.webhookAllowPrivate };
  const withUris = (orgId: string, s: SsoSettingsView) => {
    const p = oidcPaths(orgId);
    const base = consoleBaseUrl(config);
    return { ...s, redirectUri: base + p.callback, backchannelLogoutUri: base + p.backchannelLogout };
  };
  const tags = ['sso'];

  app.get(
    '/organizations/:orgId/sso',
    {
      schema: {
        operationId: 'getSso',
        summary: "The organization's single sign-on",
        description: 'Its IdP, groups mapping and enforcement, with the URIs to register at the IdP. Never the client secret. 404 when none is set up.',
        tags,
        querystring: AdminNoQuerySchema,
        params: OrgIdParamsSchema,
        response: adminResponses(SsoSettingsSchema, 'The settings.'),
      },
    },
    async (request) => {
      await requireLiveOrg(db, request.params.orgId);
      const s = await getSsoSettings(db, request.params.orgId);
      if (!s) throw new ApiError('not_found', 'This organization has no single sign-on set up.');
      return withUris(request.params.orgId, s);
    },
  );

  app.put(
    '/organizations/:orgId/sso/oidc',
    {
      preValidation: requireJsonObject,
      schema: {
        operationId: 'setSsoOidc',
        summary: 'Connect an OpenID Connect IdP',
        description:
          'The issuer is checked by discovery before anything is saved. The client secret is stored sealed and never answered. Audited as sso.configured.',
        tags,
        querystring: AdminNoQuerySchema,
        params: OrgIdParamsSchema,
        body: OidcSettingsBodySchema,
        response: adminResponses(SsoSettingsSchema, 'The settings as saved.'),
      },
    },
    async (request) => withUris(request.params.orgId, await saveOidcSettings(db, request.params.orgId, request.body, operatorActor(request.ip), now(), rules)),
  );

  app.put(
    '/organizations/:orgId/sso/saml',
    {
      preValidation: requireJsonObject,
      schema: {
        operationId: 'setSsoSaml',
        summary: 'Connect a SAML 2.0 IdP',
        description:
          "The IdP's metadata, pasted or fetched from its URL (SSRF-guarded), is read before anything is saved; it replaces an OpenID Connect IdP. Our SP's URLs are under PUBLIC_BASE_URL/console/sso/saml/<orgId>/ (metadata, acs, slo, start). Audited as organization.updated and sso.configured.",
        tags,
        querystring: AdminNoQuerySchema,
        params: OrgIdParamsSchema,
        body: SamlSettingsBodySchema,
        response: adminResponses(SsoSettingsSchema, 'The settings as saved.'),
      },
    },
    async (request) =>
      withUris(
        request.params.orgId,
        await saveSamlSso(db, request.params.orgId, request.body, operatorActor(request.ip), now(), {
          baseUrl: consoleBaseUrl(config),
          allowPrivate: rules.allowPrivate,
        }),
      ),
  );

  app.delete(
    '/organizations/:orgId/sso',
    {
      schema: {
        operationId: 'removeSso',
        summary: 'Turn single sign-on off',
        description: 'Sign-in through the IdP and enforced SSO stop; open sessions run to their end. The domains stay. Audited as sso.removed.',
        tags,
        querystring: AdminNoQuerySchema,
        params: OrgIdParamsSchema,
        response: adminResponses(SsoRemovedSchema, 'Removed.'),
      },
    },
    async (request) => {
      await removeSsoSettings(db, request.params.orgId, operatorActor(request.ip), now());
      return { removed: true };
    },
  );

  app.put(
    '/organizations/:orgId/sso/requirement',
    {
      preValidation: requireJsonObject,
      schema: {
        operationId: 'setSsoRequirement',
        summary: 'Require single sign-on (or stop requiring it)',
        description:
          'Required, password and two-factor sign-in stop for every member but the break-glass owner. Needs an IdP and a verified domain. Audited as sso.required.',
        tags,
        querystring: AdminNoQuerySchema,
        params: OrgIdParamsSchema,
        body: SsoRequirementBodySchema,
        response: adminResponses(SsoSettingsSchema, 'The settings as saved.'),
      },
    },
    async (request) => withUris(request.params.orgId, await setSsoRequired(db, request.params.orgId, request.body, operatorActor(request.ip), now())),
  );

  app.get(
    '/organizations/:orgId/sso/domains',
    {
      schema: {
        operationId: 'listSsoDomains',
        summary: "The organization's sign-in domains",
        description: 'Each with the TXT record that proves it and whether it is verified.',
        tags,
        querystring: AdminNoQuerySchema,
        params: OrgIdParamsSchema,
        response: adminResponses(SsoDomainListSchema, 'Every domain, by name.'),
      },
    },
    async (request) => {
      await requireLiveOrg(db, request.params.orgId);
      return { items: await listDomains(db, request.params.orgId) };
    },
  );

  app.post(
    '/organizations/:orgId/sso/domains',
    {
      preValidation: requireJsonObject,
      schema: {
        operationId: 'addSsoDomain',
        summary: 'Add a sign-in domain',
        description: 'Not verified yet: publish its TXT record, then verify it. Audited as sso_domain.added.',
        tags,
        querystring: AdminNoQuerySchema,
        params: OrgIdParamsSchema,
        body: AddSsoDomainBodySchema,
        response: adminResponses(SsoDomainSchema, 'The domain, with its TXT record.', { status: 201 }),
      },
    },
    async (request, reply) => {
      const d = await addDomain(db, request.params.orgId, request.body.domain, operatorActor(request.ip), now());
      reply.code(201);
      return d;
    },
  );

  app.post(
    '/organizations/:orgId/sso/domains/:domain/verify',
    {
      preValidation: requireJsonObject,
      schema: {
        operationId: 'verifySsoDomain',
        summary: 'Verify a sign-in domain',
        description:
          "By its TXT record (looked up now) or on the operator's word. A domain verified by another organization is refused (400). Audited as sso_domain.verified.",
        tags,
        querystring: AdminNoQuerySchema,
        params: SsoDomainParamsSchema,
        body: VerifySsoDomainBodySchema,
        response: adminResponses(SsoDomainSchema, 'The domain, verified.'),
      },
    },
    async (request) => verifyDomain(db, request.params.orgId, request.params.domain, request.body.method, operatorActor(request.ip), now()),
  );

  app.delete(
    '/organizations/:orgId/sso/domains/:domain',
    {
      schema: {
        operationId: 'removeSsoDomain',
        summary: 'Remove a sign-in domain',
        description: 'Its addresses sign in with a password again. Audited as sso_domain.removed.',
        tags,
        querystring: AdminNoQuerySchema,
        params: SsoDomainParamsSchema,
        response: adminResponses(SsoRemovedSchema, 'Removed.'),
      },
    },
    async (request) => {
      await removeDomain(db, request.params.orgId, request.params.domain, operatorActor(request.ip), now());
      return { removed: true };
    },
  );
}
