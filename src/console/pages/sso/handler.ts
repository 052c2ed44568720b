import { ApiError } from '../../../contract/errors.js';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { DatabaseExecutor } from '../../../domain/database.js';
import { listMembers } from '../../../domain/members.js';
import { finishOidcSignIn, LogoutTokenRefused, oidcBackchannelLogout, oidcPaths, SsoRefused, startOidcSignIn } from '../../../domain/sso/oidc.js';
import {
  addDomain,
  getSsoSettings,
  listDomains,
  removeDomain,
  removeSsoSettings,
  saveOidcSettings,
  setSsoRequired,
  verifyDomain,
  type TxtResolver,
} from '../../../domain/sso/settings.js';
import type { SsoNetworkRules } from '../../../domain/sso/fetch.js';
import { ssoKindOf, finishSamlSignIn, samlSingleLogout, saveSamlSso, forgetSamlIdp } from '../../../domain/sso/saml-sign-in.js';
import { getSamlSettings, samlUrls, spMetadataXml, startSamlSignIn } from '../../../domain/sso/saml.js';
import { setPageHeaders } from '../../../http/html.js';
import { notice, type Safe } from '../../html.js';
import { actorOf, changeOutcome, OWNERS, readCookie, setSessionCookie, type ConsoleDeps, type Form } from '../../plugins/index.js';
import { inWords, readerOf, refusalWords } from '../../plugins/errors.js';
import { sendPage } from '../../views/layout.js';
import { speakerOf } from '../../views/speaker.js';
import type { Speaker } from '../../words.js';
import { domainOf, oidcSettingsOf, requiredOf, samlSettingsOf } from './form.js';
import { onwardPage, refusedView, signedOutBody, ssoView } from './view.js';

/** The page that sends the browser on to the IdP, or back to the console, in the reader's words. */
const onward = (sp: Speaker, to: string, leaving: boolean) =>
  onwardPage({
    title: sp.t(leaving ? 'console.sso.redirecting' : 'console.sso.signedIn'),
    heading: sp.t(leaving ? 'console.sso.redirecting' : 'console.sso.signedIn'),
    to,
    link: sp.t(leaving ? 'console.sso.continueIdp' : 'console.sso.continueConsole'),
    speaker: sp,
  });

/** The cookie that binds a sign-in under way to the browser that began it: Lax, so that it comes back with the IdP's redirect. */
const SSO_COOKIE = 'cp_sso';
const SSO_COOKIE_PATH = '/console/sso';
const ssoCookie = (value: string, maxAge: number, secure: boolean) =>
  `${SSO_COOKIE}=${value}; Path=${SSO_COOKIE_PATH}; HttpOnly; SameSite=Lax; Max-Age=${maxAge}${secure ? '; Secure' : ''}`;

export interface SsoPageDeps extends ConsoleDeps {
  db: DatabaseExecutor;
  /** WEBHOOK_ALLOW_PRIVATE: the IdP may be on loopback over http (local development and tests). */
  webhooks?: { allowPrivate?: boolean };
  /** Tests give their own TXT lookup; else node:dns. */
  resolveTxt?: TxtResolver;
}

const rulesOf = (deps: SsoPageDeps): SsoNetworkRules => ({ allowPrivate: deps.webhooks?.allowPrivate ?? false });
const hidden = { schema: { hide: true } };
const ORG_ID = /^[A-Za-z0-9_-]{1,128}$/;

/** Where the sign-in page sends an address of an organization's verified domain (SAML). */
export const samlStartFor = (orgId: string) => `/console/sso/saml/${encodeURIComponent(orgId)}/start`;

/**
 * The cookie of a SAML sign-in under way holds the AuthnRequest's id: the ACS reads it as the only
 * request this browser may answer. The IdP's answer is a cross-site POST, which a SameSite=Lax
 * cookie does not follow between different sites; so over https it is SameSite=None (with Secure),
 * and Lax only over http (a laptop, the tests), where no browser takes SameSite=None.
 */
const samlCookie = (value: string, maxAge: number, secure: boolean) =>
  `${SSO_COOKIE}=${value}; Path=${SSO_COOKIE_PATH}; HttpOnly; SameSite=${secure ? 'None' : 'Lax'}; Max-Age=${maxAge}${secure ? '; Secure' : ''}`;
const REQUEST_ID = /^[A-Za-z0-9_.-]{1,256}$/;

/** Where the sign-in page sends an address of an organization's verified domain (OpenID Connect). */
export const ssoStartFor = (orgId: string, email: string) => `${oidcPaths(orgId).start}?login_hint=${encodeURIComponent(email)}`;

