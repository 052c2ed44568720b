import { createPublicKey, verify } from 'node:crypto';
import * as samlify from 'samlify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql, type DatabaseExecutor } from '../../src/db/executor.js';
import { PgExecutor } from '../../src/db/pg.js';
import { operatorActor } from '../../src/domain/audit.js';
import { createOrganization, deleteOrganization } from '../../src/domain/orgs.js';
import {
  configureSamlIdp,
  consumeSamlResponse,
  fetchIdpMetadata,
  getSamlSettings,
  handleSamlLogoutRequest,
  parseIdpMetadata,
  removeSamlIdp,
  samlUrls,
  spMetadataXml,
  startSamlSignIn,
  type SamlSignInResult,
} from '../../src/domain/sso/saml.js';
import { createTestDatabase, TEST_DATABASE_URL, type TestDatabase } from '../helpers/db.js';
import { runSamlChild, startSamlIdp, type TestIdp } from '../helpers/saml-idp.js';

/**
 * SAML 2.0 as an adversary tries it (issue 55, items 2 and 7): a real IdP made with samlify
 * (test/helpers/saml-idp.ts) signs what each test chooses, and src/domain/sso/saml.ts, on
 * @node-saml/node-saml, accepts a correct response once and refuses, each with its reason: an
 * unsigned assertion, a signed response around an unsigned assertion, wrapped signatures (XSW), a
 * replay (on this connection, on a second executor, in a second process, and by a race), an
 * expired or future assertion, another audience, recipient or destination, an unknown or spent
 * InResponseTo, another signing key and another issuer. A refused response writes nothing: its
 * request stays open for a correct one. Then single logout, and the IdP's metadata (pasted,
 * fetched, and the SSRF guard on its URL).
 */
const OPERATOR = operatorActor('203.0.113.9');
const ORG = 'org_saml';
const BASE = 'https://pulse.example';
const URLS = samlUrls(BASE, ORG);
const MIN = 60_000;

let t: TestDatabase;
let db: DatabaseExecutor;
let idp: TestIdp;

async function newRequest(relayState?: string): Promise<string> {
  const started = await startSamlSignIn(db, ORG, BASE, { relayState });
  return (await idp.readAuthnRequest(started.redirectUrl)).id;
}
const consume = (samlResponse: string, on: DatabaseExecutor = db, expectedRequestId?: string) =>
  consumeSamlResponse(on, ORG, BASE, { samlResponse, expectedRequestId });
const refusal = (r: SamlSignInResult) => (r.ok ? 'accepted' : r.refusal);
const b64 = (xml: string) => Buffer.from(xml).toString('base64');

async function requestRow(id: string) {
  const [r] = await db.query<{ spent: boolean }>(sql('t.saml.req', `SELECT spent_at IS NOT NULL AS spent FROM saml_requests WHERE org_id = $1 AND id = $2`), [
    ORG,
    id,
  ]);
  return r ?? null;
}
async function seenCount(): Promise<number> {
  const [r] = await db.query<{ n: number }>(sql('t.saml.seen', `SELECT count(*)::int AS n FROM saml_assertions_seen WHERE org_id = $1`), [ORG]);
  return r.n;
}

beforeAll(async () => {
  t = await createTestDatabase();
  db = t.db;
  await createOrganization(db, { id: ORG, name: 'SAML Co', plan: 'business' }, operatorActor(), new Date());
  await createOrganization(db, { id: 'org_plain', name: 'No SSO', plan: 'business' }, operatorActor(), new Date());
  idp = startSamlIdp();
  await idp.listen();
  idp.trust(await spMetadataXml(db, ORG, BASE));
  await configureSamlIdp(db, ORG, { metadataXml: idp.metadataXml() }, OPERATOR, { baseUrl: BASE, allowPrivate: true });
});

afterAll(async () => {
  await idp?.close();
  await t?.close();
});

