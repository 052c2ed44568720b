import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Actor } from '../domain/audit.js';
import { ScimProblem } from '../domain/scim-roster.js';
import type { ScimTokenResolver } from '../domain/scim.js';

/**
 * The SCIM face's token check (issue 56): `Authorization: Bearer cp_scim_...`, an organization's
 * SCIM token, not revoked, not past a roll's expiry, of an organization not deleted; else 401 in
 * SCIM's error format. Then the token's own limit of requests per minute (a sliding window in
 * this process's memory; 429 with Retry-After, which Entra ID and Okta honour).
 */
export interface ScimPrincipal {
  orgId: string;
  actor: Actor;
}

declare module 'fastify' {
  interface FastifyRequest {
    scim: ScimPrincipal | null;
  }
}

/** A sliding window of one minute per token: two fixed windows weighted by the current one's overlap. */
export class TokenLimit {
  private current = new Map<string, number>();
  private previous = new Map<string, number>();
  private windowStart = 0;
  constructor(private readonly perMinute: number) {}
  /** 0 when taken, else the seconds to wait. */
  take(key: string, now: number): number {
    const elapsed = now - this.windowStart;
    if (elapsed >= 60_000) {
      this.previous = elapsed >= 120_000 ? new Map() : this.current;
      this.current = new Map();
      this.windowStart = elapsed >= 120_000 ? now : this.windowStart + 60_000;
    }
    const weight = 1 - (now - this.windowStart) / 60_000;
    const used = (this.previous.get(key) ?? 0) * weight + (this.current.get(key) ?? 0);
    if (used + 1 > this.perMinute) return Math.max(1, Math.ceil((60_000 - (now - this.windowStart)) / 1000));
    this.current.set(key, (this.current.get(key) ?? 0) + 1);
    return 0;
  }
}

const refused = () => new ScimProblem(401, undefined, 'A valid SCIM token is required: Authorization: Bearer cp_scim_...');

export function scimTokenCheck(scope: FastifyInstance, opts: { tokens: ScimTokenResolver; perMinute: number }) {
  const limit = new TokenLimit(opts.perMinute);
  scope.decorateRequest('scim', null);
  scope.addHook('onRequest', async (request: FastifyRequest) => {
    const bearer = request.bearer();
    if (!bearer.single || !bearer.token) throw refused();
    const principal = await opts.tokens.resolve(bearer.token);
    if (!principal || principal.revoked || principal.orgDeleted) throw refused();
    const wait = limit.take(principal.tokenId, Date.now());
    if (wait > 0) {
      const e = new ScimProblem(429, undefined, `This SCIM token made more than ${opts.perMinute} requests in a minute; retry after ${wait} s.`);
      Object.assign(e.headers, { 'retry-after': String(wait) });
      throw e;
    }
    request.scim = { orgId: principal.orgId, actor: { kind: 'scim', tokenId: principal.tokenId, prefix: principal.prefix, address: request.ip } };
  });
}

export function principalOf(request: FastifyRequest): ScimPrincipal {
  if (!request.scim) throw refused();
  return request.scim;
}
