import { registerAlertRoutes } from './alerts.js';
import { registerAuditRoutes } from './audit.js';
import { registerBackupRoutes } from './backup.js';
import { registerKeyRoutes } from './keys.js';
import { registerMemberRoutes } from './members.js';
import { registerOrgRoutes } from './orgs.js';
import { registerPulseRoutes } from './pulses.js';
import type { AdminRouteDeps, App } from './types.js';
import { registerWebhookRoutes } from './webhooks.js';

export const ADMIN_PREFIX = '/admin/v1';

/** Every operation of the operator API, under /admin/v1. */
export async function registerAdminRoutes(app: App, deps: AdminRouteDeps) {
  await app.register(
    async (scope: App) => {
      registerOrgRoutes(scope, deps);
      registerKeyRoutes(scope, deps);
      registerPulseRoutes(scope, deps);
      registerAlertRoutes(scope, deps);
      registerWebhookRoutes(scope, deps);
      registerMemberRoutes(scope, deps);
      registerAuditRoutes(scope, deps);
      registerBackupRoutes(scope, deps);
    },
    { prefix: ADMIN_PREFIX },
  );
}
