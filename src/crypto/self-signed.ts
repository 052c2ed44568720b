import { createPrivateKey, createPublicKey, generateKeyPair, generateKeyPairSync, randomBytes, sign, X509Certificate, type KeyObject } from 'node:crypto';
import { promisify } from 'node:util';

/**
 * A self-signed X.509 v3 certificate (RSA, SHA-256) for a key pair, which node:crypto can read but
 * not make. SAML carries public keys as certificates: our service provider's signing key (its
 * metadata, src/domain/sso/saml.ts) and the test IdP's (test/helpers/saml-idp.ts). Nothing checks
 * a chain here; a SAML peer trusts the certificate it was given, as it is.
 */

// DER: tag, length, contents.
function der(tag: number, ...parts: Buffer[]): Buffer {
  const body = Buffer.concat(parts);
  const n = body.length;
  const len =
    n < 0x80
      ? Buffer.from([n])
      : n < 0x100
        ? Buffer.from([0x81, n])
        : n < 0x10000
          ? Buffer.from([0x82, n >> 8, n & 255])
          : Buffer.from([0x83, n >> 16, (n >> 8) & 255, n & 255]);
  return Buffer.concat([Buffer.from([tag]), len, body]);
}
const seq = (...parts: Buffer[]) => der(0x30, ...parts);
const set = (...parts: Buffer[]) => der(0x31, ...parts);
const nul = () => Buffer.from([0x05, 0x00]);
function oid(dotted: string): Buffer {
  const [a, b, ...rest] = dotted.split('.').map(Number);
  const bytes = [40 * a + b];
  for (const v of rest) {
    const chunk = [v & 0x7f];
    for (let x = v >> 7; x > 0; x >>= 7) chunk.unshift((x & 0x7f) | 0x80);
    bytes.push(...chunk);
  }
  return der(0x06, Buffer.from(bytes));
}
/** A positive INTEGER from big-endian bytes. */
function integer(bytes: Buffer): Buffer {
  let b = bytes;
  while (b.length > 1 && b[0] === 0 && b[1] < 0x80) b = b.subarray(1);
  return der(0x02, b[0] >= 0x80 ? Buffer.concat([Buffer.from([0]), b]) : b);
}
/** UTCTime until 2049, GeneralizedTime from 2050 (RFC 5280, 4.1.2.5). */
function time(d: Date): Buffer {
  const iso = d.toISOString().replace(/[-:T]/g, '').slice(0, 14); // YYYYMMDDHHMMSS
  return d.getUTCFullYear() < 2050 ? der(0x17, Buffer.from(`${iso.slice(2)}Z`)) : der(0x18, Buffer.from(`${iso}Z`));
}
const name = (commonName: string) => seq(set(seq(oid('2.5.4.3'), der(0x0c, Buffer.from(commonName, 'utf8')))));
const SHA256_WITH_RSA = seq(oid('1.2.840.113549.1.1.11'), nul());

export interface SelfSignedOptions {
  commonName: string;
  notBefore: Date;
  notAfter: Date;
}

/** The certificate, as PEM, of `privateKey` (RSA) signed by itself. */
export function selfSignedCertificate(privateKey: KeyObject | string, opts: SelfSignedOptions): string {
  const key = typeof privateKey === 'string' ? createPrivateKey(privateKey) : privateKey;
  if (key.asymmetricKeyType !== 'rsa') throw new Error('selfSignedCertificate signs with an RSA key');
  const spki = createPublicKey(key).export({ type: 'spki', format: 'der' });
  const serial = randomBytes(16);
  serial[0] &= 0x7f;
  const tbs = seq(
    der(0xa0, integer(Buffer.from([2]))), // v3
    integer(serial),
    SHA256_WITH_RSA,
    name(opts.commonName),
    seq(time(opts.notBefore), time(opts.notAfter)),
    name(opts.commonName),
    spki,
  );
  const signature = sign('sha256', tbs, key);
  const cert = seq(tbs, SHA256_WITH_RSA, der(0x03, Buffer.concat([Buffer.from([0]), signature])));
  const pem = `-----BEGIN CERTIFICATE-----\n${cert
    .toString('base64')
    .match(/.{1,64}/g)!
    .join('\n')}\n-----END CERTIFICATE-----\n`;
  new X509Certificate(pem); // throws if node:crypto cannot read what was made
  return pem;
}

/** A new RSA key pair (PKCS#8 PEM) and its self-signed certificate. */
export function newSigningKey(opts: SelfSignedOptions & { modulusLength?: number }): { privateKey: string; certificate: string } {
  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: opts.modulusLength ?? 2048 });
  return { privateKey: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(), certificate: selfSignedCertificate(privateKey, opts) };
}

/** newSigningKey without blocking the event loop while the key is made (a server's path). */
export async function newSigningKeyAsync(opts: SelfSignedOptions & { modulusLength?: number }): Promise<{ privateKey: string; certificate: string }> {
  const { privateKey } = await promisify(generateKeyPair)('rsa', { modulusLength: opts.modulusLength ?? 2048 });
  return { privateKey: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(), certificate: selfSignedCertificate(privateKey, opts) };
}
