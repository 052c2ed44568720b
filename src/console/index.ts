import type { FastifyInstance } from 'fastify';
import type { DatabaseExecutor } from '../domain/database.js';
import type { CommentReleases } from '../domain/comments.js';
import { CONSOLE_PREFIX, registerConsolePlugins, type ConsoleDeps } from './plugins.js';
import { smtpMailer, type Mailer } from '../mail/index.js';
import { registerAuthPages } from './routes/auth.js';
import { registerMemberPages } from './routes/members.js';
import { registerKeyPages } from './routes/keys.js';
import { registerAuditPage } from './routes/audit.js';
import { registerOverviewPage } from './routes/overview.js';
import { registerAlertPages } from './routes/alerts.js';
import { registerActionPages } from './routes/actions.js';
import { registerCommentPages } from './routes/comments.js';
import { registerWebhookPages } from './routes/webhooks.js';
import { registerPeoplePages } from './routes/people.js';

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
}

/**
 * The organization console (CONTRACT.md section 11): a scope under /console on the public
 * listener, in the same processes as the API, calling the same domain operations.
 */
export async function registerConsole(app: FastifyInstance, opts: ConsoleOptions) {
  await app.register(
    async (scope) => {
      if (opts.mail && !opts.mail.from) throw new Error('MAIL_FROM is required with SMTP_URL: the sender of the console\'s invitations.');
      const deps: ConsoleDeps & ConsoleOptions = {
        ...opts,
        secureCookies: opts.publicBaseUrl?.startsWith('https://') ?? false,
        baseUrl: (opts.publicBaseUrl ?? opts.listenerBaseUrl ?? 'http://127.0.0.1:3000').replace(/\/+$/, ''),
        mailer: opts.mailer ?? (opts.mail ? smtpMailer(opts.mail.smtpUrl, opts.mail.from!) : undefined),
      };
      await registerConsolePlugins(scope, deps);
      registerAuthPages(scope, deps);
      registerMemberPages(scope, deps);
      registerKeyPages(scope, deps);
      registerWebhookPages(scope, deps);
      registerAuditPage(scope, deps);
      registerOverviewPage(scope, deps);
      registerAlertPages(scope, deps);
      registerActionPages(scope, deps);
      registerCommentPages(scope, deps);
      registerPeoplePages(scope, deps);
    },
    { prefix: CONSOLE_PREFIX },
  );
}
