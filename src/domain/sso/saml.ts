import { createRequire } from 'node:module';
import { createCipheriv, createDecipheriv, createHash, randomBytes, X509Certificate } from 'node:crypto';
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { inflateRawSync } from 'node:zlib';
import type { CacheProvider, Profile, SAML } from '@node-saml/node-saml';
import { ApiError, invalid } from '../../contract/errors.js';
import {
  clearIdpSettings,
  findSamlProvider,
  findSamlRequest,
  insertSamlRequest,
  insertSpKeyIfMissing,
  purgeExpiredSaml,
  recordSeenAssertion,
  spendSamlRequest,
  updateIdpSettings,
  type SamlProviderRow,
} from '../../db/repositories/saml.js';
import { serviceSecret } from '../../db/repositories/secrets.js';
import { newSigningKeyAsync } from '../../crypto/self-signed.js';
import { recordAudit, type Actor } from '../audit.js';
import type { DatabaseExecutor, Queryable } from '../database.js';
import { checkWebhookUrl, safeLookup, type WebhookUrlRules } from '../webhook-deliveries.js';

/**
 * node-saml and its XML libraries, loaded on the first SAML request (about a hundred modules a
 * server never needs until an organization connects a SAML IdP; docs/decisions.md).
 */
let loaded: { saml: typeof import('@node-saml/node-saml'); xml: typeof import('@node-saml/node-saml/lib/xml.js') } | undefined;
const lib = () => {
  if (!loaded) {
    const require = createRequire(import.meta.url);
    loaded = { saml: require('@node-saml/node-saml'), xml: require('@node-saml/node-saml/lib/xml.js') };
  }
  return loaded;
};

/*
 * SAML 2.0 single sign-on, per organization (issue 55, item 2; CONTRACT.md section 11, "Single
 * sign-on", amended). The service provider (SP) side only, as a domain module the console's routes
 * call; @node-saml/node-saml checks every signature (XML and redirect-binding), this module never
 * does. What it adds around the library, because the library leaves it out or keeps it in memory:
 *
 * - the AuthnRequests sent live in the database (saml_requests), so that any process may receive
 *   the answer to a request another sent; a response's InResponseTo must name one, and the
 *   accepting transaction spends it, once;
 * - an assertion's id is recorded in the same transaction (saml_assertions_seen, primary key): an
 *   assertion is accepted once across processes, decided by the database, never by a timing;
 * - the recipient (SubjectConfirmationData/@Recipient = our ACS URL, in the signed assertion), the
 *   response's Destination, the assertion's issuer and a bearer confirmation naming the request are
 *   checked here: node-saml v5 checks none of them on an assertion;
 * - an IdP's LogoutRequest by the redirect binding must be signed (node-saml accepts one without).
 *
 * node-saml reads the system clock, so this module does too (no `now` parameter): the stored
 * requests' times and the library's window checks must agree.
 *
 * The API, for the console's routes (the merger wires them under /console/sso/saml/<org>/...):
 * - samlUrls(baseUrl, orgId): the URLs an IT administrator gives the IdP;
 * - spMetadataXml(db, orgId, baseUrl): our SP metadata (GET .../metadata), its key made at first;
 * - parseIdpMetadata(xml), fetchIdpMetadata(url): the IdP's metadata, pasted or fetched (SSRF-guarded);
 * - configureSamlIdp(db, orgId, input, actor, { baseUrl, allowPrivate }) / removeSamlIdp(db, orgId, actor) /
 *   getSamlSettings(db, orgId, baseUrl): the organization's IdP settings (audited as organization.updated);
 * - startSamlSignIn(db, orgId, baseUrl): the redirect to the IdP (GET .../start);
 * - consumeSamlResponse(db, orgId, baseUrl, { samlResponse }): the ACS (POST .../acs): the person's
 *   email, groups, NameID and session, or a typed refusal (SamlRefusal);
 * - handleSamlLogoutRequest(db, orgId, baseUrl, message): the IdP's single logout (GET or POST
 *   .../slo): which NameID and session to end, and the signed LogoutResponse redirect.
 */

/** How long an AuthnRequest may be answered. */
export const SAML_REQUEST_TTL_MS = 10 * 60_000;
/** The clock skew allowed between the IdP and us, both ways, on every time of an assertion. */
export const SAML_CLOCK_SKEW_MS = 60_000;
/** An IdP-sent LogoutRequest older than this (by its IssueInstant) is refused. */
export const SAML_LOGOUT_MAX_AGE_MS = 10 * 60_000;
/** The largest metadata document read, pasted or fetched. */
export const SAML_METADATA_MAX_BYTES = 1_000_000;
/** The largest SAMLResponse or SAMLRequest read (base64 as posted). */
const SAML_MESSAGE_MAX_CHARS = 512 * 1024;
const METADATA_FETCH_TIMEOUT_MS = 10_000;

const BINDING_REDIRECT = 'urn:oasis:names:tc:SAML:2.0:bindings:HTTP-Redirect';
const BEARER = 'urn:oasis:names:tc:SAML:2.0:cm:bearer';
const EMAIL_FORMAT = 'urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress';

/** Attribute names read for the email when the organization names none, in this order; then the NameID, if it is an address. */
export const DEFAULT_EMAIL_ATTRIBUTES = [
  'email',
  'mail',
  'emailAddress',
  'urn:oid:0.9.2342.19200300.100.1.3',
  'http://schemas.xmlsoap.org/ws/2005/05/identity/claims/emailaddress',
] as const;
/** Attribute names read for the groups when the organization names none. */
export const DEFAULT_GROUPS_ATTRIBUTES = ['groups', 'memberOf', 'http://schemas.microsoft.com/ws/2008/06/identity/claims/groups'] as const;

// ---------------------------------------------------------------------------------------------
// URLs and our SP metadata

