import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import * as samlify from 'samlify';
import { newSigningKey } from '../../src/crypto/self-signed.js';
import type { SamlSignInResult } from '../../src/domain/sso/saml.js';
import { ROOT } from './process.js';

/**
 * A real SAML 2.0 identity provider for the tests (issue 55, item 7), made with samlify: its own
 * RSA key and self-signed certificate, made here; its metadata; it reads our SP's metadata and our
 * AuthnRequests (checking their redirect signature), and signs responses and LogoutRequests for
 * our SP with its key. `response` builds an assertion with any field chosen by the test (an
 * adversary's IdP, or a correct one), signed where the test says; `standardResponse` is samlify's
 * own login response, as its createLoginResponse makes it. It also serves its metadata and an SSO
 * endpoint over HTTP on 127.0.0.1 (the metadata-URL tests, and a browser sign-in end to end).
 */

// samlify validates XML against the SAML schema through a plug-in; the test IdP trusts its peer (our SP's own messages).
samlify.setSchemaValidator({ validate: async () => 'skipped' });

const NS = 'xmlns:samlp="urn:oasis:names:tc:SAML:2.0:protocol" xmlns:saml="urn:oasis:names:tc:SAML:2.0:assertion"';
const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
const iso = (ms: number) => new Date(ms).toISOString();

export interface ResponseOptions {
  /** The request answered (the Response's and the bearer confirmation's InResponseTo); null: none (IdP-initiated). */
  inResponseTo: string | null;
  email?: string;
  nameId?: string;
  groups?: string[];
  /** Attribute names: email under `emailAttribute` (default 'email'), groups under `groupsAttribute` (default 'groups'). */
  emailAttribute?: string;
  groupsAttribute?: string;
  audience?: string;
  recipient?: string;
  /** The Response's Destination; null: left out. */
  destination?: string | null;
  issuer?: string;
  assertionId?: string;
  /** Times, in ms since the epoch: the assertion's window (default now-1 s .. now+5 min). */
  issueInstant?: number;
  notBefore?: number;
  notOnOrAfter?: number;
  sessionIndex?: string;
  sessionNotOnOrAfter?: number;
  /** Sign the assertion (default true), the whole Response (default false). */
  signAssertion?: boolean;
  signResponse?: boolean;
}

export interface TestIdp {
  entityId: string;
  certificate: string;
  privateKey: string;
  /** http://127.0.0.1:<port> (after listen). */
  baseUrl: string;
  metadataXml(): string;
  /** Reads our SP's metadata (entity id, ACS, SLO, signing certificate). */
  trust(spMetadataXml: string): void;
  /** Reads the AuthnRequest of our redirect URL, its signature checked against our SP metadata. */
  readAuthnRequest(redirectUrl: string): Promise<{ id: string; relayState: string | null; xml: string }>;
  /** The Response as XML, unsigned: for tests that build an attack from it. */
  responseXml(opts: ResponseOptions): string;
  /** Signs the Response's assertion and/or the Response itself with this IdP's key. */
  sign(xml: string, what: { assertion: boolean; response: boolean }): string;
  /** A SAMLResponse (base64) as the ACS receives it. */
  response(opts: ResponseOptions): string;
  /** samlify's own login response to a request (its template, its signing), base64. */
  standardResponse(requestId: string, email: string): Promise<string>;
  /** A LogoutRequest to our SLO, by the redirect binding, signed: the URL the browser is sent to. */
  logoutRequestUrl(opts: { nameId: string; sessionIndex?: string; issueInstant?: number; destination?: string; signed?: boolean }): string;
  /** samlify's own LogoutRequest by the POST binding (signed, as our metadata asks): the form's SAMLRequest. */
  logoutRequestPost(opts: { nameId: string; sessionIndex?: string }): string;
  /** The SSO endpoint answers the next AuthnRequest for this person with an auto-posting form. */
  nextUser: { email: string; groups: string[]; sessionIndex?: string } | null;
  listen(): Promise<void>;
  close(): Promise<void>;
}