/** Signing in through the IdP: leaving for it, and coming back. No member yet. */
export function registerSsoSignInPages(scope: FastifyInstance, deps: SsoPageDeps) {
  const { db, now } = deps;
  // The refusal page: a refusal of the domain (in the reader's words), or none: not set up.
  const refused = (reply: FastifyReply, status: number, err?: ApiError) => {
    const sp = readerOf(reply.request);
    return sendPage(reply, status, refusedView(err ? refusalWords(sp, err) : sp.t('console.sso.notSetUp'), sp));
  };

  scope.get<{ Params: { orgId: string }; Querystring: { login_hint?: string } }>('/sso/:orgId/oidc/start', hidden, async (request, reply) => {
    if (!ORG_ID.test(request.params.orgId)) return refused(reply, 404);
    try {
      const hint = typeof request.query.login_hint === 'string' ? request.query.login_hint.slice(0, 254) : undefined;
      const started = await startOidcSignIn(db, request.params.orgId, { baseUrl: deps.baseUrl, loginHint: hint, rules: rulesOf(deps), now: now() });
      reply.header('set-cookie', ssoCookie(started.browserCookie, 600, deps.secureCookies));
      return reply
        .code(200)
        .type('text/html; charset=utf-8')
        .send(onward(readerOf(request), started.authorizationUrl, true));
    } catch (err) {
      if (!(err instanceof SsoRefused)) throw err;
      request.log.warn({ sso: { reason: err.reason, detail: err.detail } }, 'sso sign-in not started');
      return refused(reply, err.reason === 'not_set_up' ? 404 : 502, err);
    }
  });

  scope.get<{ Params: { orgId: string } }>('/sso/saml/:orgId/metadata', hidden, async (request, reply) => {
    if (!ORG_ID.test(request.params.orgId)) return refused(reply, 404);
    try {
      const xml = await spMetadataXml(db, request.params.orgId, deps.baseUrl);
      reply.header('cache-control', 'no-store');
      return reply.code(200).type('application/samlmetadata+xml; charset=utf-8').send(xml);
    } catch (err) {
      if (err instanceof ApiError && err.code === 'not_found') return refused(reply, 404);
      throw err;
    }
  });

  scope.get<{ Params: { orgId: string } }>('/sso/saml/:orgId/start', hidden, async (request, reply) => {
    const orgId = request.params.orgId;
    if (!ORG_ID.test(orgId) || (await ssoKindOf(db, orgId)) !== 'saml') return refused(reply, 404);
    try {
      const started = await startSamlSignIn(db, orgId, deps.baseUrl);
      reply.header('set-cookie', samlCookie(started.requestId, 600, deps.secureCookies));
      return reply
        .code(200)
        .type('text/html; charset=utf-8')
        .send(onward(readerOf(request), started.redirectUrl, true));
    } catch (err) {
      if (err instanceof ApiError && err.code === 'not_found') return refused(reply, 404);
      throw err;
    }
  });

  scope.get<{ Params: { orgId: string } }>('/sso/:orgId/oidc/callback', hidden, async (request, reply) => {
    if (!ORG_ID.test(request.params.orgId)) return refused(reply, 404);
    const query = request.url.includes('?') ? request.url.slice(request.url.indexOf('?') + 1) : '';
    reply.header('set-cookie', ssoCookie('', 0, deps.secureCookies));
    try {
      const s = await finishOidcSignIn(db, request.params.orgId, {
        baseUrl: deps.baseUrl,
        query,
        browserCookie: readCookie(request, SSO_COOKIE),
        address: request.ip,
        rules: rulesOf(deps),
        now: now(),
      });
      setSessionCookie(reply, s.cookie, deps);
      return reply
        .code(200)
        .type('text/html; charset=utf-8')
        .send(onward(readerOf(request), '/console/overview', false));
    } catch (err) {
      if (!(err instanceof SsoRefused)) throw err;
      request.log.warn({ sso: { orgId: request.params.orgId, reason: err.reason, detail: err.detail } }, 'sso sign-in refused');
      return refused(reply, 400, err);
    }
  });
}

/**
 * OpenID Connect back-channel logout: the IdP's server POSTs a logout token here. Outside the
 * console's pages (no session, no form token: the signed token is the proof), in a scope of its own.
 */
