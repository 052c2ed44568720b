import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ApiError } from '../../contract/errors.js';
import type { Queryable } from '../../domain/database.js';
import { memberActor } from '../../domain/members.js';
import { resolveSession, saveFlash, SESSION_MAX_MS, takeFlash, type ConsoleSession } from '../../domain/sessions.js';
import type { Actor } from '../../domain/audit.js';
import { notice, type Safe } from '../html.js';

/**
 * The console's session: the cookie, the signed-in member it names, and a change's message kept
 * for the page its redirect leads to (post, redirect, get).
 */

export const CONSOLE_PREFIX = '/console';
const MAIN_OPEN = '<main id="main" tabindex="-1">';
export const SESSION_COOKIE = 'cp_session';

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
  return `${page.slice(0, at)}\n${text}${page.slice(at)}`;
}

/** Where a change's redirect leads: its section's page (/console/keys/x/roll -> /console/keys). */
export const pageOf = (url: string) => `${CONSOLE_PREFIX}/${url.slice(CONSOLE_PREFIX.length + 1).split(/[/?#]/)[0]}`;

/** The signed-in member, as the actor of the change this request makes (the audit log's who and where). */
export const actorOf = (request: FastifyRequest): Actor => memberActor(request.member.member, request.ip);

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

export function registerSession(scope: FastifyInstance, deps: ConsoleDeps) {
  scope.decorateRequest('consoleSession', null);
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
      if (typeof payload !== 'string' || reply.statusCode !== 200 || !String(reply.getHeader('content-type') ?? '').startsWith('text/html'))
        return send(payload);
      takeFlash(deps.db, s, cookieValue).then(
        (text) => send(text ? withFlash(payload, text) : payload),
        () => send(payload),
      );
      return reply;
    }) as typeof reply.send;
  });
}

type PageRenderer = (request: FastifyRequest, reply: FastifyReply, status: number, message?: Safe) => Promise<unknown>;

/**
 * A change done that leads to another page and says nothing there: a session begun, stepped up or
 * ended (signing in, a second factor, a password changed), where no session keeps a message.
 */
export class Redirect {
  constructor(readonly to: string) {}
}

/**
 * The answer to a console change (post, redirect, get): done, a 303 to its section's page, which
 * shows what happened (a new secret included) once, so a reload repeats nothing, or a 303 to the
 * `Redirect` the change names; refused, its page again with the domain's refusal (the API's own
 * message) and the refusal's status, having changed nothing. Anything else is the error handler's 500.
 */
export function changeOutcome(render: PageRenderer, next?: (request: FastifyRequest) => string) {
  return async (request: FastifyRequest, reply: FastifyReply, work: () => Promise<Safe | Redirect>) => {
    try {
      const said = await work();
      if (said instanceof Redirect) return reply.redirect(said.to, 303);
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