export interface SamlUrls {
  /** Our SP's entity id (the audience of every assertion): its metadata's own URL. */
  entityId: string;
  metadataUrl: string;
  /** Assertion consumer service (HTTP-POST). */
  acsUrl: string;
  /** Single logout service (HTTP-Redirect and HTTP-POST). */
  sloUrl: string;
  /** Where a sign-in through this IdP starts (the console's route redirects to the IdP). */
  startUrl: string;
}

/** The organization's SAML URLs under `baseUrl` (consoleBaseUrl: PUBLIC_BASE_URL, never a Host header). */
export function samlUrls(baseUrl: string, orgId: string): SamlUrls {
  const root = `${baseUrl.replace(/\/+$/, '')}/console/sso/saml/${encodeURIComponent(orgId)}`;
  return { entityId: `${root}/metadata`, metadataUrl: `${root}/metadata`, acsUrl: `${root}/acs`, sloUrl: `${root}/slo`, startUrl: `${root}/start` };
}

/*
 * The SP's private key at rest: sealed like the other secrets the service keeps (src/domain/totp.ts):
 * AES-256-GCM under a key derived from the service secret 'saml_seal', bound to the organization.
 * `db copy`, backup and restore move service_secrets with the rows, so a copy opens it.
 */
const SEALED = 'sealed:v1:';
const sealKeys = new WeakMap<object, Promise<Buffer>>();
function sealKeyOf(db: Queryable): Promise<Buffer> {
  let key = sealKeys.get(db);
  if (!key) {
    key = serviceSecret(db, 'saml_seal').then((secret) => createHash('sha256').update('climate-pulse saml seal\0').update(secret).digest());
    key.catch(() => sealKeys.delete(db));
    sealKeys.set(db, key);
  }
  return key;
}
const binding = (orgId: string) => `saml-sp\0${orgId}`;
function seal(key: Buffer, orgId: string, secret: string): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  cipher.setAAD(Buffer.from(binding(orgId)));
  return SEALED + Buffer.concat([iv, cipher.update(secret, 'utf8'), cipher.final(), cipher.getAuthTag()]).toString('base64url');
}
export const SAML_SEAL_BROKEN = "The organization's SAML key does not open with this database's seal key (service secret saml_seal).";
function unseal(key: Buffer, orgId: string, stored: string): string {
  const bytes = Buffer.from(stored.slice(SEALED.length), 'base64url');
  try {
    if (!stored.startsWith(SEALED) || bytes.length < 29) throw new Error('not sealed');
    const decipher = createDecipheriv('aes-256-gcm', key, bytes.subarray(0, 12));
    decipher.setAAD(Buffer.from(binding(orgId)));
    decipher.setAuthTag(bytes.subarray(bytes.length - 16));
    return Buffer.concat([decipher.update(bytes.subarray(12, bytes.length - 16)), decipher.final()]).toString('utf8');
  } catch {
    throw new ApiError('internal_error', SAML_SEAL_BROKEN);
  }
}

const SP_CERT_YEARS = 10;

/** The organization's SAML row, its SP key made first when it has none; not_found for an unknown or deleted organization. */
async function providerWithKey(db: Queryable, orgId: string): Promise<SamlProviderRow> {
  const found = await findSamlProvider(db, orgId);
  if (found) return found;
  const now = new Date();
  const notAfter = new Date(now);
  notAfter.setUTCFullYear(notAfter.getUTCFullYear() + SP_CERT_YEARS);
  const made = await newSigningKeyAsync({ commonName: `Climate Pulse SAML ${orgId}`.slice(0, 64), notBefore: new Date(now.getTime() - 86_400_000), notAfter });
  await insertSpKeyIfMissing(db, orgId, seal(await sealKeyOf(db), orgId, made.privateKey), made.certificate, now);
  const row = await findSamlProvider(db, orgId); // another process's key, when it made one first
  if (!row) throw new ApiError('not_found', `no organization ${JSON.stringify(orgId)}`);
  return row;
}

/**
 * Our SP metadata for the organization (what GET /console/sso/saml/<org>/metadata serves, as
 * application/samlmetadata+xml): entity id, ACS (HTTP-POST), SLO, our signing certificate, and
 * WantAssertionsSigned. The SP key is made at the first call, so an IT administrator can register
 * us at the IdP before the IdP's metadata is given back.
 */
export async function spMetadataXml(db: Queryable, orgId: string, baseUrl: string): Promise<string> {
  const p = await providerWithKey(db, orgId);
  const urls = samlUrls(baseUrl, orgId);
  const saml = new (lib().saml.SAML)({
    issuer: urls.entityId,
    callbackUrl: urls.acsUrl,
    logoutCallbackUrl: urls.sloUrl,
    idpCert: p.spCertificate, // unused for metadata; the library requires one
    privateKey: unseal(await sealKeyOf(db), orgId, p.spPrivateKey),
    publicCert: p.spCertificate,
    signatureAlgorithm: 'sha256',
    wantAssertionsSigned: true,
    identifierFormat: null,
  });
  const xml = saml.generateServiceProviderMetadata(null, p.spCertificate);
  // node-saml lists the SLO by HTTP-POST only; the SLO URL takes the redirect binding too, and IdPs
  // that send LogoutRequests by redirect (most) look for it in the metadata.
  const post = /<SingleLogoutService Binding="urn:oasis:names:tc:SAML:2\.0:bindings:HTTP-POST" Location="([^"]*)"\/>/.exec(xml);
  if (!post) throw new Error('node-saml wrote SP metadata without its SingleLogoutService');
  return xml.replace(post[0], `<SingleLogoutService Binding="${BINDING_REDIRECT}" Location="${post[1]}"/>\n    ${post[0]}`);
}

// ---------------------------------------------------------------------------------------------
// The IdP's metadata

