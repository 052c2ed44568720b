import type { FastifyInstance } from 'fastify';
import { registerConsoleHeaders } from './headers.js';
import { registerFormParser } from './forms.js';
import { registerSession, type ConsoleDeps } from './session.js';
import { registerCsrfCheck } from './csrf.js';
import { registerConsoleErrors } from './errors.js';
import { registerAssets } from './assets.js';
import { registerTotpSealing } from './totp-sealing.js';

/**
 * The console's own plugins, one concern per file, registered as one list on its scope (the base
 * of src/http/ is already under it): headers and CSP, the form parser, the session, the check
 * against cross-site requests, the error pages, the assets, and at start-up the sealing of
 * two-factor secrets still in clear. The member pages add the guard (guard.ts) in their own scope.
 */
export function registerConsolePlugins(scope: FastifyInstance, deps: ConsoleDeps) {
  registerConsoleHeaders(scope, deps);
  registerFormParser(scope);
  registerSession(scope, deps);
  registerCsrfCheck(scope);
  registerConsoleErrors(scope);
  registerAssets(scope);
  registerTotpSealing(scope, deps);
}

export { CONSOLE_CSP } from './headers.js';
export { FORM_COOKIE, formToken } from './csrf.js';
export { queryText, asApiRequest, type Form } from './forms.js';
export { refusalPage } from './errors.js';
export { CHANGERS, EVERY_MEMBER, ORGANIZATION_READERS, OWNERS, refusedRole, registerMemberGuard } from './guard.js';
export {
  actorOf,
  changeOutcome,
  clearSessionCookie,
  CONSOLE_PREFIX,
  cookie,
  pageOf,
  readCookie,
  Redirect,
  SESSION_COOKIE,
  setSessionCookie,
  type ConsoleDeps,
} from './session.js';
