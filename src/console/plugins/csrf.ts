import { randomBytes, timingSafeEqual } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { cookie, readCookie, type ConsoleDeps } from './session.js';
import { readerOf, refusalPage } from './errors.js';
import type { Form } from './forms.js';

/** Before a session exists (sign-in, invitation), forms are bound to this cookie instead. */
export const FORM_COOKIE = 'cp_form';

/** The token a form carries: the session's, or before sign-in the form cookie's (made here when missing). */
export function formToken(request: FastifyRequest, reply: FastifyReply, deps: Pick<ConsoleDeps, 'secureCookies'>): string {
  if (request.consoleSession) return request.consoleSession.csrfToken;
  let token = readCookie(request, FORM_COOKIE);
  if (!token || !/^[A-Za-z0-9_-]{32,64}$/.test(token)) {
    token = randomBytes(24).toString('base64url');
    reply.header('set-cookie', cookie(FORM_COOKIE, token, { secure: deps.secureCookies, maxAgeSeconds: 3600 }));
  }
  return token;
}

const same = (a: string | undefined, b: string | undefined) => {
  if (!a || !b) return false;
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
};

/** Whether an Origin header names this host (a default port may be written or not). */
function sameHost(origin: string, host: string | undefined): boolean {
  if (!host || origin === 'null') return false;
  let named: string;
  try {
    named = new URL(origin).host;
  } catch {
    return false;
  }
  return named === host || named === host.replace(/:(80|443)$/, '');
}

/**
 * Requests that change something: never from another site, and always with the token of the
 * session (or, before sign-in, of the form cookie). SameSite=Strict keeps the cookie off
 * cross-site requests already; this refuses them outright (403), whatever the browser.
 */
export function registerCsrfCheck(scope: FastifyInstance) {
  scope.addHook('preHandler', async (request, reply) => {
    if (request.method === 'GET' || request.method === 'HEAD') return;
    const site = request.headers['sec-fetch-site'];
    const origin = request.headers.origin;
    const host = request.headers.host;
    // Fetch metadata when the browser sends it (every current one does); else the Origin header.
    // Origin alone is not enough: under Referrer-Policy no-referrer a same-origin form posts `Origin: null`.
    const crossSite =
      typeof site === 'string' && site !== '' ? site !== 'same-origin' && site !== 'none' : typeof origin === 'string' && !sameHost(origin, host);
    const form = (request.body ?? {}) as Form;
    const expected = request.consoleSession?.csrfToken ?? readCookie(request, FORM_COOKIE);
    if (crossSite || typeof form !== 'object' || !same(form._csrf, expected)) {
      const { t } = readerOf(request);
      return refusalPage(reply, 403, t('console.errors.refusedTitle'), t('console.errors.csrf'));
    }
  });
}