export interface IdpMetadata {
  entityId: string;
  /** SingleSignOnService, HTTP-Redirect binding. */
  ssoUrl: string;
  /** SingleLogoutService, HTTP-Redirect binding; null when the IdP offers none by redirect. */
  sloUrl: string | null;
  /** PEM certificates of its signing keys (KeyDescriptor use="signing" or without use). */
  certificates: string[];
}

const el = (node: Node, path: string) => lib().xml.xpath.selectElements(node, path);

/** The certificate as PEM, checked readable by node:crypto; null when it is not a certificate. */
function pemOf(base64: string): string | null {
  const body = base64.replace(/\s+/g, '');
  if (!/^[A-Za-z0-9+/]+=*$/.test(body)) return null;
  const pem = `-----BEGIN CERTIFICATE-----\n${body.match(/.{1,64}/g)!.join('\n')}\n-----END CERTIFICATE-----\n`;
  try {
    new X509Certificate(pem);
    return pem;
  } catch {
    return null;
  }
}

/** An IdP endpoint: https://, or http:// to loopback under allowPrivate (tests, a laptop). */
function endpointUrl(text: string, what: string, rules: WebhookUrlRules): string {
  let url: URL;
  try {
    url = new URL(text.trim());
  } catch {
    throw invalid(`the IdP metadata's ${what} is not a URL`);
  }
  const loopback = ['localhost', '127.0.0.1', '[::1]'].includes(url.hostname);
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && rules.allowPrivate && loopback)) {
    throw invalid(`the IdP metadata's ${what} must be https:// (got ${url.protocol})`);
  }
  if (url.username || url.password) throw invalid(`the IdP metadata's ${what} must not carry credentials`);
  return url.toString();
}

/** Refuses what the parsers must never see: a DOCTYPE (entity expansion) or an oversized document. */
function guardXml(xml: string, what: string, max: number): void {
  if (Buffer.byteLength(xml) > max) throw invalid(`the ${what} is larger than ${max} bytes`);
  if (/<!DOCTYPE/i.test(xml)) throw invalid(`the ${what} has a DOCTYPE, which is not read`);
}

/**
 * Reads an IdP's metadata: one EntityDescriptor with an IDPSSODescriptor for SAML 2.0, its
 * HTTP-Redirect SingleSignOnService, its HTTP-Redirect SingleLogoutService if any, and its signing
 * certificates (at least one). invalid_request, saying what is missing, otherwise.
 */
export async function parseIdpMetadata(xml: string, rules: WebhookUrlRules = {}): Promise<IdpMetadata> {
  guardXml(xml, 'IdP metadata', SAML_METADATA_MAX_BYTES);
  let doc: Document;
  try {
    doc = await lib().xml.parseDomFromString(xml);
  } catch (err) {
    throw invalid(`the IdP metadata is not XML: ${(err as Error).message.split('\n')[0]}`);
  }
  const md = 'urn:oasis:names:tc:SAML:2.0:metadata';
  const idps = el(doc, `//*[local-name()='EntityDescriptor' and namespace-uri()='${md}'][*[local-name()='IDPSSODescriptor' and namespace-uri()='${md}']]`);
  if (idps.length === 0) throw invalid('the IdP metadata has no EntityDescriptor with an IDPSSODescriptor (is it the metadata of the identity provider?)');
  if (idps.length > 1) throw invalid('the IdP metadata describes several identity providers; give the metadata of one');
  const entity = idps[0];
  const entityId = entity.getAttribute('entityID')?.trim();
  if (!entityId) throw invalid('the IdP metadata has no entityID');
  if (entityId.length > 1024) throw invalid('the IdP entityID is longer than 1024 characters');
  const descriptor = el(entity, `./*[local-name()='IDPSSODescriptor' and namespace-uri()='${md}']`).find((d) =>
    (d.getAttribute('protocolSupportEnumeration') ?? '').split(/\s+/).includes('urn:oasis:names:tc:SAML:2.0:protocol'),
  );
  if (!descriptor) throw invalid('the IdP metadata does not support SAML 2.0 (protocolSupportEnumeration)');
  const service = (name: string) =>
    el(descriptor, `./*[local-name()='${name}' and namespace-uri()='${md}']`)
      .find((s) => s.getAttribute('Binding') === BINDING_REDIRECT)
      ?.getAttribute('Location');
  const sso = service('SingleSignOnService');
  if (!sso) throw invalid('the IdP metadata has no SingleSignOnService with the HTTP-Redirect binding');
  const slo = service('SingleLogoutService');
  const certificates: string[] = [];
  for (const kd of el(descriptor, `./*[local-name()='KeyDescriptor' and namespace-uri()='${md}']`)) {
    const use = kd.getAttribute('use');
    if (use && use !== 'signing') continue;
    for (const c of el(kd, ".//*[local-name()='X509Certificate']")) {
      const pem = pemOf(c.textContent ?? '');
      if (!pem) throw invalid('the IdP metadata holds a signing certificate that cannot be read');
      if (!certificates.includes(pem)) certificates.push(pem);
    }
  }
  if (certificates.length === 0) throw invalid('the IdP metadata has no signing certificate (KeyDescriptor use="signing")');
  return {
    entityId,
    ssoUrl: endpointUrl(sso, 'SingleSignOnService', rules),
    sloUrl: slo ? endpointUrl(slo, 'SingleLogoutService', rules) : null,
    certificates,
  };
}

/**
 * GETs an IdP's metadata through the webhooks' SSRF guard (src/domain/webhook-deliveries.ts): the
 * same URL rule (https to a public host; an address in the URL judged there) and the same DNS
 * lookup (every address of the host judged, the socket connecting to a checked one), no redirect
 * followed, a timeout, and at most SAML_METADATA_MAX_BYTES read. invalid_request on any refusal.
 */
