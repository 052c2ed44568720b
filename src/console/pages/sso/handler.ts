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
import { notice, type Safe } from '../../html.js';
import { actorOf, changeOutcome, OWNERS, readCookie, setSessionCookie, type ConsoleDeps, type Form } from '../../plugins/index.js';
import { sendPage } from '../../views/layout.js';
import { domainOf, oidcSettingsOf, requiredOf } from './form.js';
import { onwardPage, refusedView, SSO_WORDS, ssoView } from './view.js';

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

/** Where the sign-in page sends an address of an organization's verified domain (OpenID Connect). */
export const ssoStartFor = (orgId: string, email: string) => `${oidcPaths(orgId).start}?login_hint=${encodeURIComponent(email)}`;

/** Signing in through the IdP: leaving for it, and coming back. No member yet. */
export function registerSsoSignInPages(scope: FastifyInstance, deps: SsoPageDeps) {
  const { db, now } = deps;
  const refused = (reply: FastifyReply, status: number, message: string) => sendPage(reply, status, refusedView(message));

  scope.get<{ Params: { orgId: string }; Querystring: { login_hint?: string } }>('/sso/:orgId/oidc/start', hidden, async (request, reply) => {
    if (!ORG_ID.test(request.params.orgId)) return refused(reply, 404, SSO_WORDS.notSetUp);
    try {
      const hint = typeof request.query.login_hint === 'string' ? request.query.login_hint.slice(0, 254) : undefined;
      const started = await startOidcSignIn(db, request.params.orgId, { baseUrl: deps.baseUrl, loginHint: hint, rules: rulesOf(deps), now: now() });
      reply.header('set-cookie', ssoCookie(started.browserCookie, 600, deps.secureCookies));
      return reply
        .code(200)
        .type('text/html; charset=utf-8')
        .send(onwardPage({ title: SSO_WORDS.redirecting, heading: SSO_WORDS.redirecting, to: started.authorizationUrl, link: SSO_WORDS.continueIdp }));
    } catch (err) {
      if (!(err instanceof SsoRefused)) throw err;
      request.log.warn({ sso: { reason: err.reason, detail: err.detail } }, 'sso sign-in not started');
      return refused(reply, err.reason === 'not_set_up' ? 404 : 502, err.message);
    }
  });

  scope.get<{ Params: { orgId: string } }>('/sso/:orgId/oidc/callback', hidden, async (request, reply) => {
    if (!ORG_ID.test(request.params.orgId)) return refused(reply, 404, SSO_WORDS.notSetUp);
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
        .send(onwardPage({ title: SSO_WORDS.signedIn, heading: SSO_WORDS.signedIn, to: '/console/overview', link: SSO_WORDS.continueConsole }));
    } catch (err) {
      if (!(err instanceof SsoRefused)) throw err;
      request.log.warn({ sso: { orgId: request.params.orgId, reason: err.reason, detail: err.detail } }, 'sso sign-in refused');
      return refused(reply, 400, err.message);
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
      scope.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string', bodyLimit: 32_768 }, (_request, body, done) => {
        done(null, Object.fromEntries(new URLSearchParams(body as string)));
      });
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
        message,
      }),
    );
  };
  const outcome = changeOutcome(ssoPage);

  scope.get('/sso', owner, async (request, reply) => ssoPage(request, reply, 200));

  scope.post<{ Body: Form }>('/sso/oidc', owner, async (request, reply) =>
    outcome(request, reply, async () => {
      await saveOidcSettings(db, request.member.orgId, oidcSettingsOf(request.body), actorOf(request), now(), rulesOf(deps));
      return notice(SSO_WORDS.saved, 'ok');
    }),
  );

  scope.post('/sso/remove', owner, async (request, reply) =>
    outcome(request, reply, async () => {
      await removeSsoSettings(db, request.member.orgId, actorOf(request), now());
      return notice(SSO_WORDS.removed, 'ok');
    }),
  );

  scope.post<{ Body: Form }>('/sso/required', owner, async (request, reply) =>
    outcome(request, reply, async () => {
      const s = await setSsoRequired(db, request.member.orgId, requiredOf(request.body), actorOf(request), now());
      return notice(s.required ? SSO_WORDS.requiredOn : SSO_WORDS.requiredOff, 'ok');
    }),
  );

  scope.post<{ Body: Form }>('/sso/domains', owner, async (request, reply) =>
    outcome(request, reply, async () => {
      const d = await addDomain(db, request.member.orgId, domainOf(request.body), actorOf(request), now());
      return notice(SSO_WORDS.domainAdded(d.domain), 'ok');
    }),
  );

  scope.post<{ Params: { domain: string } }>('/sso/domains/:domain/verify', owner, async (request, reply) =>
    outcome(request, reply, async () => {
      const d = await verifyDomain(db, request.member.orgId, request.params.domain, 'dns', actorOf(request), now(), deps.resolveTxt);
      return notice(SSO_WORDS.domainVerified(d.domain), 'ok');
    }),
  );

  scope.post<{ Params: { domain: string } }>('/sso/domains/:domain/remove', owner, async (request, reply) =>
    outcome(request, reply, async () => {
      await removeDomain(db, request.member.orgId, request.params.domain, actorOf(request), now());
      return notice(SSO_WORDS.domainRemoved(request.params.domain), 'ok');
    }),
  );
}