export function startSamlIdp(opts: { entityId?: string; key?: { privateKey: string; certificate: string } } = {}): TestIdp {
  const now = Date.now();
  const key = opts.key ?? newSigningKey({ commonName: 'Test IdP', notBefore: new Date(now - 86_400_000), notAfter: new Date(now + 365 * 86_400_000) });
  let baseUrl = 'http://127.0.0.1:1';
  const entityId = opts.entityId ?? `https://idp.test/${randomBytes(4).toString('hex')}`;
  let idp = makeIdp();
  let sp: samlify.ServiceProviderInstance | null = null;
  let server: Server | null = null;

  function makeIdp() {
    return samlify.IdentityProvider({
      entityID: entityId,
      privateKey: key.privateKey,
      signingCert: key.certificate,
      wantAuthnRequestsSigned: true,
      requestSignatureAlgorithm: 'http://www.w3.org/2001/04/xmldsig-more#rsa-sha256',
      nameIDFormat: ['urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress'],
      singleSignOnService: [{ Binding: 'urn:oasis:names:tc:SAML:2.0:bindings:HTTP-Redirect', Location: `${baseUrl}/sso` }],
      singleLogoutService: [{ Binding: 'urn:oasis:names:tc:SAML:2.0:bindings:HTTP-Redirect', Location: `${baseUrl}/slo` }],
    });
  }
  const needSp = () => {
    if (!sp) throw new Error('call trust(spMetadataXml) first');
    return sp;
  };
  const spMeta = () => needSp().entityMeta;

  const t: TestIdp = {
    entityId,
    certificate: key.certificate,
    privateKey: key.privateKey,
    get baseUrl() {
      return baseUrl;
    },
    nextUser: null,
    metadataXml: () => idp.getMetadata(),
    trust(spMetadataXml) {
      sp = samlify.ServiceProvider({ metadata: spMetadataXml, wantLogoutRequestSigned: true });
    },
    async readAuthnRequest(redirectUrl) {
      const url = new URL(redirectUrl);
      const rawQuery = url.search.slice(1);
      const octetString = rawQuery
        .split('&')
        .filter((p) => !p.startsWith('Signature='))
        .join('&');
      const query = Object.fromEntries(url.searchParams);
      const parsed = await idp.parseLoginRequest(needSp(), 'redirect', { query, octetString });
      const request = parsed.extract.request as Record<string, string>;
      return { id: request.id, relayState: url.searchParams.get('RelayState'), xml: parsed.samlContent };
    },
    responseXml(o) {
      const at = Date.now();
      const issue = o.issueInstant ?? at;
      const notOnOrAfter = iso(o.notOnOrAfter ?? at + 5 * 60_000);
      const acs = spMeta().getAssertionConsumerService('post') as string;
      const audience = o.audience ?? spMeta().getEntityID();
      const issuer = esc(o.issuer ?? entityId);
      const email = o.email ?? 'ada@acme.test';
      const irt = o.inResponseTo === null ? '' : ` InResponseTo="${esc(o.inResponseTo)}"`;
      const destination = o.destination === null ? '' : ` Destination="${esc(o.destination ?? acs)}"`;
      const attrs = [
        `<saml:Attribute Name="${esc(o.emailAttribute ?? 'email')}"><saml:AttributeValue>${esc(email)}</saml:AttributeValue></saml:Attribute>`,
        ...(o.groups?.length
          ? [
              `<saml:Attribute Name="${esc(o.groupsAttribute ?? 'groups')}">${o.groups.map((g) => `<saml:AttributeValue>${esc(g)}</saml:AttributeValue>`).join('')}</saml:Attribute>`,
            ]
          : []),
      ].join('');
      const sessionEnd = o.sessionNotOnOrAfter ? ` SessionNotOnOrAfter="${iso(o.sessionNotOnOrAfter)}"` : '';
      return (
        `<samlp:Response ${NS} ID="_r${randomBytes(12).toString('hex')}" Version="2.0" IssueInstant="${iso(issue)}"${destination}${irt}>` +
        `<saml:Issuer>${issuer}</saml:Issuer>` +
        '<samlp:Status><samlp:StatusCode Value="urn:oasis:names:tc:SAML:2.0:status:Success"/></samlp:Status>' +
        `<saml:Assertion ${NS} ID="${esc(o.assertionId ?? `_a${randomBytes(12).toString('hex')}`)}" Version="2.0" IssueInstant="${iso(issue)}">` +
        `<saml:Issuer>${issuer}</saml:Issuer>` +
        `<saml:Subject><saml:NameID Format="urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress">${esc(o.nameId ?? email)}</saml:NameID>` +
        `<saml:SubjectConfirmation Method="urn:oasis:names:tc:SAML:2.0:cm:bearer"><saml:SubjectConfirmationData NotOnOrAfter="${notOnOrAfter}" Recipient="${esc(o.recipient ?? acs)}"${irt}/></saml:SubjectConfirmation></saml:Subject>` +
        `<saml:Conditions NotBefore="${iso(o.notBefore ?? at - 1000)}" NotOnOrAfter="${notOnOrAfter}"><saml:AudienceRestriction><saml:Audience>${esc(audience)}</saml:Audience></saml:AudienceRestriction></saml:Conditions>` +
        `<saml:AuthnStatement AuthnInstant="${iso(issue)}" SessionIndex="${esc(o.sessionIndex ?? `_s${randomBytes(6).toString('hex')}`)}"${sessionEnd}><saml:AuthnContext><saml:AuthnContextClassRef>urn:oasis:names:tc:SAML:2.0:ac:classes:PasswordProtectedTransport</saml:AuthnContextClassRef></saml:AuthnContext></saml:AuthnStatement>` +
        `<saml:AttributeStatement>${attrs}</saml:AttributeStatement>` +
        '</saml:Assertion></samlp:Response>'
      );
    },
    sign(xml, what) {
      const base = {
        privateKey: key.privateKey,
        // samlify wants the certificate's base64 body, as its metadata holds it.
        signingCert: key.certificate.replace(/-----(BEGIN|END) CERTIFICATE-----|\s+/g, ''),
        signatureAlgorithm: 'http://www.w3.org/2001/04/xmldsig-more#rsa-sha256',
        isBase64Output: false,
      };
      let out = xml;
      if (what.assertion) {
        out = samlify.SamlLib.constructSAMLSignature({
          ...base,
          rawSamlMessage: out,
          referenceTagXPath: "/*[local-name(.)='Response']/*[local-name(.)='Assertion']",
          signatureConfig: {
            prefix: 'ds',
            location: { reference: "/*[local-name(.)='Response']/*[local-name(.)='Assertion']/*[local-name(.)='Issuer']", action: 'after' },
          },
        });
      }
      if (what.response) {
        out = samlify.SamlLib.constructSAMLSignature({
          ...base,
          rawSamlMessage: out,
          isMessageSigned: true,
          signatureConfig: { prefix: 'ds', location: { reference: "/*[local-name(.)='Response']/*[local-name(.)='Issuer']", action: 'after' } },
        });
      }
      return out;
    },
    response(o) {
      const xml = t.sign(t.responseXml(o), { assertion: o.signAssertion ?? true, response: o.signResponse ?? false });
      return Buffer.from(xml).toString('base64');
    },
    async standardResponse(requestId, email) {
      const ctx = await idp.createLoginResponse(needSp(), { extract: { request: { id: requestId } } }, 'post', { email });
      return ctx.context;
    },
    logoutRequestUrl(o) {
      const slo = spMeta().getSingleLogoutService('redirect') as string;
      const xml =
        `<samlp:LogoutRequest ${NS} ID="_l${randomBytes(12).toString('hex')}" Version="2.0" IssueInstant="${iso(o.issueInstant ?? Date.now())}" Destination="${esc(o.destination ?? slo)}">` +
        `<saml:Issuer>${esc(entityId)}</saml:Issuer>` +
        `<saml:NameID Format="urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress">${esc(o.nameId)}</saml:NameID>` +
        (o.sessionIndex ? `<samlp:SessionIndex>${esc(o.sessionIndex)}</samlp:SessionIndex>` : '') +
        '</samlp:LogoutRequest>';
      const samlRequest = encodeURIComponent(samlify.Utility.base64Encode(samlify.Utility.deflateString(xml)));
      const sigAlg = encodeURIComponent('http://www.w3.org/2001/04/xmldsig-more#rsa-sha256');
      const octet = `SAMLRequest=${samlRequest}&SigAlg=${sigAlg}`;
      if (o.signed === false) return `${slo}?SAMLRequest=${samlRequest}`;
      const signature = samlify.SamlLib.constructMessageSignature(
        octet,
        key.privateKey,
        undefined,
        undefined,
        'http://www.w3.org/2001/04/xmldsig-more#rsa-sha256',
      );
      return `${slo}?${octet}&Signature=${encodeURIComponent(signature.toString())}`;
    },
    logoutRequestPost(o) {
      const ctx = idp.createLogoutRequest(needSp(), 'post', { logoutNameID: o.nameId, sessionIndex: o.sessionIndex });
      return ctx.context;
    },
    async listen() {
      server = createServer(async (req, res) => {
        const url = new URL(req.url ?? '/', baseUrl);
        try {
          if (url.pathname === '/metadata') {
            res.writeHead(200, { 'content-type': 'application/samlmetadata+xml' }).end(t.metadataXml());
          } else if (url.pathname === '/sso' && t.nextUser) {
            const request = await t.readAuthnRequest(url.toString());
            const acs = spMeta().getAssertionConsumerService('post') as string;
            const body = t.response({ inResponseTo: request.id, email: t.nextUser.email, groups: t.nextUser.groups, sessionIndex: t.nextUser.sessionIndex });
            const relay = request.relayState ? `<input type="hidden" name="RelayState" value="${esc(request.relayState)}">` : '';
            res
              .writeHead(200, { 'content-type': 'text/html; charset=utf-8' })
              .end(
                `<!doctype html><html lang="en"><title>Test IdP</title><form method="post" action="${esc(acs)}"><input type="hidden" name="SAMLResponse" value="${body}">${relay}<button>Continue</button></form><script>document.forms[0].submit()</script></html>`,
              );
          } else if (url.pathname === '/slo') {
            // Where our single logout sends the browser back with its LogoutResponse.
            res
              .writeHead(200, { 'content-type': 'text/html; charset=utf-8' })
              .end('<!doctype html><html lang="en"><title>Test IdP</title><p>Signed out.</p></html>');
          } else {
            res.writeHead(404).end();
          }
        } catch (err) {
          res.writeHead(400, { 'content-type': 'text/plain' }).end(String((err as Error).message));
        }
      });
      await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
      baseUrl = `http://127.0.0.1:${(server!.address() as AddressInfo).port}`;
      idp = makeIdp(); // its metadata names the endpoints where it listens
    },
    async close() {
      if (server) await new Promise<void>((resolve) => server!.close(() => resolve()));
      server = null;
    },
  };
  return t;
}