export async function fetchIdpMetadata(url: string, rules: WebhookUrlRules & { timeoutMs?: number } = {}): Promise<string> {
  let target: URL;
  try {
    target = checkWebhookUrl(url, rules);
  } catch (err) {
    throw invalid(`metadata URL: ${(err as Error).message.replace('webhooks go to public hosts only', 'metadata is fetched from public hosts only')}`);
  }
  const send = target.protocol === 'https:' ? httpsRequest : httpRequest;
  const signal = AbortSignal.timeout(rules.timeoutMs ?? METADATA_FETCH_TIMEOUT_MS);
  let res: IncomingMessage;
  try {
    res = await new Promise<IncomingMessage>((resolve, reject) => {
      const req = send(target, {
        method: 'GET',
        headers: { accept: 'application/samlmetadata+xml, application/xml, text/xml', 'user-agent': 'climate-pulse-saml/1' },
        lookup: safeLookup(rules),
        agent: false,
        signal,
      });
      req.once('response', resolve);
      req.once('error', reject);
      req.end();
    });
  } catch (err) {
    const e = err as NodeJS.ErrnoException;
    if (e.code === 'EADDRREFUSED') throw invalid(`metadata URL refused: ${e.message}; metadata is fetched from public hosts only`);
    if (signal.aborted) throw invalid('metadata URL: no answer in time');
    throw invalid(`metadata URL could not be fetched: ${e.code ?? e.message}`);
  }
  if (res.statusCode !== 200) {
    res.resume();
    throw invalid(
      `metadata URL answered HTTP ${res.statusCode}${res.statusCode && res.statusCode >= 300 && res.statusCode < 400 ? ' (redirects are not followed)' : ''}`,
    );
  }
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of res) {
      size += (chunk as Buffer).length;
      if (size > SAML_METADATA_MAX_BYTES) {
        res.destroy();
        throw invalid(`the IdP metadata is larger than ${SAML_METADATA_MAX_BYTES} bytes`);
      }
      chunks.push(chunk as Buffer);
    }
  } catch (err) {
    if (err instanceof ApiError) throw err;
    throw invalid('metadata URL: the answer was cut off');
  }
  return Buffer.concat(chunks).toString('utf8');
}

// ---------------------------------------------------------------------------------------------
// The organization's settings

export interface SamlSettingsInput {
  /** The IdP's metadata, pasted. Exactly one of metadataXml and metadataUrl. */
  metadataXml?: string;
  /** Where to fetch the IdP's metadata (SSRF-guarded); kept, to fetch it again later. */
  metadataUrl?: string;
  /** The attribute holding the email; null or absent: DEFAULT_EMAIL_ATTRIBUTES, then the NameID. */
  emailAttribute?: string | null;
  /** The attribute holding the groups; null or absent: DEFAULT_GROUPS_ATTRIBUTES. */
  groupsAttribute?: string | null;
}

export interface SamlCertificateView {
  subject: string;
  validTo: string;
  fingerprint256: string;
}

/** The organization's SAML settings as the console and the operator API show them (no private key). */
export interface SamlSettingsView {
  orgId: string;
  urls: SamlUrls;
  spCertificate: string;
  idp: {
    entityId: string;
    ssoUrl: string;
    sloUrl: string | null;
    certificates: SamlCertificateView[];
    metadataUrl: string | null;
  } | null;
  emailAttribute: string | null;
  groupsAttribute: string | null;
  updatedAt: string;
}

function certView(pem: string): SamlCertificateView {
  const c = new X509Certificate(pem);
  return { subject: c.subject, validTo: new Date(c.validTo).toISOString(), fingerprint256: c.fingerprint256 };
}

function view(p: SamlProviderRow, baseUrl: string): SamlSettingsView {
  return {
    orgId: p.orgId,
    urls: samlUrls(baseUrl, p.orgId),
    spCertificate: p.spCertificate,
    idp:
      p.idpEntityId && p.idpSsoUrl
        ? { entityId: p.idpEntityId, ssoUrl: p.idpSsoUrl, sloUrl: p.idpSloUrl, certificates: p.idpCertificates.map(certView), metadataUrl: p.metadataUrl }
        : null,
    emailAttribute: p.emailAttribute,
    groupsAttribute: p.groupsAttribute,
    updatedAt: p.updatedAt,
  };
}

function attributeName(v: string | null | undefined, what: string): string | null {
  if (v === undefined || v === null) return null;
  const t = v.trim();
  if (t === '') return null;
  // biome-ignore lint/suspicious/noControlCharactersInRegex: refusing control characters is the point
  if (t.length > 512 || /[\u0000-\u001f\u007f]/.test(t)) throw invalid(`${what} must be at most 512 characters, without control characters`);
  return t;
}

/** The organization's SAML settings, or null before its SP key was first made. */
export async function getSamlSettings(db: Queryable, orgId: string, baseUrl: string): Promise<SamlSettingsView | null> {
  const p = await findSamlProvider(db, orgId);
  return p ? view(p, baseUrl) : null;
}

export interface SamlChangeOptions {
  baseUrl: string;
  /** WEBHOOK_ALLOW_PRIVATE: metadata from loopback or private hosts, and http:// to loopback (tests, a laptop). */
  allowPrivate?: boolean;
}

/**
 * Connects (or replaces) the organization's identity provider from its metadata, pasted or fetched.
 * Makes the SP key when the organization has none. Audited as organization.updated (details: saml
 * 'connected', the IdP's entity id and metadata URL, never a key). invalid_request for unreadable
 * metadata or a refused URL; not_found for an unknown organization.
 */