describe('our service provider', () => {
  it('publishes its metadata: entity id, ACS, SLO by both bindings, signed requests, signed assertions wanted, and one key kept', async () => {
    const xml = await spMetadataXml(db, ORG, BASE);
    expect(xml).toContain(`entityID="${BASE}/console/sso/saml/${ORG}/metadata"`);
    expect(xml).toContain('AuthnRequestsSigned="true" WantAssertionsSigned="true"');
    expect(xml).toContain(
      `<AssertionConsumerService index="1" isDefault="true" Binding="urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST" Location="${URLS.acsUrl}"/>`,
    );
    expect(xml).toContain(`<SingleLogoutService Binding="urn:oasis:names:tc:SAML:2.0:bindings:HTTP-Redirect" Location="${URLS.sloUrl}"/>`);
    expect(xml).toContain(`<SingleLogoutService Binding="urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST" Location="${URLS.sloUrl}"/>`);
    const settings = (await getSamlSettings(db, ORG, BASE))!;
    const body = settings.spCertificate.replace(/-----(BEGIN|END) CERTIFICATE-----|\s+/g, '');
    expect(xml.replace(/\s+/g, '')).toContain(`<ds:X509Certificate>${body}</ds:X509Certificate>`);
    expect((await spMetadataXml(db, ORG, BASE)).replace(/ ID="[^"]+"/, '')).toBe(xml.replace(/ ID="[^"]+"/, ''));
    // The private key is sealed at rest.
    const [row] = await db.query<{ k: string }>(sql('t.saml.key', `SELECT sp_private_key AS k FROM saml_providers WHERE org_id = $1`), [ORG]);
    expect(row.k).toMatch(/^sealed:v1:[A-Za-z0-9_-]+$/);
    expect(row.k).not.toContain('PRIVATE KEY');
    expect(settings.idp).toEqual({
      entityId: idp.entityId,
      ssoUrl: `${idp.baseUrl}/sso`,
      sloUrl: `${idp.baseUrl}/slo`,
      certificates: [expect.objectContaining({ subject: 'CN=Test IdP' })],
      metadataUrl: null,
    });
  });

  it('sends a signed AuthnRequest (the IdP checks it) to the IdP, for our ACS, and stores its id', async () => {
    const started = await startSamlSignIn(db, ORG, BASE, { relayState: '/console/overview' });
    expect(started.redirectUrl.startsWith(`${idp.baseUrl}/sso?SAMLRequest=`)).toBe(true);
    const url = new URL(started.redirectUrl);
    expect(url.searchParams.get('SigAlg')).toBe('http://www.w3.org/2001/04/xmldsig-more#rsa-sha256');
    const read = await idp.readAuthnRequest(started.redirectUrl);
    expect(read.id).toBe(started.requestId);
    expect(read.relayState).toBe('/console/overview');
    expect(read.xml).toContain(`AssertionConsumerServiceURL="${URLS.acsUrl}"`);
    expect(read.xml).toContain(`<saml:Issuer xmlns:saml="urn:oasis:names:tc:SAML:2.0:assertion">${URLS.entityId}</saml:Issuer>`);
    expect(await requestRow(started.requestId)).toEqual({ spent: false });
    // A tampered request fails the IdP's signature check.
    url.searchParams.set('RelayState', '/console/elsewhere');
    await expect(idp.readAuthnRequest(url.toString())).rejects.toThrow('ERR_FAILED_MESSAGE_SIGNATURE_VERIFICATION');
    await expect(startSamlSignIn(db, 'org_plain', BASE)).rejects.toMatchObject({ code: 'not_found' });
    await expect(startSamlSignIn(db, ORG, BASE, { relayState: 'x'.repeat(81) })).rejects.toMatchObject({ code: 'invalid_request' });
  });
});

