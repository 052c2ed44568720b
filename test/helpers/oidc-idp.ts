import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
// @ts-expect-error oidc-provider ships no type declarations
import OidcProvider from 'oidc-provider';

/** The little of oidc-provider's API this helper uses (it ships no types). */
// biome-ignore lint/suspicious/noExplicitAny: oidc-provider's objects are untyped
type Loose = any;
type Provider = Loose;
type Configuration = Record<string, unknown>;

/**
 * A real OpenID Connect IdP for the tests: `oidc-provider` (v9) on a random port of 127.0.0.1.
 * Sign-in at the IdP is automatic (the test says who signs in next, `nextUser`), consent is given
 * by a grant made on the spot, and the IdP's own checks (PKCE, redirect URIs, client secrets) are
 * its own. `onTokenAnswer` lets a test replace what the token endpoint answers (a token the IdP
 * really signed, for another audience, say): the tampering a network attacker or a confused IdP
 * would do, while the tokens stay genuine.
 */

export interface IdpUser {
  email: string;
  groups?: string[];
  emailVerified?: boolean;
}

export interface IdpClient {
  clientId: string;
  clientSecret: string;
  redirectUri: string;
  backchannelLogoutUri?: string;
}

/** One signing key, shareable between two IdPs (so that only the issuer tells their tokens apart). */
export const newSigningKey = () => {
  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  return { ...(privateKey.export({ format: 'jwk' }) as Record<string, string>), kid: randomBytes(6).toString('hex'), use: 'sig', alg: 'RS256' };
};

export interface TestIdp {
  issuer: string;
  provider: Provider;
  users: Map<string, IdpUser>;
  /** The account (a key of `users`) the next sign-in at the IdP is made as. */
  nextUser: string;
  onTokenAnswer: ((body: Record<string, unknown>) => Record<string, unknown>) | null;
  /** Follows the IdP's redirects from `authorizationUrl` (signing in as nextUser) up to the redirect to the client: that URL. */
  authorize(authorizationUrl: string): Promise<URL>;
  /** An ID token the IdP issues to `client` for `nextUser` with `nonce` (a whole code flow, PKCE included, done by the test). */
  idTokenFor(client: IdpClient, nonce: string): Promise<string>;
  /** The IdP's back-channel logout of `accountId`'s session at `clientId`: the IdP signs and POSTs the logout token. */
  logout(clientId: string, accountId: string, sid: string): Promise<void>;
  close(): Promise<void>;
}