export async function configureSamlIdp(
  db: DatabaseExecutor,
  orgId: string,
  input: SamlSettingsInput,
  actor: Actor,
  opts: SamlChangeOptions,
): Promise<SamlSettingsView> {
  const hasXml = typeof input.metadataXml === 'string' && input.metadataXml.trim() !== '';
  const hasUrl = typeof input.metadataUrl === 'string' && input.metadataUrl.trim() !== '';
  if (hasXml === hasUrl) throw invalid('give the IdP metadata either pasted (metadataXml) or by its URL (metadataUrl), one of the two');
  const emailAttribute = attributeName(input.emailAttribute, 'emailAttribute');
  const groupsAttribute = attributeName(input.groupsAttribute, 'groupsAttribute');
  const metadataUrl = hasUrl ? input.metadataUrl!.trim() : null;
  const xml = hasXml ? input.metadataXml!.trim() : await fetchIdpMetadata(metadataUrl!, { allowPrivate: opts.allowPrivate });
  const idp = await parseIdpMetadata(xml, { allowPrivate: opts.allowPrivate });
  await providerWithKey(db, orgId);
  return db.transaction(async (tx) => {
    const row = await updateIdpSettings(
      tx,
      orgId,
      {
        idpEntityId: idp.entityId,
        idpSsoUrl: idp.ssoUrl,
        idpSloUrl: idp.sloUrl,
        idpCertificates: idp.certificates,
        metadataXml: xml,
        metadataUrl,
        emailAttribute,
        groupsAttribute,
      },
      new Date(),
    );
    if (!row) throw new ApiError('not_found', `no organization ${JSON.stringify(orgId)}`);
    await recordAudit(
      tx,
      orgId,
      actor,
      { action: 'organization.updated', target: { kind: 'organization', id: orgId }, details: { saml: 'connected', idpEntityId: idp.entityId, metadataUrl } },
      new Date(),
    );
    return view(row, opts.baseUrl);
  });
}

/** Disconnects the organization's identity provider (audited as organization.updated, saml 'disconnected'); false when none was connected. */
export async function removeSamlIdp(db: DatabaseExecutor, orgId: string, actor: Actor): Promise<boolean> {
  return db.transaction(async (tx) => {
    const removed = await clearIdpSettings(tx, orgId, new Date());
    if (removed) {
      await recordAudit(
        tx,
        orgId,
        actor,
        { action: 'organization.updated', target: { kind: 'organization', id: orgId }, details: { saml: 'disconnected' } },
        new Date(),
      );
    }
    return removed;
  });
}

// ---------------------------------------------------------------------------------------------
// Sign-in

type Configured = SamlProviderRow & { idpEntityId: string; idpSsoUrl: string };
const isConfigured = (p: SamlProviderRow | null): p is Configured => Boolean(p?.idpEntityId && p.idpSsoUrl && p.idpCertificates.length > 0);

/**
 * node-saml's request cache, in the database: a request saved by one process is found by every
 * other. `removeAsync` does nothing: the request is spent in the transaction that accepts the
 * assertion (consumeSamlResponse), and a refused response leaves it for a correct one.
 */
function requestStore(db: Queryable, orgId: string, failures: unknown[]): CacheProvider {
  return {
    async saveAsync(key, value) {
      const now = new Date();
      await insertSamlRequest(db, orgId, key, now, new Date(now.getTime() + SAML_REQUEST_TTL_MS));
      return { value, createdAt: now.getTime() };
    },
    async getAsync(key) {
      try {
        return await findSamlRequest(db, orgId, key, new Date());
      } catch (err) {
        failures.push(err); // the database's failure, not the message's: it is thrown, never a refusal
        throw err;
      }
    },
    removeAsync: async () => null,
  };
}

/** Runs a node-saml check: its refusal becomes a Refused; a failure of our database is thrown as it is. */
async function check<T>(failures: unknown[], run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (err) {
    if (failures.length > 0) throw failures[0];
    throw new Refused(refusalOf(err), err instanceof Error ? err.message.slice(0, 300) : String(err));
  }
}

async function samlFor(db: Queryable, p: Configured, baseUrl: string, ids?: string[], failures: unknown[] = []): Promise<SAML> {
  const urls = samlUrls(baseUrl, p.orgId);
  return new (lib().saml.SAML)({
    issuer: urls.entityId,
    audience: urls.entityId,
    callbackUrl: urls.acsUrl,
    logoutCallbackUrl: urls.sloUrl,
    entryPoint: p.idpSsoUrl,
    logoutUrl: p.idpSloUrl ?? p.idpSsoUrl,
    idpCert: p.idpCertificates,
    idpIssuer: p.idpEntityId,
    privateKey: unseal(await sealKeyOf(db), p.orgId, p.spPrivateKey),
    publicCert: p.spCertificate,
    signatureAlgorithm: 'sha256',
    digestAlgorithm: 'sha256',
    wantAssertionsSigned: true,
    wantAuthnResponseSigned: false,
    acceptedClockSkewMs: SAML_CLOCK_SKEW_MS,
    validateInResponseTo: lib().saml.ValidateInResponseTo.always,
    requestIdExpirationPeriodMs: SAML_REQUEST_TTL_MS,
    cacheProvider: requestStore(db, p.orgId, failures),
    identifierFormat: null,
    disableRequestedAuthnContext: true,
    generateUniqueId: () => {
      const id = `_${randomBytes(20).toString('hex')}`;
      ids?.push(id);
      return id;
    },
  });
}

/** Thrown by the SAML entry points for an organization without a connected IdP. */
export const samlNotConfigured = (orgId: string) => new ApiError('not_found', `no SAML identity provider is connected for ${JSON.stringify(orgId)}`);

/**
 * Starts an SP-initiated sign-in: a signed AuthnRequest (HTTP-Redirect binding) whose id is stored
 * (saml_requests) for SAML_REQUEST_TTL_MS. The caller redirects the browser to `redirectUrl`;
 * `relayState` (at most 80 bytes, SAML's limit) comes back with the response. not_found when the
 * organization has no IdP connected.
 */