describe('a correct response', () => {
  it('is accepted once: the person, their groups and IdP session; the request spent and the assertion recorded', async () => {
    const id = await newRequest();
    const seen = await seenCount();
    const end = Date.now() + 8 * 3600e3;
    const response = idp.response({
      inResponseTo: id,
      email: 'Ada@Acme.test',
      groups: ['pulse-admins', 'team-web'],
      assertionId: '_assertion_one',
      sessionIndex: '_idp_session_1',
      sessionNotOnOrAfter: end,
    });
    expect(await consume(response)).toEqual({
      ok: true,
      identity: {
        email: 'ada@acme.test',
        groups: ['pulse-admins', 'team-web'],
        nameId: 'Ada@Acme.test',
        nameIdFormat: 'urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress',
        sessionIndex: '_idp_session_1',
        sessionNotOnOrAfter: new Date(end).toISOString(),
        requestId: id,
        assertionId: '_assertion_one',
      },
    });
    expect(await requestRow(id)).toEqual({ spent: true });
    expect(await seenCount()).toBe(seen + 1);
    // The same response again: a replay.
    expect(await consume(response)).toMatchObject({ ok: false, refusal: 'replayed' });
  });

  it("samlify's own login response (its template and signing) is accepted", async () => {
    const id = await newRequest();
    const r = await consume(await idp.standardResponse(id, 'bob@acme.test'));
    expect(r).toMatchObject({ ok: true, identity: { email: 'bob@acme.test', groups: [], requestId: id } });
  });

  it('the browser binding: a response to another request than the one the browser started is refused', async () => {
    const mine = await newRequest();
    const theirs = await newRequest();
    const r = await consume(idp.response({ inResponseTo: theirs }), db, mine);
    expect(refusal(r)).toBe('unknown_request');
    expect(await requestRow(theirs)).toEqual({ spent: false });
  });
});

