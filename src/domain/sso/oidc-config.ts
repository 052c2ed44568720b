import type * as oidc from 'openid-client';
import { guardedFetch, type SsoNetworkRules } from './fetch.js';

/**
 * The IdP's published configuration (OpenID Connect Discovery), read through openid-client and
 * the SSRF-guarded fetch, kept for a few minutes per process, and the openid-client Configuration
 * built from it for one sign-in with the server's own clock (tests move it; openid-client's
 * `clockSkew` makes its checks of `exp`, `iat` and `nbf` use it).
 */

/**
 * openid-client, loaded on the first OpenID Connect request: a server whose organizations never
 * sign in through an IdP never loads it (docs/decisions.md).
 */
export const openidClient = () => import('openid-client');

const KEEP_MS = 10 * 60_000;
const discovered = new Map<string, { at: number; meta: oidc.ServerMetadata; jwks?: oidc.ExportedJWKSCache }>();

const keyOf = (issuer: string, rules: SsoNetworkRules) => `${rules.allowPrivate ? 'p' : 'g'}\0${issuer}`;

/** Discovery of `issuer` (cached): its metadata, whose `issuer` openid-client has compared with the URL given. */
export async function discoverIssuer(issuer: string, rules: SsoNetworkRules): Promise<oidc.ServerMetadata> {
  const key = keyOf(issuer, rules);
  const hit = discovered.get(key);
  if (hit && Date.now() - hit.at < KEEP_MS) return hit.meta;
  const client = await openidClient();
  const config = await client.discovery(new URL(issuer), 'discovery', undefined, undefined, {
    [client.customFetch]: guardedFetch(rules) as oidc.CustomFetch,
    execute: rules.allowPrivate ? [client.allowInsecureRequests] : [],
    timeout: 10,
  });
  const meta = { ...config.serverMetadata() } as oidc.ServerMetadata;
  discovered.set(key, { at: Date.now(), meta });
  return meta;
}

/** Forgets what discovery said about `issuer` (its settings changed, or its keys failed). */
export const forgetIssuer = (issuer: string) => {
  for (const k of discovered.keys()) if (k.endsWith(`\0${issuer}`)) discovered.delete(k);
};

/**
 * The Configuration of one sign-in: the IdP's metadata, the client and its secret (client_secret_basic),
 * ID token signatures checked against the IdP's published keys (enableNonRepudiationChecks), and
 * the server's clock.
 */
export async function oidcConfiguration(
  o: { issuer: string; clientId: string; clientSecret: string; now: Date },
  rules: SsoNetworkRules,
): Promise<{ config: oidc.Configuration; keep(): void }> {
  const meta = await discoverIssuer(o.issuer, rules);
  const client = await openidClient();
  const config = new client.Configuration(
    meta,
    o.clientId,
    { client_secret: o.clientSecret, [client.clockSkew]: Math.round((o.now.getTime() - Date.now()) / 1000) },
    client.ClientSecretBasic(o.clientSecret),
  );
  config[client.customFetch] = guardedFetch(rules) as oidc.CustomFetch;
  if (rules.allowPrivate) client.allowInsecureRequests(config);
  client.enableNonRepudiationChecks(config);
  const entry = discovered.get(keyOf(o.issuer, rules));
  if (entry?.jwks) client.setJwksCache(config, entry.jwks);
  return {
    config,
    keep() {
      const jwks = client.getJwksCache(config);
      const e = discovered.get(keyOf(o.issuer, rules));
      if (e && jwks) e.jwks = jwks;
    },
  };
}