export async function startSamlSignIn(
  db: Queryable,
  orgId: string,
  baseUrl: string,
  opts: { relayState?: string } = {},
): Promise<{ redirectUrl: string; requestId: string; expiresAt: string }> {
  if (opts.relayState !== undefined && Buffer.byteLength(opts.relayState) > 80) throw invalid('relayState is longer than 80 bytes');
  const p = await findSamlProvider(db, orgId);
  if (!isConfigured(p)) throw samlNotConfigured(orgId);
  const ids: string[] = [];
  const saml = await samlFor(db, p, baseUrl, ids);
  const redirectUrl = await saml.getAuthorizeUrlAsync(opts.relayState ?? '', undefined, {});
  return { redirectUrl, requestId: ids[0], expiresAt: new Date(Date.now() + SAML_REQUEST_TTL_MS).toISOString() };
}

/** Why a SAML message was refused: a closed list, for the caller's page and log (never shown raw to the person). */
export type SamlRefusal =
  /** The organization has no IdP connected. */
  | 'not_configured'
  /** Not base64, not XML, a DOCTYPE, no assertion, or a shape node-saml refuses. */
  | 'malformed'
  /** The IdP answered with a failure status (the person cancelled, or was not allowed). */
  | 'idp_refused'
  /** The assertion is not signed, signed by another key, or its signature was wrapped (XSW). */
  | 'bad_signature'
  /** The signed assertion names another issuer than the connected IdP. */
  | 'wrong_issuer'
  /** The assertion's audience is not our SP's entity id. */
  | 'wrong_audience'
  /** No bearer SubjectConfirmation of the assertion names our ACS URL as its Recipient. */
  | 'wrong_recipient'
  /** The response's (or the LogoutRequest's) Destination is not our URL. */
  | 'wrong_destination'
  /** Outside its time window (NotOnOrAfter passed, with the skew allowed). */
  | 'expired'
  /** Not valid yet (NotBefore ahead, beyond the skew allowed). */
  | 'not_yet_valid'
  /** InResponseTo names no request we sent and still wait for (unknown, expired, or spent by another assertion). */
  | 'unknown_request'
  /** This assertion was accepted before. */
  | 'replayed'
  /** No email address in the configured attribute, the usual ones, or the NameID. */
  | 'no_email';

/** The person the IdP vouches for, from the signed assertion. */
export interface SamlIdentity {
  /** Lower-cased address. */
  email: string;
  /** The groups attribute's values (empty when there is none). */
  groups: string[];
  nameId: string;
  nameIdFormat: string | null;
  /** The IdP's session, for its single logout; null when the assertion names none. */
  sessionIndex: string | null;
  /** When the IdP's session ends (AuthnStatement/@SessionNotOnOrAfter); null when it does not say. */
  sessionNotOnOrAfter: string | null;
  /** The AuthnRequest answered (spent now). */
  requestId: string;
  assertionId: string;
}

export type SamlSignInResult = { ok: true; identity: SamlIdentity } | { ok: false; refusal: SamlRefusal; detail: string };

/** A refusal inside this module (never thrown out of it: the entry points answer it as a result). */
class Refused extends ApiError {
  constructor(
    readonly refusal: SamlRefusal,
    detail: string,
  ) {
    super('invalid_request', detail);
  }
}

/** node-saml's error messages, sorted into refusals (the library has no error codes). */
function refusalOf(err: unknown): SamlRefusal {
  if (err instanceof Refused) return err.refusal;
  if (err instanceof lib().saml.SamlStatusError) return 'idp_refused';
  const m = err instanceof Error ? err.message : String(err);
  if (/InResponseTo/i.test(m)) return 'unknown_request';
  if (/not yet valid/i.test(m)) return 'not_yet_valid';
  if (/expired|No valid subject confirmation/i.test(m)) return 'expired';
  if (/audience/i.test(m)) return 'wrong_audience';
  if (/signature|Referenced node|ID cannot refer|signed references|ref URI/i.test(m)) return 'bad_signature';
  return 'malformed';
}

type Xml2Js = { $?: Record<string, string>; _?: string; [child: string]: unknown };
const kids = (node: Xml2Js | undefined, name: string): Xml2Js[] => (node && Array.isArray(node[name]) ? (node[name] as Xml2Js[]) : []);
const attr = (node: Xml2Js | undefined, name: string): string | undefined => node?.$?.[name];
const text = (node: Xml2Js | undefined): string | undefined => (typeof node === 'string' ? node : node?._);

function strings(v: unknown): string[] {
  const list = Array.isArray(v) ? v : v === undefined || v === null ? [] : [v];
  return list
    .flatMap((x) => (typeof x === 'string' ? [x.trim()] : typeof (x as Xml2Js)?._ === 'string' ? [(x as Xml2Js)._!.trim()] : []))
    .filter((s) => s !== '');
}

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

/** A base64 SAML message decoded, with the guards of every message read. */
function decodeMessage(b64: unknown, what: string): string {
  if (typeof b64 !== 'string' || b64.length === 0) throw new Refused('malformed', `no ${what}`);
  if (b64.length > SAML_MESSAGE_MAX_CHARS) throw new Refused('malformed', `the ${what} is too large`);
  if (!/^[A-Za-z0-9+/=\s]+$/.test(b64)) throw new Refused('malformed', `the ${what} is not base64`);
  return Buffer.from(b64, 'base64').toString('utf8');
}

function rootAttribute(xml: string, name: string): Promise<string | null> {
  return lib()
    .xml.parseDomFromString(xml)
    .then((d) => d.documentElement.getAttribute(name));
}

