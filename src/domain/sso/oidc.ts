import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type * as oidc from 'openid-client';
import type { createRemoteJWKSet, JWTPayload } from 'jose';
import type { DatabaseExecutor, Queryable } from '../database.js';
import { findMember } from '../../db/repositories/members.js';
import {
  endIdpSessions,
  findSsoSettings,
  insertSignInRow,
  listSsoDomains,
  purgeExpiredSignIns,
  takeSignInRow,
  type SsoSettingsRow,
} from '../../db/repositories/sso.js';
import { ApiError } from '../../contract/errors.js';
import { recordAudit } from '../audit.js';
import { memberActor } from '../members.js';
import { openIdpSession, SESSION_MAX_MS, type SignedIn } from '../sessions.js';
import { guardedFetch, type SsoNetworkRules } from './fetch.js';
import { discoverIssuer, forgetIssuer, oidcConfiguration, openidClient } from './oidc-config.js';
import { unsealSsoSecret } from './seal.js';
import { groupsOf, mapGroups, memberFromIdp } from './members.js';

/**
 * Sign-in through an organization's OpenID Connect IdP (CONTRACT.md section 11, amended): the
 * authorization code flow with PKCE, `state` and `nonce` by openid-client, the ID token checked for
 * issuer, audience, expiry, nonce and signature (the IdP's published keys); the member made or
 * updated from its claims; a console session under the usual rules, linked to the IdP session so
 * that back-channel logout ends it. Every URL names the organization, so each has its own
 * redirect URI to register at its IdP.
 */

const sha256 = (s: string | Buffer) => createHash('sha256').update(s).digest();

/** How long the browser has at the IdP before the sign-in it began is void. */
export const SIGN_IN_TTL_MS = 10 * 60_000;

export const oidcPaths = (orgId: string) => {
  const base = `/console/sso/${encodeURIComponent(orgId)}/oidc`;
  return { start: `${base}/start`, callback: `${base}/callback`, backchannelLogout: `${base}/backchannel-logout` };
};

/** A refused SSO sign-in: one plain message for the person; `reason` (a short code) for the log and the audit row. */
export class SsoRefused extends ApiError {
  constructor(
    readonly reason: string,
    message = SSO_REFUSED,
    readonly detail?: string,
  ) {
    super('unauthorized', message);
  }
}

export const SSO_REFUSED =
  "Signing in through your organization's identity provider did not complete. Start again from the sign-in page; if it happens again, tell your IT department.";
export const SSO_NOT_SET_UP = 'This organization has not set up single sign-on through OpenID Connect.';
export const SSO_NO_ROLE =
  "Your account at your organization's identity provider is in no group that gives access to this console. Ask your IT department for access.";
export const SSO_WRONG_DOMAIN = "The address your identity provider gave is not on one of your organization's verified domains.";

async function oidcSettings(
  db: Queryable,
  orgId: string,
): Promise<SsoSettingsRow & { oidcIssuer: string; oidcClientId: string; oidcClientSecretSealed: string }> {
  const s = await findSsoSettings(db, orgId);
  if (s?.kind !== 'oidc' || !s.oidcIssuer || !s.oidcClientId || !s.oidcClientSecretSealed) throw new SsoRefused('not_set_up', SSO_NOT_SET_UP);
  return s as SsoSettingsRow & { oidcIssuer: string; oidcClientId: string; oidcClientSecretSealed: string };
}

async function configurationOf(db: Queryable, s: Awaited<ReturnType<typeof oidcSettings>>, rules: SsoNetworkRules, now: Date) {
  const secret = await unsealSsoSecret(db, s.orgId, 'oidc_client_secret', s.oidcClientSecretSealed);
  return oidcConfiguration({ issuer: s.oidcIssuer, clientId: s.oidcClientId, clientSecret: secret, now }, rules);
}

export interface StartedSignIn {
  /** Where the browser goes: the IdP's authorization endpoint with this sign-in's parameters. */
  authorizationUrl: string;
  /** The value of the cookie that binds the sign-in to this browser. */
  browserCookie: string;
}