describe('refused, each for its reason, and nothing written', () => {
  /** The refusal of `make(requestId)`; then the request is still open: a correct response to it is accepted. */
  async function refusedThenOpen(make: (id: string) => string | Promise<string>): Promise<string> {
    const id = await newRequest();
    const seen = await seenCount();
    const r = await consume(await make(id));
    expect(await seenCount()).toBe(seen);
    expect(await requestRow(id)).toEqual({ spent: false });
    expect(refusal(await consume(idp.response({ inResponseTo: id })))).toBe('accepted');
    return refusal(r);
  }

  it('an unsigned assertion (nothing signed)', async () => {
    expect(await refusedThenOpen((id) => idp.response({ inResponseTo: id, signAssertion: false }))).toBe('bad_signature');
  });

  it('a signed response around an unsigned assertion (signed assertions are required)', async () => {
    expect(await refusedThenOpen((id) => idp.response({ inResponseTo: id, signAssertion: false, signResponse: true }))).toBe('bad_signature');
  });

  it('a signed assertion whose content was changed after signing', async () => {
    expect(
      await refusedThenOpen((id) =>
        b64(
          idp
            .sign(idp.responseXml({ inResponseTo: id, email: 'ada@acme.test' }), { assertion: true, response: false })
            .replace('ada@acme.test', 'eve@acme.test'),
        ),
      ),
    ).toBe('bad_signature');
  });

  describe('XML signature wrapping (XSW)', () => {
    /** A genuine response for a harmless person, signed, and an evil assertion for the attacker, unsigned. */
    function parts(id: string) {
      const signed = idp.sign(idp.responseXml({ inResponseTo: id, email: 'low@acme.test', assertionId: '_genuine' }), { assertion: true, response: false });
      const evil = idp.responseXml({ inResponseTo: id, email: 'root@acme.test', assertionId: '_evil' });
      const assertionOf = (xml: string) => /<saml:Assertion[\s\S]*<\/saml:Assertion>/.exec(xml)![0];
      return { signed, signedAssertion: assertionOf(signed), evilAssertion: assertionOf(evil) };
    }

    it('the signed assertion moved under an unsigned envelope (Extensions), an unsigned one in its place', async () => {
      expect(
        await refusedThenOpen((id) => {
          const p = parts(id);
          return b64(p.signed.replace(p.signedAssertion, `<samlp:Extensions>${p.signedAssertion}</samlp:Extensions>${p.evilAssertion}`));
        }),
      ).toBe('bad_signature');
    });

    it('a second, unsigned assertion injected beside the signed one (before or after it)', async () => {
      for (const place of ['before', 'after'] as const) {
        expect(
          await refusedThenOpen((id) => {
            const p = parts(id);
            return b64(p.signed.replace(p.signedAssertion, place === 'before' ? p.evilAssertion + p.signedAssertion : p.signedAssertion + p.evilAssertion));
          }),
        ).toBe('bad_signature');
      }
    });

    it('an evil assertion carrying the genuine signature, the signed assertion hidden inside it (Advice)', async () => {
      expect(
        await refusedThenOpen((id) => {
          const p = parts(id);
          const signature = /<ds:Signature[\s\S]*<\/ds:Signature>/.exec(p.signedAssertion)![0];
          const hidden = p.signedAssertion.replace(signature, '');
          const evil = p.evilAssertion
            .replace('</saml:Issuer>', `</saml:Issuer>${signature}`)
            .replace('</saml:Assertion>', `<saml:Advice>${hidden}</saml:Advice></saml:Assertion>`);
          return b64(p.signed.replace(p.signedAssertion, evil));
        }),
      ).toBe('bad_signature');
    });

    it("an evil assertion with the genuine one's ID and signature, the genuine one moved into Extensions", async () => {
      expect(
        await refusedThenOpen((id) => {
          const p = parts(id);
          const signature = /<ds:Signature[\s\S]*<\/ds:Signature>/.exec(p.signedAssertion)![0];
          const evil = p.evilAssertion.replace('ID="_evil"', 'ID="_genuine"').replace('</saml:Issuer>', `</saml:Issuer>${signature}`);
          return b64(p.signed.replace(p.signedAssertion, `<samlp:Extensions>${p.signedAssertion}</samlp:Extensions>${evil}`));
        }),
      ).toBe('bad_signature');
    });
  });

  it('signed by another key (an IdP of the same name)', async () => {
    const impostor = startSamlIdp({ entityId: idp.entityId });
    impostor.trust(await spMetadataXml(db, ORG, BASE));
    expect(await refusedThenOpen((id) => impostor.response({ inResponseTo: id }))).toBe('bad_signature');
  });

  it('another issuer, though signed by the IdP key', async () => {
    expect(await refusedThenOpen((id) => idp.response({ inResponseTo: id, issuer: 'https://other-idp.test' }))).toBe('wrong_issuer');
  });

  it('expired: its NotOnOrAfter two minutes past (the skew allowed is one)', async () => {
    expect(
      await refusedThenOpen((id) =>
        idp.response({ inResponseTo: id, issueInstant: Date.now() - 7 * MIN, notBefore: Date.now() - 7 * MIN, notOnOrAfter: Date.now() - 2 * MIN }),
      ),
    ).toBe('expired');
  });

  it('not valid yet: its NotBefore two minutes ahead', async () => {
    expect(await refusedThenOpen((id) => idp.response({ inResponseTo: id, notBefore: Date.now() + 2 * MIN }))).toBe('not_yet_valid');
  });

  it('within the skew allowed: expired 20 seconds ago is still accepted', async () => {
    const id = await newRequest();
    expect(refusal(await consume(idp.response({ inResponseTo: id, notBefore: Date.now() - 5 * MIN, notOnOrAfter: Date.now() - 20_000 })))).toBe('accepted');
  });

  it('for another audience', async () => {
    expect(await refusedThenOpen((id) => idp.response({ inResponseTo: id, audience: samlUrls(BASE, 'org_plain').entityId }))).toBe('wrong_audience');
  });

  it('for another recipient (another ACS URL)', async () => {
    expect(await refusedThenOpen((id) => idp.response({ inResponseTo: id, recipient: samlUrls(BASE, 'org_plain').acsUrl }))).toBe('wrong_recipient');
  });

  it('sent to another destination', async () => {
    expect(await refusedThenOpen((id) => idp.response({ inResponseTo: id, destination: 'https://elsewhere.test/acs' }))).toBe('wrong_destination');
  });

  it('a wrong InResponseTo: a request never sent, none (IdP-initiated), or one that timed out', async () => {
    expect(await refusedThenOpen(() => idp.response({ inResponseTo: '_never_sent' }))).toBe('unknown_request');
    expect(await refusedThenOpen(() => idp.response({ inResponseTo: null }))).toBe('unknown_request');
    const id = await newRequest();
    await db.query(sql('t.saml.age', `UPDATE saml_requests SET expires_at = now() - interval '1 second' WHERE org_id = $1 AND id = $2`), [ORG, id]);
    expect(refusal(await consume(idp.response({ inResponseTo: id })))).toBe('unknown_request');
  });

  it('a second assertion for a request already answered', async () => {
    const id = await newRequest();
    expect(refusal(await consume(idp.response({ inResponseTo: id })))).toBe('accepted');
    expect(refusal(await consume(idp.response({ inResponseTo: id })))).toBe('unknown_request');
  });

  it('no email address anywhere; and the email attribute the organization names is the one read', async () => {
    expect(await refusedThenOpen((id) => idp.response({ inResponseTo: id, email: 'not-an-address', nameId: 'u12345' }))).toBe('no_email');
    await configureSamlIdp(db, ORG, { metadataXml: idp.metadataXml(), emailAttribute: 'workEmail', groupsAttribute: 'roles' }, OPERATOR, {
      baseUrl: BASE,
      allowPrivate: true,
    });
    try {
      const id = await newRequest();
      const r = await consume(
        idp.response({ inResponseTo: id, email: 'cy@acme.test', emailAttribute: 'workEmail', groups: ['owners'], groupsAttribute: 'roles', nameId: 'u1' }),
      );
      expect(r).toMatchObject({ ok: true, identity: { email: 'cy@acme.test', groups: ['owners'], nameId: 'u1' } });
      const other = await newRequest();
      expect(refusal(await consume(idp.response({ inResponseTo: other, email: 'cy@acme.test' })))).toBe('no_email');
    } finally {
      await configureSamlIdp(db, ORG, { metadataXml: idp.metadataXml() }, OPERATOR, { baseUrl: BASE, allowPrivate: true });
    }
  });

  it('malformed input, a DOCTYPE, and an organization without an IdP', async () => {
    const id = await newRequest();
    expect(refusal(await consume('%%%not base64'))).toBe('malformed');
    expect(refusal(await consume(b64('<notxml')))).toBe('malformed');
    expect(refusal(await consume(b64(`<!DOCTYPE x [<!ENTITY e "e">]>${idp.responseXml({ inResponseTo: id })}`)))).toBe('malformed');
    expect(refusal(await consumeSamlResponse(db, 'org_plain', BASE, { samlResponse: idp.response({ inResponseTo: id }) }))).toBe('not_configured');
    expect(await requestRow(id)).toEqual({ spent: false });
  });
});

