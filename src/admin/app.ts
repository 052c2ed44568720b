import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance, type FastifyServerOptions } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { Config } from '../config.js';
import type { DatabaseExecutor } from '../domain/database.js';
import { contractServerOptions, lazySerializers, readySerializers, queryRules, registerBase } from '../http/plugins/index.js';
import { openApiDocument } from '../http/openapi.js';
import { operatorToken } from './plugins/operator-token.js';
import { registerAdminRoutes, ADMIN_PREFIX } from './routes/index.js';

export { ADMIN_PREFIX };

export interface AdminDeps {
  db: DatabaseExecutor;
  /**
   * The operator token every request must carry (the TCP listener on ADMIN_PORT). Undefined for
   * the Unix socket in DATA_DIR, whose file mode (0600) is the access control, and for the CLI's
   * in-process use.
   */
  token?: string;
  logger?: FastifyServerOptions['logger'];
  /** The server's logger (its redaction included), for the listeners server.ts starts. */
  loggerInstance?: FastifyBaseLogger;
  now?: () => Date;
  /**
   * Compile each route's validator and serializer on its first use (the CLI's in-process app, which
   * answers a request or two and exits), not at ready (a listening server).
   */
  compileOnFirstUse?: boolean;
}

/**
 * The operator API (CONTRACT.md section 10): a second Fastify app, never on the public port,
 * with the public app's error handling, strict validation and schemas, and its own OpenAPI
 * document at GET /admin/v1/openapi.json. It never listens; server.ts does.
 */
export async function buildAdminApp(config: Config, deps: AdminDeps): Promise<FastifyInstance> {
  const app = Fastify({
    ...(deps.loggerInstance ? { loggerInstance: deps.loggerInstance } : { logger: deps.logger ?? false }),
    logController: new LogController({ disableRequestLogging: true }),
    bodyLimit: config.bodyLimitBytes,
    // An import may stream a large file for minutes: no whole-request timeout here. The listeners
    // bound the headers and a stalled body instead (listen.ts); an idle connection goes after 5 s.
    requestTimeout: 0,
    keepAliveTimeout: 5_000,
    ...contractServerOptions,
    schemaController: deps.compileOnFirstUse ? lazySerializers : readySerializers,
  }).withTypeProvider<TypeBoxTypeProvider>();

  await registerBase(app, { logFields: () => ({ admin: true }), compileOnFirstUse: deps.compileOnFirstUse });
  // The Unix socket and the CLI's in-process app have no token: the socket's file mode is the access control.
  if (deps.token !== undefined) await app.register(operatorToken, { token: deps.token });
  await app.register(openApiDocument, {
    prefix: ADMIN_PREFIX,
    servedAt: [`${ADMIN_PREFIX}/openapi.json`],
    document: {
      info: {
        title: 'Climate Pulse operator API',
        version: '1.0.0',
        description:
          'What the product around the REST API needs to run it: organizations, plans, keys, live ingestion of pulses, moderation, the read marker of alerts, webhook endpoints, the audit log and backups of the embedded database. Never served on the public port.',
      },
      servers: [{ url: '/', description: 'ADMIN_HOST:ADMIN_PORT, or the Unix socket in DATA_DIR (embedded mode).' }],
      components: {
        securitySchemes: { adminToken: { type: 'http', scheme: 'bearer', description: '`Authorization: Bearer <ADMIN_TOKEN>` (at least 32 characters).' } },
      },
      security: [{ adminToken: [] }],
      tags: [
        { name: 'organizations', description: 'Create, list, read, change, delete (soft) and erase organizations.' },
        { name: 'plans', description: 'Plans: whether they include the REST API, and their rate limit per key.' },
        { name: 'keys', description: "An organization's API keys: create (the secret shown once), list, revoke." },
        { name: 'pulses', description: 'Live ingestion of pulses, moderation, and file imports (NDJSON or CSV).' },
        { name: 'alerts', description: "An alert's read marker, and a run of the alert engine over ISO weeks." },
        { name: 'webhooks', description: 'Webhook endpoints of an organization and their deliveries.' },
        { name: 'members', description: "The console's members: list, invite, remove." },
        { name: 'audit', description: "The organization's audit log: every change, by whom." },
        { name: 'database', description: 'A consistent backup of the embedded database while the server runs.' },
        { name: 'check-ins', description: "Weekly check-ins: the roster, the round's settings, the week's links without SMTP, participation counts." },
        { name: 'sso', description: "Single sign-on: the organization's IdP, its groups mapping, enforced SSO and the sign-in domains." },
        {
          name: 'scim',
          description: "SCIM provisioning (/scim/v2): the organization's SCIM tokens (the secret shown once), and how its users find their team.",
        },
      ],
    },
  });

  // As on the public API: a repeated query parameter, and an integer one such as limit=Infinity, are 400 before Ajv sees them.
  await app.register(queryRules);
  await registerAdminRoutes(app, { db: deps.db, now: deps.now ?? (() => new Date()), config });

  await app.ready();
  return app;
}
