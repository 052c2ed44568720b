import type { FastifyInstance } from 'fastify';
import type { DatabaseExecutor } from '../domain/database.js';
import { html, page } from './html.js';
import { CONSOLE_PREFIX, registerConsolePlugins, requireRole, type ConsoleDeps } from './plugins.js';
import { registerAuthPages } from './routes/auth.js';
import { registerMemberPages } from './routes/members.js';
import { registerKeyPages } from './routes/keys.js';
import { registerAuditPage } from './routes/audit.js';
import { registerWebhookPages } from './routes/webhooks.js';
import { navFor } from './routes/nav.js';

export { CONSOLE_PREFIX };

export interface ConsoleOptions {
  db: DatabaseExecutor;
  now: () => Date;
  /** PUBLIC_BASE_URL: invitation links use it, and cookies are `Secure` when it is https. */
  publicBaseUrl?: string;
}

/**
 * The organization console (CONTRACT.md section 11): a scope under /console on the public
 * listener, in the same processes as the API, calling the same domain operations.
 */
export async function registerConsole(app: FastifyInstance, opts: ConsoleOptions) {
  await app.register(
    async (scope) => {
      const deps: ConsoleDeps & ConsoleOptions = { ...opts, secureCookies: opts.publicBaseUrl?.startsWith('https://') ?? false };
      await registerConsolePlugins(scope, deps);
      registerAuthPages(scope, deps);
      registerMemberPages(scope, deps);
      registerKeyPages(scope, deps);
      registerWebhookPages(scope, deps);
      registerAuditPage(scope, deps);
      scope.get('/overview', { preHandler: requireRole(), schema: { hide: true } }, async (request, reply) => {
        const s = request.consoleSession!;
        return reply.type('text/html; charset=utf-8').send(
          page({
            title: 'Overview',
            nav: navFor(s, '/console/overview'),
            body: html`<h1>Overview</h1>
<p>Welcome, ${s.member.email}. You are ${s.member.role === 'viewer' ? 'a viewer' : `an ${s.member.role}`} of ${s.orgName}.</p>
<ul>
<li><a href="/console/keys">API keys</a>: create a key for the REST API, roll or revoke one.</li>
${s.member.role === 'owner' ? html`<li><a href="/console/members">Members</a>: invite people, change roles, require two-factor.</li>` : ''}
<li><a href="/console/audit">Audit log</a>: every change to the organization, by whom and from where.</li>
</ul>`,
          }),
        );
      });
    },
    { prefix: CONSOLE_PREFIX },
  );
}