describe('an assertion is accepted once across processes', () => {
  it.skipIf(!TEST_DATABASE_URL)('replayed through a second executor (its own connections) on the same database', async () => {
    const second = new PgExecutor({ connectionString: t.url!, max: 2 });
    try {
      const response = idp.response({ inResponseTo: await newRequest() });
      expect(refusal(await consume(response, second))).toBe('accepted');
      expect(refusal(await consume(response, db))).toBe('replayed');
      // A race: the same assertion, eight times at once over both pools: the database lets one through.
      const raced = idp.response({ inResponseTo: await newRequest() });
      const results = await Promise.all(Array.from({ length: 8 }, (_, i) => consume(raced, i % 2 ? second : db)));
      expect(results.map(refusal).sort()).toEqual(['accepted', ...Array(7).fill('replayed')]);
    } finally {
      await second.close();
    }
  });

  // The embedded database serves one process at a time: its second process is in saml-move.test.ts.
  it.skipIf(!TEST_DATABASE_URL)('replayed by a second process (a child process on the same database, while this one holds its pool)', async () => {
    const response = idp.response({ inResponseTo: await newRequest() });
    expect(refusal(await consume(response))).toBe('accepted');
    expect(await runSamlChild({ DATABASE_URL: t.url! }, ORG, BASE, response)).toMatchObject({ ok: false, refusal: 'replayed' });
  });
});

