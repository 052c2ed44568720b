import type { FastifyInstance } from 'fastify';
import type { DatabaseExecutor } from '../domain/database.js';
import type { CommentReleases } from '../domain/comments.js';
import { CONSOLE_PREFIX, registerConsolePlugins, registerMemberGuard, type ConsoleDeps } from './plugins/index.js';
import { smtpMailer, type Mailer } from '../mail/index.js';
import { registerAuthPages, registerRecoveryCodesPage } from './pages/sign-in/handler.js';
import { registerMemberPages } from './pages/members/handler.js';
import { registerKeyPages } from './pages/keys/handler.js';
import { registerAuditPage } from './pages/audit/handler.js';
import { registerOverviewPage } from './pages/overview/handler.js';
import { registerAlertPages } from './pages/alerts/handler.js';
import { registerActionPages } from './pages/actions/handler.js';
import { registerCommentPages } from './pages/comments/handler.js';
import { registerWebhookPages } from './pages/webhooks/handler.js';
import { registerPeoplePages } from './pages/people/handler.js';
import { registerProvisioningPages } from './pages/scim/handler.js';
import { registerCheckinPages } from './pages/checkins/handler.js';
import { registerSessionPages } from './pages/sessions/handler.js';
import { registerPasskeyAuthPages, registerPasskeyMemberPages } from './pages/passkeys/handler.js';
import { registerSsoBackchannel, registerSsoPages, registerSsoSignInPages } from './pages/sso/handler.js';
import type { TxtResolver } from '../domain/sso/settings.js';

export { CONSOLE_PREFIX };

export interface ConsoleOptions {
  db: DatabaseExecutor;
  now: () => Date;
  /** The public API's comment releases (one per app: it holds the keys derived from the server secret). */
  comments: CommentReleases;
  /** PUBLIC_BASE_URL: links use it, cookies are `Secure` and answers carry HSTS when it is https. */
  publicBaseUrl?: string;
  /** Where links point without PUBLIC_BASE_URL: the public listener's own address (never a request's Host header). */
  listenerBaseUrl?: string;
  /** SMTP_URL and MAIL_FROM: invitations made in the console go by email. */
  mail?: { smtpUrl: string; from?: string };
  /** A mailer of the test's own (tests only); else made from `mail`. */
  mailer?: Mailer;
  /** A DNS TXT lookup of the test's own (tests only; SSO domain verification); else node:dns. */
  resolveTxt?: TxtResolver;
}

/**
 * The organization console (CONTRACT.md section 11): a scope under /console on the public
 * listener, in the same processes as the API, calling the same domain operations.
 */
export async function registerConsole(app: FastifyInstance, opts: ConsoleOptions) {
  await app.register(
    async (scope) => {
      if (opts.mail && !opts.mail.from) throw new Error("MAIL_FROM is required with SMTP_URL: the sender of the console's invitations.");
      const deps: ConsoleDeps & ConsoleOptions = {
        ...opts,
        secureCookies: opts.publicBaseUrl?.startsWith('https://') ?? false,
        baseUrl: (opts.publicBaseUrl ?? opts.listenerBaseUrl ?? 'http://127.0.0.1:3000').replace(/\/+$/, ''),
        mailer: opts.mailer ?? (opts.mail ? smtpMailer(opts.mail.smtpUrl, opts.mail.from!) : undefined),
      };
      if (!opts.mailer && deps.mailer) {
        const own = deps.mailer;
        scope.addHook('onClose', async () => own.close());
      }
      registerConsolePlugins(scope, deps);
      // Signing in, two-factor and invitations: no member yet.
      registerAuthPages(scope, deps);
      registerPasskeyAuthPages(scope, deps);
      registerSsoSignInPages(scope, deps);
      // Every member page in one child scope, behind one guard that reads each route's roles.
      await scope.register(async (members) => {
        registerMemberGuard(members, deps);
        registerRecoveryCodesPage(members);
        registerMemberPages(members, deps);
        registerKeyPages(members, deps);
        registerWebhookPages(members, deps);
        registerAuditPage(members, deps);
        registerOverviewPage(members, deps);
        registerAlertPages(members, deps);
        registerActionPages(members, deps);
        registerCommentPages(members, deps);
        registerPeoplePages(members, deps);
        registerCheckinPages(members, deps);
        registerSessionPages(members, deps);
        registerPasskeyMemberPages(members, deps);
        registerSsoPages(members, deps);
        registerProvisioningPages(members, deps);
      });
    },
    { prefix: CONSOLE_PREFIX },
  );
  // The IdP's back-channel logout: a server's POST with a signed token, outside the pages' session and form checks.
  await registerSsoBackchannel(app, {
    ...opts,
    secureCookies: false,
    baseUrl: (opts.publicBaseUrl ?? opts.listenerBaseUrl ?? 'http://127.0.0.1:3000').replace(/\/+$/, ''),
  });
}