/** Begins a sign-in: a one-time row (state, nonce, PKCE verifier) and the IdP's URL to go to. */
export async function startOidcSignIn(
  db: Queryable,
  orgId: string,
  o: { baseUrl: string; loginHint?: string; rules: SsoNetworkRules; now: Date },
): Promise<StartedSignIn> {
  const s = await oidcSettings(db, orgId);
  const { config } = await configurationOf(db, s, o.rules, o.now).catch((err) => {
    if (err instanceof ApiError) throw err;
    throw new SsoRefused('discovery_failed', SSO_REFUSED, (err as Error).message);
  });
  const client = await openidClient();
  const state = client.randomState();
  const nonce = client.randomNonce();
  const verifier = client.randomPKCECodeVerifier();
  const browserCookie = randomBytes(32).toString('base64url');
  await purgeExpiredSignIns(db, orgId, o.now);
  await insertSignInRow(db, {
    orgId,
    stateHash: sha256(state),
    browserHash: sha256(browserCookie),
    nonce,
    pkceVerifier: verifier,
    at: o.now,
    expiresAt: new Date(o.now.getTime() + SIGN_IN_TTL_MS),
  });
  const params: Record<string, string> = {
    redirect_uri: o.baseUrl + oidcPaths(orgId).callback,
    scope: 'openid email profile',
    state,
    nonce,
    code_challenge: await client.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256',
  };
  if (o.loginHint) params.login_hint = o.loginHint;
  return { authorizationUrl: client.buildAuthorizationUrl(config, params).href, browserCookie };
}

/**
 * The IdP's answer: the sign-in its `state` names is consumed (deleted by the database, so a
 * replayed answer finds nothing on any process), checked against this browser's cookie and its
 * expiry, then openid-client exchanges the code and checks the ID token. The member is made or
 * updated and a session opened in one transaction, audited. A refusal says the same to the person
 * whatever failed; its reason goes to the log.
 */
export async function finishOidcSignIn(
  db: DatabaseExecutor,
  orgId: string,
  o: { baseUrl: string; query: string; browserCookie: string | undefined; address: string; rules: SsoNetworkRules; now: Date },
): Promise<SignedIn> {
  const params = new URLSearchParams(o.query);
  const state = params.get('state');
  if (!state || state.length > 512) throw new SsoRefused('no_state');
  const taken = await takeSignInRow(db, orgId, sha256(state));
  if (!taken) throw new SsoRefused('unknown_state');
  if (Date.parse(taken.expiresAt) <= o.now.getTime()) throw new SsoRefused('expired_sign_in');
  const cookie = o.browserCookie ?? '';
  if (!timingSafeEqual(sha256(cookie), taken.browserHash)) throw new SsoRefused('other_browser');
  const error = params.get('error');
  if (error) throw new SsoRefused('idp_error', SSO_REFUSED, `${error}: ${params.get('error_description') ?? ''}`.slice(0, 300));
  const s = await oidcSettings(db, orgId);
  const { config, keep } = await configurationOf(db, s, o.rules, o.now);
  const callback = new URL(oidcPaths(orgId).callback, `${o.baseUrl}/`);
  callback.search = params.toString();
  const client = await openidClient();
  let claims: oidc.IDToken;
  try {
    const tokens = await client.authorizationCodeGrant(config, callback, {
      pkceCodeVerifier: taken.pkceVerifier,
      expectedState: state,
      expectedNonce: taken.nonce,
      idTokenExpected: true,
    });
    const c = tokens.claims();
    if (!c) throw new Error('no ID token');
    claims = c;
    keep();
  } catch (err) {
    // Keys may have rolled at the IdP: the next sign-in reads discovery (and the keys) again.
    forgetIssuer(s.oidcIssuer);
    throw new SsoRefused('id_token_refused', SSO_REFUSED, describe(err));
  }
  const email = typeof claims.email === 'string' ? claims.email.trim().toLowerCase() : '';
  if (!email || claims.email_verified === false) throw new SsoRefused('no_verified_email', SSO_WRONG_DOMAIN);
  const domain = email.slice(email.lastIndexOf('@') + 1);
  if (!(await listSsoDomains(db, orgId)).some((d) => d.domain === domain && d.verifiedAt)) throw new SsoRefused('wrong_domain', SSO_WRONG_DOMAIN);
  const mapped = mapGroups(s, groupsOf(claims[s.groupsClaim]));
  if (!mapped) throw new SsoRefused('no_role', SSO_NO_ROLE);
  const endsAt = new Date(o.now.getTime() + Math.min(s.sessionMaxHours * 3_600_000, SESSION_MAX_MS));
  const sid = typeof claims.sid === 'string' ? claims.sid : null;
  return await db.transaction(async (tx) => {
    const { member } = await memberFromIdp(tx, orgId, { email, subject: claims.sub, mapped, via: 'oidc', address: o.address }, o.now);
    const session = await openIdpSession(tx, member, { protocol: 'oidc', subject: claims.sub, session: sid, endsAt }, o.address, o.now);
    await recordAudit(
      tx,
      orgId,
      memberActor(member, o.address),
      { action: 'member.signed_in', target: { kind: 'member', id: member.id }, details: { twoFactor: false, via: 'oidc' } },
      o.now,
    );
    return session;
  });
}

