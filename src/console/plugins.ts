import { randomBytes, timingSafeEqual } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ApiError } from '../contract/errors.js';
import type { Queryable } from '../domain/database.js';
import { memberActor, type MemberRole } from '../domain/members.js';
import { resolveSession, saveFlash, SESSION_MAX_MS, takeFlash, type ConsoleSession } from '../domain/sessions.js';
import type { Actor } from '../domain/audit.js';
import { CHARTS_JS, CONSOLE_CSS, CONSOLE_JS, UPLOT_CSS, UPLOT_JS } from './assets.js';
import { html, notice, page, type Safe } from './html.js';

/**
 * The console's own plugins, in one file (docs/architecture.md): its headers and CSP, the form
 * body parser, the session, the guard against cross-site requests, and the role guard. The
 * console is a scope under /console on the public listener, built on the same base as the APIs.
 */

export const CONSOLE_PREFIX = '/console';
const MAIN_OPEN = '<main id="main" tabindex="-1">';
export const CONSOLE_CSP = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; frame-ancestors 'none'; form-action 'self'; base-uri 'none'";
export const SESSION_COOKIE = 'cp_session';
/** Before a session exists (sign-in, invitation), forms are bound to this cookie instead. */
export const FORM_COOKIE = 'cp_form';

declare module 'fastify' {
  interface FastifyRequest {
    consoleSession: ConsoleSession | null;
    /** Keeps a change's message for the page the redirect leads to (post, redirect, get). */
    keepForNextPage: ((text: string) => Promise<void>) | null;
  }
}

function withFlash(page: string, text: string): string {
  const main = page.indexOf(MAIN_OPEN);
  if (main < 0) return page;
  const h1 = page.indexOf('</h1>', main);
  const at = h1 >= 0 ? h1 + '</h1>'.length : main + MAIN_OPEN.length;
  return page.slice(0, at) + '\n' + text + page.slice(at);
}

/** Where a change's redirect leads: its section's page (/console/keys/x/roll -> /console/keys). */
export const pageOf = (url: string) => `${CONSOLE_PREFIX}/${url.slice(CONSOLE_PREFIX.length + 1).split(/[/?#]/)[0]}`;

export type Form = Record<string, string>;

/** A query parameter of a console page: one value or none ('' is none); given twice is refused. */
export function queryText(request: FastifyRequest, name: string): string | undefined {
  const v = (request.query as Record<string, string | string[] | undefined>)[name];
  if (Array.isArray(v)) throw new ApiError('invalid_request', `The parameter '${name}' is given more than once.`);
  return v === '' ? undefined : v;
}

/** The signed-in member, as the actor of the change this request makes (the audit log's who and where). */
export const actorOf = (request: FastifyRequest): Actor => memberActor(request.consoleSession!.member, request.ip);

export interface ConsoleDeps {
  db: Queryable;
  now: () => Date;
  /** Cookies carry `Secure`, and answers Strict-Transport-Security, when the service's public address is https. */
  secureCookies: boolean;
  /** The service's address for links and redirects shown to people: PUBLIC_BASE_URL, else the listener's own; never the Host header. */
  baseUrl: string;
}

export function readCookie(request: FastifyRequest, name: string): string | undefined {
  const header = request.headers.cookie;
  if (typeof header !== 'string') return undefined;
  for (const part of header.split(';')) {
    const i = part.indexOf('=');
    if (i > 0 && part.slice(0, i).trim() === name) return part.slice(i + 1).trim();
  }
  return undefined;
}

export function cookie(name: string, value: string, opts: { secure: boolean; maxAgeSeconds: number }): string {
  return `${name}=${value}; Path=${CONSOLE_PREFIX}; HttpOnly; SameSite=Strict; Max-Age=${opts.maxAgeSeconds}${opts.secure ? '; Secure' : ''}`;
}

export function setSessionCookie(reply: FastifyReply, value: string, deps: ConsoleDeps) {
  reply.header('set-cookie', cookie(SESSION_COOKIE, value, { secure: deps.secureCookies, maxAgeSeconds: SESSION_MAX_MS / 1000 }));
}