export async function registerSsoBackchannel(app: FastifyInstance, deps: SsoPageDeps) {
  await app.register(
    async (scope) => {
      // A SAMLResponse may be large (certificates, many groups): saml.ts reads at most 512 KiB of it.
      scope.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string', bodyLimit: 600_000 }, (_request, body, done) => {
        done(null, Object.fromEntries(new URLSearchParams(body as string)));
      });
      registerSamlIdpRoutes(scope, deps);
      scope.post<{ Params: { orgId: string }; Body: Record<string, string> | undefined }>('/:orgId/oidc/backchannel-logout', hidden, async (request, reply) => {
        reply.header('cache-control', 'no-store');
        // An organization id is letters, digits, dot, dash and underscore: anything else (a NUL, a
        // control character) is refused before it reaches a query or a log line (issue 52, L1).
        if (!/^[A-Za-z0-9._-]{1,128}$/.test(request.params.orgId)) throw new ApiError('invalid_request', "'orgId' must be an organization id.");
        try {
          const { ended } = await oidcBackchannelLogout(deps.db, request.params.orgId, request.body?.logout_token, {
            rules: rulesOf(deps),
            now: deps.now(),
            address: request.ip,
          });
          request.log.info({ sso: { orgId: request.params.orgId, ended } }, 'sso back-channel logout');
          return reply.code(200).send();
        } catch (err) {
          if (err instanceof LogoutTokenRefused) request.log.warn({ sso: { orgId: request.params.orgId, reason: err.reason } }, 'sso logout token refused');
          throw err;
        }
      });
    },
    { prefix: SSO_COOKIE_PATH },
  );
}

/**
 * SAML's assertion consumer service and single logout: the IdP's cross-site POST (and redirect),
 * outside the console's form checks (the signed message is the proof; the ACS is bound to the
 * browser by the cp_sso cookie set at start), with the console's page headers.
 */
function registerSamlIdpRoutes(scope: FastifyInstance, deps: SsoPageDeps) {
  const { db, now } = deps;
  // This scope is the application's, not the console's: whether cookies are Secure follows the public URL.
  const secure = deps.baseUrl.startsWith('https://');
  const page = { ...deps, secureCookies: secure };

  scope.post<{ Params: { orgId: string }; Body: Record<string, string> | undefined }>('/saml/:orgId/acs', hidden, async (request, reply) => {
    setPageHeaders(reply, { https: secure });
    const orgId = request.params.orgId;
    if (!ORG_ID.test(orgId)) return sendPage(reply, 400, refusedView(readerOf(request).t('console.sso.notSetUp'), readerOf(request)));
    const bound = readCookie(request, SSO_COOKIE);
    reply.header('set-cookie', samlCookie('', 0, secure));
    try {
      const s = await finishSamlSignIn(db, orgId, {
        baseUrl: deps.baseUrl,
        samlResponse: request.body?.SAMLResponse,
        expectedRequestId: bound && REQUEST_ID.test(bound) ? bound : undefined,
        address: request.ip,
        now: now(),
      });
      setSessionCookie(reply, s.cookie, page);
      return reply
        .code(200)
        .type('text/html; charset=utf-8')
        .send(onward(readerOf(request), '/console/overview', false));
    } catch (err) {
      if (!(err instanceof SsoRefused)) throw err;
      request.log.warn({ sso: { orgId, protocol: 'saml', reason: err.reason, detail: err.detail } }, 'sso sign-in refused');
      return sendPage(reply, 400, refusedView(refusalWords(readerOf(request), err), readerOf(request)));
    }
  });

  const slo = async (request: FastifyRequest<{ Params: { orgId: string }; Body: Record<string, string> | undefined }>, reply: FastifyReply) => {
    setPageHeaders(reply, { https: secure });
    const orgId = request.params.orgId;
    if (!ORG_ID.test(orgId)) return sendPage(reply, 400, refusedView(readerOf(request).t('console.sso.notSetUp'), readerOf(request)));
    const message =
      request.method === 'GET'
        ? {
            query: request.query as Record<string, string | undefined>,
            rawQuery: request.url.includes('?') ? request.url.slice(request.url.indexOf('?') + 1) : '',
          }
        : { body: (request.body ?? {}) as Record<string, string | undefined> };
    const r = await samlSingleLogout(db, orgId, deps.baseUrl, message, { address: request.ip, now: now() });
    if (!r.ok) {
      request.log.warn({ sso: { orgId, protocol: 'saml', reason: r.refusal, detail: r.detail } }, 'saml logout request refused');
      return sendPage(reply, 400, refusedView(readerOf(request).t('console.sso.logoutRefused'), readerOf(request)));
    }
    request.log.info({ sso: { orgId, protocol: 'saml', ended: r.ended } }, 'saml single logout');
    if (r.redirectUrl) return reply.redirect(r.redirectUrl, 302);
    const sp = readerOf(request);
    return sendPage(reply, 200, { title: sp.t('console.sso.signedOut'), speaker: sp, body: signedOutBody(sp) });
  };
  scope.get('/saml/:orgId/slo', hidden, slo);
  scope.post('/saml/:orgId/slo', hidden, slo);
}

