import { readFileSync } from 'node:fs';
import { createPrivateKey, createPublicKey } from 'node:crypto';
import { RSABSSA } from '@cloudflare/blindrsa-ts';
import { describe, expect, it } from 'vitest';
import { blindSign, generateBlindKeyPair, privateKeyOf, publicKeyOf, PREFIX_LENGTH, SUITE, verifyToken } from '../../src/crypto/blind-rsa.js';

/**
 * The server's half of RFC 9474 (src/crypto/blind-rsa.ts) against the RFC's own test vector, and
 * the whole protocol with the library the check-in page uses (@cloudflare/blindrsa-ts): the
 * library blinds and finalizes, OpenSSL signs, both verify.
 */
const V = JSON.parse(readFileSync(new URL('./fixtures/rfc9474-vector-1.json', import.meta.url), 'utf8')) as Record<string, string>;
const hex = (s: string) => Buffer.from(s, 'hex');
const big = (s: string) => BigInt(`0x${s}`);
const b64u = (n: bigint) => Buffer.from(n.toString(16).padStart(2 * Math.ceil(n.toString(16).length / 2), '0'), 'hex').toString('base64url');
const mod = (a: bigint, m: bigint) => ((a % m) + m) % m;
function inverse(a: bigint, m: bigint): bigint {
  let [r0, r1, s0, s1] = [mod(a, m), m, 1n, 0n];
  while (r1 !== 0n) {
    const q = r0 / r1;
    [r0, r1, s0, s1] = [r1, r0 - q * r1, s1, s0 - q * s1];
  }
  return mod(s0, m);
}

/** The vector's key as Node key objects (from p, q, d, e: JWK wants the CRT values too). */
function vectorKeys() {
  const [p, q, d, n, e] = [big(V.p), big(V.q), big(V.d), big(V.n), big(V.e)];
  const jwk = {
    kty: 'RSA',
    n: b64u(n),
    e: b64u(e),
    d: b64u(d),
    p: b64u(p),
    q: b64u(q),
    dp: b64u(d % (p - 1n)),
    dq: b64u(d % (q - 1n)),
    qi: b64u(inverse(q, p)),
  };
  return { privateKey: createPrivateKey({ key: jwk, format: 'jwk' }), publicKey: createPublicKey({ key: { kty: 'RSA', n: jwk.n, e: jwk.e }, format: 'jwk' }) };
}

const suite = () => RSABSSA.SHA384.PSS.Randomized();
const importSpki = (spki: Buffer) => crypto.subtle.importKey('spki', new Uint8Array(spki), { name: 'RSA-PSS', hash: 'SHA-384' }, true, ['verify']);

describe('RFC 9474 test vector 1 (RSABSSA-SHA384-PSS-Randomized)', () => {
  it('is the vector it claims to be: p * q = n', () => {
    expect(big(V.p) * big(V.q)).toBe(big(V.n));
    expect(V.name).toBe(SUITE);
  });

  it("OpenSSL's raw RSA gives the vector's blind_sig for its blinded_msg, exactly", () => {
    const { privateKey, publicKey } = vectorKeys();
    expect(blindSign(privateKey, publicKey, hex(V.blinded_msg))!.toString('hex')).toBe(V.blind_sig);
  });

  it("the library's finalize turns blind_sig into the vector's sig, and both sides verify it", async () => {
    const { publicKey } = vectorKeys();
    const spki = publicKey.export({ type: 'spki', format: 'der' });
    const prepared = Buffer.concat([hex(V.msg_prefix), hex(V.msg)]);
    const sig = await suite().finalize(await importSpki(spki), prepared, hex(V.blind_sig), hex(V.inv));
    expect(Buffer.from(sig).toString('hex')).toBe(V.sig);
    expect(verifyToken(publicKey, prepared, hex(V.sig))).toBe(true);
    expect(await suite().verify(await importSpki(spki), hex(V.sig), prepared)).toBe(true);
  });

  it('refuses what is not a token: another message, a changed signature, the message without its prefix', () => {
    const { publicKey } = vectorKeys();
    const prepared = Buffer.concat([hex(V.msg_prefix), hex(V.msg)]);
    const flipped = hex(V.sig);
    flipped[10] ^= 1;
    expect(verifyToken(publicKey, prepared, flipped)).toBe(false);
    expect(verifyToken(publicKey, hex(V.msg), hex(V.sig))).toBe(false);
    const other = Buffer.from(prepared);
    other[0] ^= 1;
    expect(verifyToken(publicKey, other, hex(V.sig))).toBe(false);
    expect(verifyToken(publicKey, prepared, hex(V.sig).subarray(1))).toBe(false);
  });

  it('signs nothing that is not a number below n of the modulus length', () => {
    const { privateKey, publicKey } = vectorKeys();
    expect(blindSign(privateKey, publicKey, hex(V.blinded_msg).subarray(1))).toBeNull();
    expect(blindSign(privateKey, publicKey, Buffer.alloc(512, 0xff))).toBeNull();
  });
});

describe('the protocol end to end with a 2048-bit key of the service', () => {
  it('library blinds -> OpenSSL signs -> library finalizes -> both verify; the token is only good for its message and key', async () => {
    const pair = await generateBlindKeyPair();
    const [priv, pub] = [privateKeyOf(pair.privatePkcs8), publicKeyOf(pair.publicSpki)];
    expect(pub.asymmetricKeyDetails?.modulusLength).toBe(2048);
    const pk = await importSpki(pair.publicSpki);
    const s = suite();
    const prepared = s.prepare(crypto.getRandomValues(new Uint8Array(32)));
    expect(prepared.length).toBe(PREFIX_LENGTH + 32);
    const { blindedMsg, inv } = await s.blind(pk, prepared);
    const blindSig = blindSign(priv, pub, blindedMsg)!;
    expect(blindSig.length).toBe(256);
    const sig = await s.finalize(pk, prepared, blindSig, inv);
    expect(await s.verify(pk, sig, prepared)).toBe(true);
    expect(verifyToken(pub, prepared, sig)).toBe(true);
    // The blinded message and the blind signature say nothing the server could match later.
    expect(Buffer.from(blindedMsg).includes(Buffer.from(prepared.subarray(0, 16)))).toBe(false);
    expect(Buffer.from(sig).equals(blindSig)).toBe(false);
    // Another key of the service does not accept it (a key per organization, team and week).
    const other = await generateBlindKeyPair();
    expect(verifyToken(publicKeyOf(other.publicSpki), prepared, sig)).toBe(false);
  });
});