describe('single logout sent by the IdP', () => {
  const asQuery = (url: string) => {
    const u = new URL(url);
    return { query: Object.fromEntries(u.searchParams), rawQuery: u.search.slice(1) };
  };

  it('a signed LogoutRequest names whom to sign out, and gets a signed LogoutResponse the IdP accepts', async () => {
    const r = await handleSamlLogoutRequest(db, ORG, BASE, asQuery(idp.logoutRequestUrl({ nameId: 'ada@acme.test', sessionIndex: '_idp_session_1' })));
    if (!r.ok) throw new Error(r.detail);
    expect(r.nameId).toBe('ada@acme.test');
    expect(r.sessionIndex).toBe('_idp_session_1');
    const back = new URL(r.responseRedirectUrl!);
    expect(`${back.origin}${back.pathname}`).toBe(`${idp.baseUrl}/slo`);
    // The redirect signature, over the octet string as sent, by our SP key.
    const raw = back.search.slice(1);
    const octet = raw
      .split('&')
      .filter((p) => !p.startsWith('Signature='))
      .join('&');
    const spCert = (await getSamlSettings(db, ORG, BASE))!.spCertificate;
    expect(verify('sha256', Buffer.from(octet), createPublicKey(spCert), Buffer.from(back.searchParams.get('Signature')!, 'base64'))).toBe(true);
    const sp = samlify.ServiceProvider({ metadata: await spMetadataXml(db, ORG, BASE) });
    const idpEntity = samlify.IdentityProvider({ metadata: idp.metadataXml(), privateKey: idp.privateKey });
    const parsed = await idpEntity.parseLogoutResponse(sp, 'redirect', { query: Object.fromEntries(back.searchParams), octetString: octet });
    expect(parsed.extract.response).toMatchObject({ destination: `${idp.baseUrl}/slo` });
    expect(parsed.samlContent).toContain('urn:oasis:names:tc:SAML:2.0:status:Success');
  });

  it("by POST: samlify's own signed LogoutRequest is accepted; the same with its signature stripped is refused", async () => {
    const form = idp.logoutRequestPost({ nameId: 'ada@acme.test', sessionIndex: '_idp_session_2' });
    const r = await handleSamlLogoutRequest(db, ORG, BASE, { body: { SAMLRequest: form } });
    expect(r).toMatchObject({ ok: true, nameId: 'ada@acme.test', sessionIndex: '_idp_session_2' });
    const stripped = b64(
      Buffer.from(form, 'base64')
        .toString('utf8')
        .replace(/<ds:Signature[\s\S]*<\/ds:Signature>/, ''),
    );
    expect(await handleSamlLogoutRequest(db, ORG, BASE, { body: { SAMLRequest: stripped } })).toMatchObject({ ok: false, refusal: 'bad_signature' });
  });

  it('refused: unsigned, signed by another key, addressed elsewhere, or old', async () => {
    const check = async (url: string) => {
      const r = await handleSamlLogoutRequest(db, ORG, BASE, asQuery(url));
      return r.ok ? 'accepted' : r.refusal;
    };
    expect(await check(idp.logoutRequestUrl({ nameId: 'ada@acme.test', signed: false }))).toBe('bad_signature');
    const impostor = startSamlIdp({ entityId: idp.entityId });
    impostor.trust(await spMetadataXml(db, ORG, BASE));
    expect(await check(impostor.logoutRequestUrl({ nameId: 'ada@acme.test' }))).toBe('bad_signature');
    expect(await check(idp.logoutRequestUrl({ nameId: 'ada@acme.test', destination: 'https://elsewhere.test/slo' }))).toBe('wrong_destination');
    expect(await check(idp.logoutRequestUrl({ nameId: 'ada@acme.test', issueInstant: Date.now() - 30 * MIN }))).toBe('expired');
    // A signed one, its NameID changed on the way.
    const url = new URL(idp.logoutRequestUrl({ nameId: 'ada@acme.test' }));
    const other = new URL(idp.logoutRequestUrl({ nameId: 'bob@acme.test' }));
    url.searchParams.set('SAMLRequest', other.searchParams.get('SAMLRequest')!);
    expect(await check(url.toString())).toBe('bad_signature');
  });
});