export async function startIdp(o: { clients: IdpClient[]; key?: ReturnType<typeof newSigningKey>; idTokenTtl?: number }): Promise<TestIdp> {
  const server: Server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const users = new Map<string, IdpUser>();
  const config: Configuration = {
    clients: o.clients.map((c) => ({
      client_id: c.clientId,
      client_secret: c.clientSecret,
      redirect_uris: [c.redirectUri],
      grant_types: ['authorization_code'],
      response_types: ['code'],
      token_endpoint_auth_method: 'client_secret_basic',
      ...(c.backchannelLogoutUri ? { backchannel_logout_uri: c.backchannelLogoutUri, backchannel_logout_session_required: true } : {}),
    })),
    jwks: { keys: [o.key ?? newSigningKey()] as never },
    cookies: { keys: [randomBytes(16).toString('hex')] },
    claims: { openid: ['sub'], email: ['email', 'email_verified'], profile: ['name', 'groups'] },
    conformIdTokenClaims: false,
    features: { devInteractions: { enabled: false }, backchannelLogout: { enabled: true } },
    pkce: { required: () => true },
    // The service under test listens on loopback, which the IdP's own SSRF guard refuses to POST logout tokens to.
    fetch: (url: string, init: RequestInit & { dispatcher?: unknown }) => {
      const { dispatcher: _guard, ...rest } = init;
      return fetch(url, rest);
    },
    ttl: { IdToken: o.idTokenTtl ?? 3600, AccessToken: 3600, AuthorizationCode: 600, Session: 3600, Interaction: 600, Grant: 3600 },
    interactions: { url: (_ctx: Loose, interaction: Loose) => `/interaction/${interaction.uid}` },
    async findAccount(_ctx: Loose, id: string) {
      const u = users.get(id);
      if (!u) return undefined;
      return {
        accountId: id,
        claims: async () => ({ sub: id, email: u.email, email_verified: u.emailVerified ?? true, name: id, groups: u.groups ?? [] }),
      };
    },
    async loadExistingGrant(ctx: Loose) {
      const grantId = ctx.oidc.result?.consent?.grantId || ctx.oidc.session.grantIdFor(ctx.oidc.client.clientId);
      if (grantId) return ctx.oidc.provider.Grant.find(grantId);
      const grant = new ctx.oidc.provider.Grant({ clientId: ctx.oidc.client.clientId, accountId: ctx.oidc.session.accountId });
      grant.addOIDCScope('openid email profile');
      await grant.save();
      return grant;
    },
  };
  const provider: Provider = new OidcProvider(issuer, config);
  const handle = provider.callback();
  const idp: TestIdp = {
    issuer,
    provider,
    users,
    nextUser: '',
    onTokenAnswer: null,
    authorize: (url) => follow(url),
    idTokenFor: async (c, nonce) => {
      const { calculatePKCECodeChallenge, randomPKCECodeVerifier } = await import('openid-client');
      const verifier = randomPKCECodeVerifier();
      const auth = new URL('/auth', issuer);
      auth.search = new URLSearchParams({
        client_id: c.clientId,
        redirect_uri: c.redirectUri,
        response_type: 'code',
        scope: 'openid email profile',
        nonce,
        state: randomBytes(8).toString('hex'),
        code_challenge: await calculatePKCECodeChallenge(verifier),
        code_challenge_method: 'S256',
      }).toString();
      const back = await follow(auth.href);
      const code = back.searchParams.get('code');
      if (!code) throw new Error(`the IdP answered no code: ${back.href}`);
      const res = await fetch(new URL('/token', issuer), {
        method: 'POST',
        headers: {
          authorization: `Basic ${Buffer.from(`${encodeURIComponent(c.clientId)}:${encodeURIComponent(c.clientSecret)}`).toString('base64')}`,
          'content-type': 'application/x-www-form-urlencoded',
        },
        body: new URLSearchParams({ grant_type: 'authorization_code', code, redirect_uri: c.redirectUri, code_verifier: verifier }),
      });
      const body = (await res.json()) as { id_token?: string };
      if (!body.id_token) throw new Error(`the IdP issued no ID token: ${JSON.stringify(body)}`);
      return body.id_token;
    },
    logout: async (clientId, accountId, sid) => {
      const client = await provider.Client.find(clientId);
      if (!client) throw new Error(`no client ${clientId}`);
      await client.backchannelLogout(accountId, sid);
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };

  // Each call is a new browser at the IdP (its own cookie jar): the next user signs in afresh.
  async function follow(start: string): Promise<URL> {
    const jar = new Map<string, string>();
    let url = new URL(start);
    for (let hop = 0; hop < 10; hop++) {
      if (url.origin !== issuer) return url;
      const res = await fetch(url, { redirect: 'manual', headers: { cookie: [...jar].map(([k, v]) => `${k}=${v}`).join('; ') } });
      for (const c of res.headers.getSetCookie()) {
        const [pair] = c.split(';');
        const i = pair.indexOf('=');
        jar.set(pair.slice(0, i), pair.slice(i + 1));
      }
      const location = res.headers.get('location');
      if (!location) throw new Error(`the IdP answered ${res.status} without a redirect at ${url.href}: ${(await res.text()).slice(0, 300)}`);
      url = new URL(location, url);
    }
    throw new Error('too many redirects at the IdP');
  }

  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    const path = (req.url ?? '').split('?')[0];
    if (req.method === 'GET' && path.startsWith('/interaction/')) {
      // Signing in at the IdP: as nextUser, at once.
      provider
        .interactionDetails(req, res)
        .then((details: Loose) =>
          provider.interactionFinished(req, res, details.prompt.name === 'login' ? { login: { accountId: idp.nextUser } } : { consent: {} }, {
            mergeWithLastSubmission: true,
          }),
        )
        .catch((err: Error) => {
          res.statusCode = 500;
          res.end(err.message);
        });
      return;
    }
    if (req.method === 'POST' && path === '/token' && idp.onTokenAnswer) {
      const change = idp.onTokenAnswer;
      const chunks: Buffer[] = [];
      const write = res.write.bind(res);
      const end = res.end.bind(res);
      res.write = ((c: unknown) => {
        chunks.push(Buffer.from(c as Buffer));
        return true;
      }) as typeof res.write;
      res.end = ((c?: unknown) => {
        if (c && typeof c !== 'function') chunks.push(Buffer.from(c as Buffer));
        let body = Buffer.concat(chunks).toString('utf8');
        try {
          body = JSON.stringify(change(JSON.parse(body)));
        } catch {
          // not JSON: as it is
        }
        res.setHeader('content-length', Buffer.byteLength(body));
        res.write = write;
        return end(body);
      }) as typeof res.end;
    }
    handle(req, res);
  });
  return idp;
}
