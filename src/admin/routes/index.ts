import { registerAlertRoutes } from './alerts.js';
import { registerAuditRoutes } from './audit.js';
import { registerBackupRoutes } from './backup.js';
import { registerCheckinRoutes } from './checkins.js';
import { registerKeyRoutes } from './keys.js';
import { registerMemberRoutes } from './members.js';
import { registerOrgRoutes } from './orgs.js';
import { registerPasskeyRoutes } from './passkeys.js';
import { registerPulseRoutes } from './pulses.js';
import { ApiError } from '../../contract/errors.js';
import type { AdminRouteDeps, App } from './types.js';
import { registerWebhookRoutes } from './webhooks.js';
import { registerSsoRoutes } from './sso.js';
import { registerScimRoutes } from './scim.js';

export const ADMIN_PREFIX = '/admin/v1';

/** The one operation without a JSON body schema that takes a body: the file of an import. */
const STREAMED_BODY = /\/pulses\/import$/;

/**
 * An operation without a body schema refuses a body (any JSON was accepted, and ignored): a client
 * that sends one expects it to matter. Sent with a length or chunked, parsed or not.
 */
async function refuseUnexpectedBody(request: import('fastify').FastifyRequest) {
  if (request.routeOptions.schema?.body || STREAMED_BODY.test(request.routeOptions.url ?? '')) return;
  const length = Number(request.headers['content-length'] ?? 0);
  if (request.body != null || length > 0 || request.headers['transfer-encoding'] !== undefined) {
    throw new ApiError('invalid_request', 'This operation takes no body; send none.');
  }
}

/** Every operation of the operator API, under /admin/v1. */
export async function registerAdminRoutes(app: App, deps: AdminRouteDeps) {
  await app.register(
    async (scope: App) => {
      scope.addHook('preValidation', refuseUnexpectedBody);
      registerOrgRoutes(scope, deps);
      registerKeyRoutes(scope, deps);
      registerPulseRoutes(scope, deps);
      registerAlertRoutes(scope, deps);
      registerWebhookRoutes(scope, deps);
      registerMemberRoutes(scope, deps);
      registerAuditRoutes(scope, deps);
      registerBackupRoutes(scope, deps);
      registerCheckinRoutes(scope, deps);
      registerSsoRoutes(scope, deps);
      registerScimRoutes(scope, deps);
      registerPasskeyRoutes(scope, deps);
    },
    { prefix: ADMIN_PREFIX },
  );
}