/**
 * consumeSamlResponse in a second Node process (the compiled module, dist/, which the tests' global
 * setup keeps fresh) on the database `env` names (DATABASE_URL, or DATA_DIR for the embedded one).
 */
export function runSamlChild(
  env: { DATABASE_URL: string } | { DATA_DIR: string },
  orgId: string,
  baseUrl: string,
  samlResponse: string,
): Promise<SamlSignInResult> {
  const script = `
    const { consumeSamlResponse } = await import('./dist/domain/sso/saml.js');
    const db = process.env.DATABASE_URL
      ? new (await import('./dist/db/pg.js')).PgExecutor({ connectionString: process.env.DATABASE_URL, max: 1 })
      : await (await import('./dist/db/pglite.js')).PgliteExecutor.open(process.env.DATA_DIR);
    const r = await consumeSamlResponse(db, ${JSON.stringify(orgId)}, ${JSON.stringify(baseUrl)}, { samlResponse: process.env.SAML_RESPONSE });
    await db.close();
    process.stdout.write(JSON.stringify(r));`;
  return new Promise((resolve, reject) =>
    execFile(
      process.execPath,
      ['--input-type=module', '-e', script],
      { cwd: ROOT, env: { ...process.env, DATABASE_URL: '', DATA_DIR: '', ...env, SAML_RESPONSE: samlResponse } },
      (err, stdout, stderr) => (err ? reject(new Error(`${err.message}\n${stderr}`)) : resolve(JSON.parse(stdout) as SamlSignInResult)),
    ),
  );
}
