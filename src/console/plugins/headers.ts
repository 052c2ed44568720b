import type { FastifyInstance } from 'fastify';
import { PAGE_CSP, setPageHeaders } from '../../http/html.js';
import type { ConsoleDeps } from './session.js';

/** The console's policy is the one of every page of the service (the base's). */
export const CONSOLE_CSP = PAGE_CSP;

/** Headers of every console answer (section 11), on top of the base's nosniff and no-store. */
export function registerConsoleHeaders(scope: FastifyInstance, deps: Pick<ConsoleDeps, 'secureCookies'>) {
  // Pages are no-store and hold the session's own token: no cache can revalidate them (no ETag).
  scope.addHook('onRoute', (route) => {
    route.config = { ...route.config, validators: false };
    // No console page is in an OpenAPI document.
    route.schema = { ...route.schema, hide: true };
  });
  scope.addHook('onRequest', async (_request, reply) => {
    setPageHeaders(reply, { https: deps.secureCookies });
  });
}
