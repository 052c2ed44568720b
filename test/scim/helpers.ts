import type { LightMyRequestResponse } from 'fastify';
import { operatorActor } from '../../src/domain/audit.js';
import { createOrganization } from '../../src/domain/orgs.js';
import { createScimToken } from '../../src/domain/scim.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { validateScim } from './validate.js';

/** A service with one organization and its SCIM token, and a client that speaks SCIM to it. */
export interface ScimTest extends TestApp {
  orgId: string;
  token: string;
  /** A SCIM request; every answer is checked against the RFC's schemas (test/scim/schemas). */
  scim(method: string, path: string, body?: unknown, headers?: Record<string, string>): Promise<LightMyRequestResponse & { json: Record<string, unknown> }>;
}

export const NOW = new Date('2026-11-25T10:00:00.000Z');

export async function scimTest(opts: { env?: Record<string, string>; now?: Date; clock?: () => Date; orgId?: string } = {}): Promise<ScimTest> {
  const t = await createTestApp({ now: opts.now ?? NOW, clock: opts.clock, env: { SCIM_REQUESTS_PER_MINUTE: '1000000', ...opts.env } });
  const orgId = opts.orgId ?? 'org_scim';
  await createOrganization(t.db, { id: orgId, name: 'Provisioned Co', plan: 'business' }, operatorActor(), opts.now ?? NOW);
  const { token } = await createScimToken(t.db, orgId, { name: 'Entra ID' }, operatorActor(), opts.now ?? NOW);
  return {
    ...t,
    orgId,
    token,
    async scim(method, path, body, headers = {}) {
      const res = await t.app.inject({
        method: method as 'GET',
        url: `/scim/v2${path}`,
        headers: {
          authorization: `Bearer ${token}`,
          ...(body !== undefined ? { 'content-type': 'application/scim+json' } : {}),
          ...headers,
        },
        payload: body === undefined ? undefined : JSON.stringify(body),
      });
      const json = res.body ? (JSON.parse(res.body) as Record<string, unknown>) : {};
      validateScim(method, path, res.statusCode, json);
      return Object.assign(res, { json });
    },
  };
}

export const USER = 'urn:ietf:params:scim:schemas:core:2.0:User';
export const GROUP = 'urn:ietf:params:scim:schemas:core:2.0:Group';
export const ENTERPRISE = 'urn:ietf:params:scim:schemas:extension:enterprise:2.0:User';
export const PATCH_OP = 'urn:ietf:params:scim:api:messages:2.0:PatchOp';

export const newUser = (email: string, extra: Record<string, unknown> = {}) => ({
  schemas: [USER],
  userName: email,
  active: true,
  emails: [{ value: email, type: 'work', primary: true }],
  ...extra,
});