export function clearSessionCookie(reply: FastifyReply, deps: ConsoleDeps) {
  reply.header('set-cookie', cookie(SESSION_COOKIE, '', { secure: deps.secureCookies, maxAgeSeconds: 0 }));
}

/** The token a form carries: the session's, or before sign-in the form cookie's (made here when missing). */
export function formToken(request: FastifyRequest, reply: FastifyReply, deps: ConsoleDeps): string {
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

/** A page that explains a refusal, with the status it deserves. */
export function refusalPage(reply: FastifyReply, status: number, title: string, message: string) {
  return reply
    .code(status)
    .type('text/html; charset=utf-8')
    .send(page({ title, body: html`<h1>${title}</h1>${notice(message)}<p><a href="/console">Back to the console</a></p>` }));
}

export async function registerConsolePlugins(scope: FastifyInstance, deps: ConsoleDeps) {
  scope.decorateRequest('consoleSession', null);
  // Pages are no-store and hold the session's own token: no cache can revalidate them (no ETag).
  scope.addHook('onRoute', (route) => {
    route.config = { ...route.config, validators: false };
  });

  // Headers of every console answer (section 11), on top of the base's nosniff and no-store.
  scope.addHook('onRequest', async (_request, reply) => {
    reply.header('content-security-policy', CONSOLE_CSP);
    reply.header('referrer-policy', 'no-referrer');
    reply.header('x-frame-options', 'DENY');
    reply.header('cross-origin-opener-policy', 'same-origin');
    reply.header('cross-origin-resource-policy', 'same-origin');
    if (deps.secureCookies) reply.header('strict-transport-security', 'max-age=31536000; includeSubDomains');
  });

  // HTML forms: application/x-www-form-urlencoded, one value per name.
  scope.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string', bodyLimit: 64 * 1024 }, (_request, body, done) => {
    const form: Form = {};
    for (const [k, v] of new URLSearchParams(body as string)) {
      if (Object.hasOwn(form, k)) return done(new ApiError('invalid_request', `The form field '${k}' is given more than once.`));
      form[k] = v;
    }
    done(null, form);
  });

  scope.decorateRequest('keepForNextPage', null);
  scope.addHook('onRequest', async (request) => {
    const cookieValue = readCookie(request, SESSION_COOKIE);
    const session = await resolveSession(deps.db, cookieValue, deps.now());
    request.consoleSession = session;
    if (session && cookieValue) request.keepForNextPage = (text) => saveFlash(deps.db, session, cookieValue, text);
  });

  // The page a change's redirect leads to shows the change's message once, after its heading. It
  // is put into the page as the route sends it (the base's compression comes after), and taken
  // from the session only by a page that is sent (200, HTML).
  scope.addHook('preHandler', async (request, reply) => {
    const s = request.consoleSession;
    const cookieValue = readCookie(request, SESSION_COOKIE);
    if (request.method !== 'GET' || !s?.hasFlash || !cookieValue) return;
    const send = reply.send.bind(reply);
    reply.send = ((payload?: unknown) => {
      if (typeof payload !== 'string' || reply.statusCode !== 200 || !String(reply.getHeader('content-type') ?? '').startsWith('text/html')) return send(payload);
      takeFlash(deps.db, s, cookieValue).then(
        (text) => send(text ? withFlash(payload, text) : payload),
        () => send(payload),
      );
      return reply;
    }) as typeof reply.send;
  });

  // Requests that change something: never from another site, and always with the token of the
  // session (or, before sign-in, of the form cookie). SameSite=Strict keeps the cookie off
  // cross-site requests already; this refuses them outright (403), whatever the browser.
  scope.addHook('preHandler', async (request, reply) => {
    if (request.method === 'GET' || request.method === 'HEAD') return;
    const site = request.headers['sec-fetch-site'];
    const origin = request.headers.origin;
    const host = request.headers.host;
    // Fetch metadata when the browser sends it (every current one does); else the Origin header.
    // Origin alone is not enough: under Referrer-Policy no-referrer a same-origin form posts `Origin: null`.
    const crossSite = typeof site === 'string' && site !== '' ? site !== 'same-origin' && site !== 'none' : typeof origin === 'string' && !sameHost(origin, host);
    const form = (request.body ?? {}) as Form;
    const expected = request.consoleSession?.csrfToken ?? readCookie(request, FORM_COOKIE);
    if (crossSite || typeof form !== 'object' || !same(form._csrf, expected)) {
      return refusalPage(reply, 403, 'Request refused', 'This request did not come from a console page of this site (or the page was too old). Reload the page and try again.');
    }
  });

  scope.setErrorHandler(async (err: Error & { statusCode?: number }, request, reply) => {
    const status = err instanceof ApiError ? err.statusCode : err.statusCode && err.statusCode < 500 ? err.statusCode : 500;
    if (status >= 500) request.log.error({ err }, 'console request failed');
    return refusalPage(reply, status, status >= 500 ? 'Something went wrong' : 'Request refused', status >= 500 ? 'The request failed on our side; try again in a moment.' : err.message);
  });
  scope.setNotFoundHandler(async (_request, reply) => refusalPage(reply, 404, 'Page not found', 'There is no console page at this address.'));

  const assets: Record<string, { type: string; body: string }> = {
    'console.css': { type: 'text/css; charset=utf-8', body: CONSOLE_CSS },
    'console.js': { type: 'text/javascript; charset=utf-8', body: CONSOLE_JS },
    'charts.js': { type: 'text/javascript; charset=utf-8', body: CHARTS_JS },
    'uplot.js': { type: 'text/javascript; charset=utf-8', body: UPLOT_JS },
    'uplot.css': { type: 'text/css; charset=utf-8', body: UPLOT_CSS },
  };
  for (const [name, { type, body }] of Object.entries(assets)) {
    scope.get(`/assets/${name}`, { schema: { hide: true } }, async (_request, reply) => reply.type(type).header('cache-control', 'no-store').send(body));
  }
}