function describe(err: unknown): string {
  const e = err as { code?: string; message?: string; cause?: { code?: string; message?: string } };
  const inner = e.cause?.message ? ` (${e.cause.code ?? 'cause'}: ${e.cause.message})` : '';
  return `${e.code ?? 'error'}: ${e.message ?? String(err)}${inner}`.slice(0, 400);
}

// Back-channel logout (OpenID Connect Back-Channel Logout 1.0).

const LOGOUT_EVENT = 'http://schemas.openid.net/event/backchannel-logout';
const keySets = new Map<string, ReturnType<typeof createRemoteJWKSet>>();

/** A logout token refused: the IdP is answered 400 (the spec's answer), with this reason. */
export class LogoutTokenRefused extends ApiError {
  constructor(readonly reason: string) {
    super('invalid_request', `The logout token was refused: ${reason}.`);
  }
}

/**
 * A logout token from the organization's IdP: a JWT signed with its published keys, for this
 * client, recent, with the back-channel logout event, a `sid` or a `sub`, and no `nonce`. The
 * console sessions of that IdP session (or subject) end at once, on every process (they are rows).
 */
export async function oidcBackchannelLogout(
  db: DatabaseExecutor,
  orgId: string,
  logoutToken: unknown,
  o: { rules: SsoNetworkRules; now: Date; address: string | null },
): Promise<{ ended: number }> {
  if (typeof logoutToken !== 'string' || logoutToken.length > 16_000 || logoutToken.split('.').length !== 3) throw new LogoutTokenRefused('not a JWT');
  const s = await findSsoSettings(db, orgId);
  if (s?.kind !== 'oidc' || !s.oidcIssuer || !s.oidcClientId) throw new LogoutTokenRefused('no OpenID Connect IdP for this organization');
  const meta = await discoverIssuer(s.oidcIssuer, o.rules);
  if (!meta.jwks_uri) throw new LogoutTokenRefused('the IdP publishes no keys');
  let keys = keySets.get(meta.jwks_uri);
  // jose, loaded on the first logout token (docs/decisions.md).
  const jose = await import('jose');
  if (!keys) {
    keys = jose.createRemoteJWKSet(new URL(meta.jwks_uri), { [jose.customFetch]: guardedFetch(o.rules) as never });
    keySets.set(meta.jwks_uri, keys);
  }
  let payload: JWTPayload;
  try {
    ({ payload } = await jose.jwtVerify(logoutToken, keys, {
      issuer: s.oidcIssuer,
      audience: s.oidcClientId,
      algorithms: ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA'],
      currentDate: o.now,
      maxTokenAge: '10 minutes',
      requiredClaims: ['iat'],
      clockTolerance: 30,
    }));
  } catch (err) {
    throw new LogoutTokenRefused((err as { code?: string }).code ?? 'signature or claims');
  }
  const events = payload.events as Record<string, unknown> | undefined;
  if (!events || typeof events !== 'object' || typeof events[LOGOUT_EVENT] !== 'object') throw new LogoutTokenRefused('no back-channel logout event');
  if ('nonce' in payload) throw new LogoutTokenRefused('a nonce is not allowed');
  const sid = typeof payload.sid === 'string' ? payload.sid : undefined;
  const sub = typeof payload.sub === 'string' ? payload.sub : undefined;
  if (!sid && !sub) throw new LogoutTokenRefused('neither sid nor sub');
  return db.transaction(async (tx) => {
    const members = await endIdpSessions(tx, orgId, 'oidc', { session: sid, subject: sub });
    const counts = new Map<string, number>();
    for (const m of members) counts.set(m, (counts.get(m) ?? 0) + 1);
    for (const [memberId, ended] of counts) {
      const m = await findMember(tx, orgId, memberId);
      await recordAudit(
        tx,
        orgId,
        m ? memberActor(m, o.address) : { kind: 'operator', address: o.address },
        {
          action: 'member.sessions_ended',
          target: { kind: 'member', id: memberId },
          details: { ended, includingCurrent: true, via: 'oidc_backchannel_logout' },
        },
        o.now,
      );
    }
    return { ended: members.length };
  });
}