/** The single sign-on settings page (owners). */
export function registerSsoPages(scope: FastifyInstance, deps: SsoPageDeps) {
  const { db, now } = deps;
  const owner = { config: { roles: OWNERS } };

  const ssoPage = async (request: FastifyRequest, reply: FastifyReply, status: number, message?: Safe) => {
    const s = request.member;
    const [settings, domains, members] = await Promise.all([getSsoSettings(db, s.orgId), listDomains(db, s.orgId), listMembers(db, s.orgId)]);
    const paths = oidcPaths(s.orgId);
    return sendPage(
      reply,
      status,
      ssoView({
        session: s,
        settings,
        domains,
        owners: members.filter((m) => m.role === 'owner'),
        urls: { redirectUri: deps.baseUrl + paths.callback, backchannelLogoutUri: deps.baseUrl + paths.backchannelLogout },
        saml: { urls: samlUrls(deps.baseUrl, s.orgId), settings: await getSamlSettings(db, s.orgId, deps.baseUrl) },
        message,
        speaker: await speakerOf(db, request),
      }),
    );
  };
  const changed = changeOutcome(ssoPage);
  // A change's outcome: its notice, and a refusal, in the reader's words.
  const outcome = (request: FastifyRequest, reply: FastifyReply, work: (sp: Speaker) => Promise<Safe>) =>
    changed(request, reply, async () => {
      const sp = await speakerOf(db, request);
      return inWords(sp, () => work(sp));
    });

  scope.get('/sso', owner, async (request, reply) => ssoPage(request, reply, 200));

  scope.post<{ Body: Form }>('/sso/oidc', owner, async (request, reply) =>
    outcome(request, reply, async (sp) => {
      await saveOidcSettings(db, request.member.orgId, oidcSettingsOf(request.body), actorOf(request), now(), rulesOf(deps));
      return notice(sp.t('console.sso.saved'), 'ok');
    }),
  );

  scope.post<{ Body: Form }>('/sso/saml', owner, async (request, reply) =>
    outcome(request, reply, async (sp) => {
      await saveSamlSso(db, request.member.orgId, samlSettingsOf(request.body), actorOf(request), now(), {
        baseUrl: deps.baseUrl,
        allowPrivate: rulesOf(deps).allowPrivate,
      });
      return notice(sp.t('console.sso.samlSaved'), 'ok');
    }),
  );

  scope.post('/sso/remove', owner, async (request, reply) =>
    outcome(request, reply, async (sp) => {
      const wasSaml = (await ssoKindOf(db, request.member.orgId)) === 'saml';
      await removeSsoSettings(db, request.member.orgId, actorOf(request), now());
      if (wasSaml) await forgetSamlIdp(db, request.member.orgId, actorOf(request));
      return notice(sp.t('console.sso.removed'), 'ok');
    }),
  );

  scope.post<{ Body: Form }>('/sso/required', owner, async (request, reply) =>
    outcome(request, reply, async (sp) => {
      const s = await setSsoRequired(db, request.member.orgId, requiredOf(request.body), actorOf(request), now());
      return notice(sp.t(s.required ? 'console.sso.requiredOn' : 'console.sso.requiredOff'), 'ok');
    }),
  );

  scope.post<{ Body: Form }>('/sso/domains', owner, async (request, reply) =>
    outcome(request, reply, async (sp) => {
      const d = await addDomain(db, request.member.orgId, domainOf(request.body), actorOf(request), now());
      return notice(sp.t('console.sso.domainAdded', { domain: d.domain }), 'ok');
    }),
  );

  scope.post<{ Params: { domain: string } }>('/sso/domains/:domain/verify', owner, async (request, reply) =>
    outcome(request, reply, async (sp) => {
      const d = await verifyDomain(db, request.member.orgId, request.params.domain, 'dns', actorOf(request), now(), deps.resolveTxt);
      return notice(sp.t('console.sso.domainVerified', { domain: d.domain }), 'ok');
    }),
  );

  scope.post<{ Params: { domain: string } }>('/sso/domains/:domain/remove', owner, async (request, reply) =>
    outcome(request, reply, async (sp) => {
      await removeDomain(db, request.member.orgId, request.params.domain, actorOf(request), now());
      return notice(sp.t('console.sso.domainRemoved', { domain: request.params.domain }), 'ok');
    }),
  );
}