/**
 * The ACS: checks a POSTed SAMLResponse and, when everything holds, spends its request and records
 * its assertion, in one transaction, and answers the person it names. Checked: a signed assertion
 * (node-saml, wantAssertionsSigned; a signed response alone is not enough), one assertion only,
 * the IdP's certificate(s), the issuer, the audience (our entity id), the time window (with
 * SAML_CLOCK_SKEW_MS), a bearer confirmation whose Recipient is our ACS URL and whose InResponseTo
 * is a request we sent and still wait for, the response's Destination when it has one, and the
 * assertion id never accepted before (on any process). `expectedRequestId`, when the caller bound
 * the request to the browser, must be the request answered.
 */
export async function consumeSamlResponse(
  db: DatabaseExecutor,
  orgId: string,
  baseUrl: string,
  input: { samlResponse: unknown; expectedRequestId?: string },
): Promise<SamlSignInResult> {
  try {
    const p = await findSamlProvider(db, orgId);
    if (!isConfigured(p)) throw new Refused('not_configured', 'no SAML identity provider is connected');
    const xml = decodeMessage(input.samlResponse, 'SAMLResponse');
    if (/<!DOCTYPE/i.test(xml)) throw new Refused('malformed', 'the SAMLResponse has a DOCTYPE');
    const urls = samlUrls(baseUrl, orgId);
    await purgeExpiredSaml(db, orgId, new Date());
    const failures: unknown[] = [];
    const saml = await samlFor(db, p, baseUrl, undefined, failures);
    const { profile } = await check(failures, () => saml.validatePostResponseAsync({ SAMLResponse: input.samlResponse as string }));
    if (!profile) throw new Refused('malformed', 'no assertion');
    const { expiresAt, ...identity } = await checkAssertion(profile, p, urls, xml, input.expectedRequestId);
    // One transaction: the assertion is recorded and its request spent together, or neither.
    await db.transaction(async (tx) => {
      const now = new Date();
      if (!(await recordSeenAssertion(tx, orgId, identity.assertionId, now, expiresAt))) throw new Refused('replayed', 'this assertion was accepted before');
      if (!(await spendSamlRequest(tx, orgId, identity.requestId, now))) throw new Refused('unknown_request', 'the request was answered already');
    });
    return { ok: true, identity };
  } catch (err) {
    if (err instanceof Refused) return { ok: false, refusal: err.refusal, detail: err.message };
    throw err;
  }
}

/** The checks node-saml leaves to us, on the assertion it verified (never on the unsigned envelope, but for its Destination). */
async function checkAssertion(
  profile: Profile,
  p: Configured,
  urls: SamlUrls,
  responseXml: string,
  expectedRequestId: string | undefined,
): Promise<SamlIdentity & { expiresAt: Date }> {
  const assertion = (profile.getAssertion?.() as { Assertion?: Xml2Js } | undefined)?.Assertion;
  if (!assertion) throw new Refused('malformed', 'no signed assertion');
  const assertionId = attr(assertion, 'ID');
  if (!assertionId || assertionId.length > 256) throw new Refused('malformed', 'the assertion has no usable ID');
  const issuer = text(kids(assertion, 'Issuer')[0])?.trim();
  if (issuer !== p.idpEntityId) throw new Refused('wrong_issuer', `the assertion's issuer is not ${p.idpEntityId}`);
  const destination = await rootAttribute(responseXml, 'Destination');
  if (destination && destination !== urls.acsUrl) throw new Refused('wrong_destination', `the response's Destination is not ${urls.acsUrl}`);
  const inResponseTo = typeof profile.inResponseTo === 'string' ? profile.inResponseTo : null;
  if (!inResponseTo) throw new Refused('unknown_request', 'the response answers no request (IdP-initiated sign-in is not accepted)');
  if (expectedRequestId !== undefined && expectedRequestId !== inResponseTo) throw new Refused('unknown_request', 'the response answers another request');
  const subject = kids(assertion, 'Subject')[0];
  const now = Date.now();
  const bearer = kids(subject, 'SubjectConfirmation')
    .filter((c) => attr(c, 'Method') === BEARER)
    .map((c) => kids(c, 'SubjectConfirmationData')[0])
    .filter((d): d is Xml2Js => Boolean(d));
  if (bearer.length === 0) throw new Refused('wrong_recipient', 'the assertion has no bearer SubjectConfirmation');
  const forUs = bearer.filter((d) => attr(d, 'Recipient') === urls.acsUrl);
  if (forUs.length === 0) throw new Refused('wrong_recipient', `no bearer confirmation names ${urls.acsUrl} as its Recipient`);
  const confirmation = forUs.find((d) => attr(d, 'InResponseTo') === inResponseTo);
  if (!confirmation) throw new Refused('unknown_request', "the bearer confirmation's InResponseTo is not the response's");
  const notOnOrAfter = Date.parse(attr(confirmation, 'NotOnOrAfter') ?? '');
  if (!Number.isFinite(notOnOrAfter)) throw new Refused('malformed', 'the bearer confirmation has no NotOnOrAfter');
  if (now - SAML_CLOCK_SKEW_MS >= notOnOrAfter) throw new Refused('expired', 'the bearer confirmation has expired');
  const conditionsEnd = Date.parse(attr(kids(assertion, 'Conditions')[0], 'NotOnOrAfter') ?? '');
  const expiresAt = new Date(Math.max(notOnOrAfter, Number.isFinite(conditionsEnd) ? conditionsEnd : 0) + SAML_CLOCK_SKEW_MS);

  const attributes = (profile.attributes ?? {}) as Record<string, unknown>;
  const nameIdNode = kids(subject, 'NameID')[0];
  const nameId = (text(nameIdNode) ?? '').trim();
  if (!nameId) throw new Refused('malformed', 'the assertion has no NameID');
  const nameIdFormat = attr(nameIdNode, 'Format') ?? null;
  const emailNames = p.emailAttribute ? [p.emailAttribute] : [...DEFAULT_EMAIL_ATTRIBUTES];
  let email = emailNames.flatMap((n) => strings(attributes[n])).find((v) => EMAIL.test(v));
  if (!email && !p.emailAttribute && (nameIdFormat === EMAIL_FORMAT || EMAIL.test(nameId)) && EMAIL.test(nameId)) email = nameId;
  if (!email || email.length > 254) throw new Refused('no_email', `no email address in ${p.emailAttribute ?? 'the usual attributes or the NameID'}`);
  const groupNames = p.groupsAttribute ? [p.groupsAttribute] : [...DEFAULT_GROUPS_ATTRIBUTES];
  const groups = [...new Set(groupNames.flatMap((n) => strings(attributes[n])))];
  const authn = kids(assertion, 'AuthnStatement')[0];
  const sessionEnd = Date.parse(attr(authn, 'SessionNotOnOrAfter') ?? '');
  return {
    email: email.toLowerCase(),
    groups,
    nameId,
    nameIdFormat,
    sessionIndex: attr(authn, 'SessionIndex') ?? null,
    sessionNotOnOrAfter: Number.isFinite(sessionEnd) ? new Date(sessionEnd).toISOString() : null,
    requestId: inResponseTo,
    assertionId,
    expiresAt,
  };
}

