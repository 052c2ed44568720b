import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { expect } from 'vitest';
import { inviteMember, type MemberRole } from '../../src/domain/members.js';
import { operatorActor } from '../../src/domain/audit.js';
import type { DatabaseExecutor } from '../../src/db/executor.js';

export const CONSOLE_PASSWORD = 'correct horse battery';

/** A browser-like client of the console over inject: keeps cookies, sends same-origin fetch metadata, reads the form token. */
export class ConsoleClient {
  cookies = new Map<string, string>();
  /** Headers sent with every request (an Accept-Language, say). */
  headers: Record<string, string> = {};
  constructor(
    readonly app: FastifyInstance,
    readonly ip = '192.0.2.10',
  ) {}
  private cookieHeader() {
    return [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
  }
  private keep(res: LightMyRequestResponse) {
    const set = res.headers['set-cookie'];
    for (const c of Array.isArray(set) ? set : set ? [set] : []) {
      const [pair] = c.split(';');
      const i = pair.indexOf('=');
      const [k, v] = [pair.slice(0, i), pair.slice(i + 1)];
      if (/Max-Age=0/.test(c)) this.cookies.delete(k);
      else this.cookies.set(k, v);
    }
    return res;
  }
  async get(url: string) {
    return this.keep(
      await this.app.inject({
        method: 'GET',
        url,
        remoteAddress: this.ip,
        headers: { ...this.headers, cookie: this.cookieHeader(), 'sec-fetch-site': 'same-origin' },
      }),
    );
  }
  /**
   * Whether `post` follows a change's redirect to its own section's page (post, redirect, get) and
   * answers that page, as a browser shows it; false: the 303 itself.
   */
  followChanges = true;

  async post(url: string, form: Record<string, string>, headers: Record<string, string> = {}) {
    const res = await this.postOnly(url, form, headers);
    const section = (u: string) => u.split(/[?#]/)[0].split('/').slice(0, 3).join('/');
    if (this.followChanges && res.statusCode === 303 && res.headers.location && section(res.headers.location) === section(url)) {
      return this.get(res.headers.location);
    }
    return res;
  }

  async postOnly(url: string, form: Record<string, string>, headers: Record<string, string> = {}) {
    return this.keep(
      await this.app.inject({
        method: 'POST',
        url,
        remoteAddress: this.ip,
        payload: new URLSearchParams(form).toString(),
        headers: {
          ...this.headers,
          cookie: this.cookieHeader(),
          'content-type': 'application/x-www-form-urlencoded',
          'sec-fetch-site': 'same-origin',
          origin: 'http://localhost:80',
          host: 'localhost:80',
          ...headers,
        },
      }),
    );
  }
  /** The form token of a page's body. */
  static token(body: string): string {
    const token = /name="_csrf" value="([^"]+)"/.exec(body)?.[1];
    expect(token, 'a form token on the page').toBeDefined();
    return token!;
  }

  /** Posts a form the way the page at `pageUrl` would: with its token. */
  async submit(pageUrl: string, action: string, form: Record<string, string>, headers: Record<string, string> = {}) {
    return this.post(action, { _csrf: ConsoleClient.token((await this.get(pageUrl)).body), ...form }, headers);
  }

  /** A member of `orgId`, invited by the operator, who accepts and is signed in (joinConsole at the wall clock). */
  static join(app: FastifyInstance, db: DatabaseExecutor, orgId: string, email: string, role: MemberRole): Promise<ConsoleClient> {
    return joinConsole({ app, db }, orgId, email, role, new Date());
  }
}

/** A member of `orgId` invited by the operator, signed in through the invitation page. */
export async function joinConsole(
  t: { app: FastifyInstance; db: DatabaseExecutor },
  orgId: string,
  email: string,
  role: MemberRole,
  now: Date,
  ip?: string,
): Promise<ConsoleClient> {
  const inv = await inviteMember(t.db, orgId, { email, role }, operatorActor('192.0.2.200'), now);
  const c = new ConsoleClient(t.app, ip);
  const res = await c.submit(`/console/invitations/${inv.token}`, `/console/invitations/${inv.token}`, { password: CONSOLE_PASSWORD });
  expect(res.statusCode).toBe(303);
  expect(res.headers.location).toBe('/console/overview');
  return c;
}