describe("the IdP's metadata", () => {
  it('pasted: entity id, the redirect SSO and SLO, and the signing certificates; an EntitiesDescriptor of one IdP too', async () => {
    const parsed = await parseIdpMetadata(idp.metadataXml(), { allowPrivate: true });
    expect(parsed).toEqual({ entityId: idp.entityId, ssoUrl: `${idp.baseUrl}/sso`, sloUrl: `${idp.baseUrl}/slo`, certificates: [idp.certificate] });
    const wrapped = `<md:EntitiesDescriptor xmlns:md="urn:oasis:names:tc:SAML:2.0:metadata">${idp.metadataXml().replace(/^<\?xml[^>]*>/, '')}</md:EntitiesDescriptor>`;
    expect((await parseIdpMetadata(wrapped, { allowPrivate: true })).entityId).toBe(idp.entityId);
  });

  it('refused with a reason: not XML, a DOCTYPE, an SP, no signing key, an http:// SSO on a real host', async () => {
    const bad = (xml: string) =>
      parseIdpMetadata(xml, { allowPrivate: true }).then(
        () => 'accepted',
        (e: { code?: string; message: string }) => `${e.code}: ${e.message}`,
      );
    expect(await bad('<EntityDescriptor')).toMatch(/^invalid_request: the IdP metadata is not XML/);
    expect(await bad(`<!DOCTYPE d [<!ENTITY x SYSTEM "file:///etc/passwd">]>${idp.metadataXml().replace(/^<\?xml[^>]*>/, '')}`)).toBe(
      'invalid_request: the IdP metadata has a DOCTYPE, which is not read',
    );
    expect(await bad(await spMetadataXml(db, ORG, BASE))).toBe(
      'invalid_request: the IdP metadata has no EntityDescriptor with an IDPSSODescriptor (is it the metadata of the identity provider?)',
    );
    expect(await bad(idp.metadataXml().replace(/<(\w+:)?KeyDescriptor[\s\S]*<\/(\w+:)?KeyDescriptor>/, ''))).toBe(
      'invalid_request: the IdP metadata has no signing certificate (KeyDescriptor use="signing")',
    );
    expect(
      await bad(
        idp
          .metadataXml()
          .replace(
            /Binding="urn:oasis:names:tc:SAML:2.0:bindings:HTTP-Redirect" Location="[^"]*\/sso"/,
            'Binding="urn:oasis:names:tc:SAML:2.0:bindings:HTTP-Redirect" Location="http://idp.example/sso"',
          ),
      ),
    ).toBe("invalid_request: the IdP metadata's SingleSignOnService must be https:// (got http:)");
  });

  it('fetched from its URL (stored with it), through the SSRF guard', async () => {
    const view = await configureSamlIdp(db, ORG, { metadataUrl: `${idp.baseUrl}/metadata` }, OPERATOR, { baseUrl: BASE, allowPrivate: true });
    expect(view.idp).toMatchObject({ entityId: idp.entityId, metadataUrl: `${idp.baseUrl}/metadata` });
    expect(await fetchIdpMetadata(`${idp.baseUrl}/metadata`, { allowPrivate: true })).toBe(idp.metadataXml());
    await expect(fetchIdpMetadata(`${idp.baseUrl}/nothing`, { allowPrivate: true })).rejects.toThrow('metadata URL answered HTTP 404');
  });

  it('the SSRF guard refuses private, loopback and link-local addresses, and http://, before connecting', async () => {
    const refused = (url: string) =>
      fetchIdpMetadata(url).then(
        () => 'fetched',
        (e: { code?: string; message: string }) => `${e.code}: ${e.message}`,
      );
    expect(await refused('https://10.0.0.5/metadata')).toBe(
      'invalid_request: metadata URL: the URL points to a private address (10.0.0.5); metadata is fetched from public hosts only',
    );
    expect(await refused('https://169.254.169.254/latest/meta-data')).toBe(
      'invalid_request: metadata URL: the URL points to a link-local address (169.254.169.254); metadata is fetched from public hosts only',
    );
    expect(await refused('https://[::ffff:192.168.1.1]/metadata')).toBe(
      'invalid_request: metadata URL: the URL points to a private address (::ffff:c0a8:101); metadata is fetched from public hosts only',
    );
    expect(await refused('https://localhost/metadata')).toMatch(/^invalid_request: metadata URL: the URL points to a loopback address \(localhost\)/);
    expect(await refused(`${idp.baseUrl}/metadata`)).toBe(
      'invalid_request: metadata URL: the URL must be https:// (http:// only to loopback, in tests, with WEBHOOK_ALLOW_PRIVATE=true)',
    );
    // Through configureSamlIdp: refused, and the settings unchanged.
    const before = await getSamlSettings(db, ORG, BASE);
    await expect(configureSamlIdp(db, ORG, { metadataUrl: 'https://192.168.0.10/md' }, OPERATOR, { baseUrl: BASE })).rejects.toMatchObject({
      code: 'invalid_request',
    });
    expect(await getSamlSettings(db, ORG, BASE)).toEqual(before);
  });

  it('settings: one of pasted or URL; removing the IdP stops sign-in', async () => {
    await expect(configureSamlIdp(db, ORG, {}, OPERATOR, { baseUrl: BASE })).rejects.toMatchObject({ code: 'invalid_request' });
    await expect(configureSamlIdp(db, ORG, { metadataXml: 'x', metadataUrl: 'https://a.test' }, OPERATOR, { baseUrl: BASE })).rejects.toMatchObject({
      code: 'invalid_request',
    });
    await expect(
      configureSamlIdp(db, 'org_missing', { metadataXml: idp.metadataXml() }, OPERATOR, { baseUrl: BASE, allowPrivate: true }),
    ).rejects.toMatchObject({
      code: 'not_found',
    });
    const plain = await configureSamlIdp(db, 'org_plain', { metadataXml: idp.metadataXml() }, OPERATOR, { baseUrl: BASE, allowPrivate: true });
    expect(plain.idp?.entityId).toBe(idp.entityId);
    expect(await removeSamlIdp(db, 'org_plain', OPERATOR)).toBe(true);
    expect(await removeSamlIdp(db, 'org_plain', OPERATOR)).toBe(false);
    expect((await getSamlSettings(db, 'org_plain', BASE))?.idp).toBeNull();
    // Each change audited as the organization's, in its transaction; a refused one leaves no row.
    const rows = await db.query<{ action: string; actor: string; address: string; details: unknown }>(
      sql('t.saml.audit', `SELECT action, actor_label AS actor, address, details FROM audit_events WHERE org_id = $1 ORDER BY created_at, id`),
      ['org_plain'],
    );
    expect(
      rows
        .filter((r) => r.action === 'organization.updated')
        .map(({ details, ...r }) => ({ ...r, details: typeof details === 'string' ? JSON.parse(details) : details })),
    ).toEqual([
      {
        action: 'organization.updated',
        actor: 'operator',
        address: '203.0.113.9',
        details: { saml: 'connected', idpEntityId: idp.entityId, metadataUrl: null },
      },
      { action: 'organization.updated', actor: 'operator', address: '203.0.113.9', details: { saml: 'disconnected' } },
    ]);
    await expect(startSamlSignIn(db, 'org_plain', BASE)).rejects.toMatchObject({ code: 'not_found' });
  });

  it('a deleted organization signs no one in through its IdP', async () => {
    await createOrganization(db, { id: 'org_gone', name: 'Gone', plan: 'business' }, OPERATOR, new Date());
    const gone = startSamlIdp();
    gone.trust(await spMetadataXml(db, 'org_gone', BASE));
    await configureSamlIdp(db, 'org_gone', { metadataXml: gone.metadataXml() }, OPERATOR, { baseUrl: BASE, allowPrivate: true });
    const started = await startSamlSignIn(db, 'org_gone', BASE);
    const response = gone.response({ inResponseTo: (await gone.readAuthnRequest(started.redirectUrl)).id });
    await deleteOrganization(db, 'org_gone', { erase: false }, OPERATOR, new Date());
    expect(refusal(await consumeSamlResponse(db, 'org_gone', BASE, { samlResponse: response }))).toBe('not_configured');
    await expect(startSamlSignIn(db, 'org_gone', BASE)).rejects.toMatchObject({ code: 'not_found' });
  });
});