// ---------------------------------------------------------------------------------------------
// Single logout sent by the IdP

/** An IdP's LogoutRequest as it arrived: by redirect (the query, parsed and as sent) or by POST (the form's fields). */
export type SamlLogoutMessage = { query: Record<string, string | undefined>; rawQuery: string } | { body: Record<string, string | undefined> };

export type SamlLogoutResult =
  | {
      ok: true;
      /** End the sessions of this NameID (of this IdP session only, when sessionIndex is set). */
      nameId: string;
      sessionIndex: string | null;
      /** The signed LogoutResponse to redirect the browser to; null when the IdP has no SLO URL by redirect. */
      responseRedirectUrl: string | null;
    }
  | { ok: false; refusal: SamlRefusal; detail: string };

/**
 * The SLO endpoint: an IdP-sent LogoutRequest, signed (redirect: the query's Signature; POST: the
 * XML signature), from the connected IdP, addressed to our SLO URL when it says where, and issued
 * within SAML_LOGOUT_MAX_AGE_MS. Answers whom to sign out and the signed LogoutResponse redirect.
 * A LogoutResponse (to a logout we started) is not expected: we start none.
 */
export async function handleSamlLogoutRequest(db: Queryable, orgId: string, baseUrl: string, message: SamlLogoutMessage): Promise<SamlLogoutResult> {
  try {
    const p = await findSamlProvider(db, orgId);
    if (!isConfigured(p)) throw new Refused('not_configured', 'no SAML identity provider is connected');
    const saml = await samlFor(db, p, baseUrl);
    const urls = samlUrls(baseUrl, orgId);
    let xml: string;
    let relayState: string | undefined;
    let result: { profile: Profile | null; loggedOut: boolean };
    if ('query' in message) {
      const q = message.query;
      if (!q.SAMLRequest) throw new Refused('malformed', 'no SAMLRequest');
      if (!q.Signature || !q.SigAlg) throw new Refused('bad_signature', 'the LogoutRequest is not signed');
      const raw = decodeMessage(q.SAMLRequest, 'SAMLRequest');
      try {
        xml = inflateRawSync(Buffer.from(q.SAMLRequest, 'base64'), { maxOutputLength: SAML_MESSAGE_MAX_CHARS }).toString('utf8');
      } catch {
        throw new Refused('malformed', `the SAMLRequest does not inflate (${raw.length} bytes)`);
      }
      if (/<!DOCTYPE/i.test(xml)) throw new Refused('malformed', 'the SAMLRequest has a DOCTYPE');
      relayState = q.RelayState;
      result = await check([], () => saml.validateRedirectAsync(q as Record<string, string>, message.rawQuery));
    } else {
      xml = decodeMessage(message.body.SAMLRequest, 'SAMLRequest');
      if (/<!DOCTYPE/i.test(xml)) throw new Refused('malformed', 'the SAMLRequest has a DOCTYPE');
      relayState = message.body.RelayState;
      result = await check([], () => saml.validatePostRequestAsync({ SAMLRequest: message.body.SAMLRequest! }));
    }
    const profile = result.profile;
    if (!profile || !result.loggedOut || typeof profile.ID !== 'string') throw new Refused('malformed', 'not a LogoutRequest');
    const root = (await check([], () => lib().xml.parseDomFromString(xml))).documentElement;
    if (root.localName !== 'LogoutRequest') throw new Refused('malformed', 'not a LogoutRequest');
    const destination = root.getAttribute('Destination');
    if (destination && destination !== urls.sloUrl) throw new Refused('wrong_destination', `the LogoutRequest's Destination is not ${urls.sloUrl}`);
    const issued = Date.parse(root.getAttribute('IssueInstant') ?? '');
    if (!Number.isFinite(issued)) throw new Refused('malformed', 'the LogoutRequest has no IssueInstant');
    if (Date.now() - issued > SAML_LOGOUT_MAX_AGE_MS + SAML_CLOCK_SKEW_MS) throw new Refused('expired', 'the LogoutRequest is too old');
    if (issued - Date.now() > SAML_CLOCK_SKEW_MS) throw new Refused('not_yet_valid', 'the LogoutRequest is issued in the future');
    const responseRedirectUrl = p.idpSloUrl ? await saml.getLogoutResponseUrlAsync(profile, relayState ?? '', {}, true) : null;
    return { ok: true, nameId: profile.nameID, sessionIndex: typeof profile.sessionIndex === 'string' ? profile.sessionIndex : null, responseRedirectUrl };
  } catch (err) {
    if (err instanceof Refused) return { ok: false, refusal: err.refusal, detail: err.message };
    throw err;
  }
}