/**
 * The role guard, checked on the server for every page and change: no session -> the sign-in page;
 * a session halfway through two-factor -> its next step; a role without the right -> 403.
 */
export function requireRole(...roles: MemberRole[]) {
  return async (request: FastifyRequest, reply: FastifyReply) => {
    const s = request.consoleSession;
    if (!s) {
      if (request.method === 'GET') return reply.redirect('/console/sign-in', 303);
      return refusalPage(reply, 401, 'Signed out', 'Your session ended; sign in again.');
    }
    if (s.stage === 'totp') return reply.redirect('/console/two-factor', 303);
    if (s.stage === 'enroll') return reply.redirect('/console/two-factor/enroll', 303);
    if (roles.length > 0 && !roles.includes(s.member.role)) {
      return refusalPage(reply, 403, 'Not allowed', `Your role (${s.member.role}) cannot do this; ask an owner.`);
    }
  };
}

type PageRenderer = (request: FastifyRequest, reply: FastifyReply, status: number, message?: Safe) => Promise<unknown>;

/**
 * The answer to a console change (post, redirect, get): done, a 303 to its section's page, which
 * shows what happened (a new secret included) once, so a reload repeats nothing; refused, its page
 * again with the domain's refusal (the API's own message) and the refusal's status, having changed
 * nothing. Anything else is the error handler's 500.
 */
export function changeOutcome(render: PageRenderer, next?: (request: FastifyRequest) => string) {
  return async (request: FastifyRequest, reply: FastifyReply, work: () => Promise<Safe>) => {
    try {
      const said = await work();
      if (request.keepForNextPage) {
        await request.keepForNextPage(said.text);
        return reply.redirect(next ? next(request) : pageOf(request.url), 303);
      }
      return await render(request, reply, 200, said);
    } catch (err) {
      if (err instanceof ApiError && err.statusCode < 500) return render(request, reply, err.statusCode, notice(err.message));
      throw err;
    }
  };
}
