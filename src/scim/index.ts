import type { FastifyInstance } from 'fastify';
import type { DatabaseExecutor } from '../domain/database.js';
import { ScimTokenResolver } from '../domain/scim.js';
import { scimErrors } from './errors.js';
import { registerBulkRoute } from './routes/bulk.js';
import { registerDiscoveryRoutes } from './routes/discovery.js';
import { registerGroupRoutes } from './routes/groups.js';
import { registerUserRoutes } from './routes/users.js';
import { scimTokenCheck } from './token.js';

/**
 * The SCIM 2.0 face (issue 56; RFC 7643 and 7644; CONTRACT.md section 12, amended): a service
 * provider per organization under /scim/v2, for its identity provider (Entra ID, Okta, Google...)
 * to provision the check-ins roster. A scope of the public listener over the shared base, with its
 * own token check and limit, its own error format, and routes that map SCIM to the roster's domain.
 */
export const SCIM_PREFIX = '/scim/v2';

export interface ScimOptions {
  db: DatabaseExecutor;
  now: () => Date;
  /** The service's base URL (PUBLIC_BASE_URL, else the listener's), for resources' `location`. */
  publicBaseUrl: string;
  /** Requests per SCIM token and minute (SCIM_REQUESTS_PER_MINUTE). */
  perMinute: number;
  bodyLimitBytes: number;
  /** Token lookups are cached this long (at most 5 s). */
  tokenCacheTtlMs?: number;
}

export const SCIM_MAX_RESULTS = 1000;
export const SCIM_BULK_MAX_OPERATIONS = 1000;

export async function registerScim(app: FastifyInstance, opts: ScimOptions): Promise<void> {
  const tokens = new ScimTokenResolver(opts.db, Math.min(opts.tokenCacheTtlMs ?? 5_000, 5_000));
  await app.register(
    async (scope) => {
      scope.addContentTypeParser('application/scim+json', { parseAs: 'string' }, scope.getDefaultJsonParser('error', 'error'));
      scimErrors(scope);
      scimTokenCheck(scope, { tokens, perMinute: opts.perMinute });
      const deps = {
        db: opts.db,
        now: opts.now,
        baseUrl: `${opts.publicBaseUrl.replace(/\/+$/, '')}${SCIM_PREFIX}`,
        bodyLimitBytes: opts.bodyLimitBytes,
        bulkMaxOperations: SCIM_BULK_MAX_OPERATIONS,
        maxResults: SCIM_MAX_RESULTS,
      };
      registerDiscoveryRoutes(scope, deps);
      registerUserRoutes(scope, deps);
      registerGroupRoutes(scope, deps);
      registerBulkRoute(scope, deps);
    },
    { prefix: SCIM_PREFIX },
  );
}
