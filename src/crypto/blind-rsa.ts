import {
  constants,
  createPrivateKey,
  createPublicKey,
  generateKeyPair,
  privateDecrypt,
  publicEncrypt,
  timingSafeEqual,
  verify,
  type KeyObject,
} from 'node:crypto';
import { promisify } from 'node:util';

/**
 * The server's half of RFC 9474 blind RSA signatures, suite RSABSSA-SHA384-PSS-Randomized
 * (CONTRACT.md section 12): keys, the blind signature and the verification of a finished token.
 * The client's half (prepare, blind, finalize) runs in the check-in page with
 * @cloudflare/blindrsa-ts. Signing is the raw RSA operation through OpenSSL (`privateDecrypt`
 * without padding is m^d mod n): about 0.3 ms, where the library's BigInt arithmetic takes about
 * 300 ms (issue 45). No function here learns or keeps anything of the message it signs.
 */

export const SUITE = 'RSABSSA-SHA384-PSS-Randomized';
export const MODULUS_BITS = 2048;
/** RSASSA-PSS with SHA-384 and a salt of the hash's length (RFC 9474 section 5). */
export const SALT_LENGTH = 48;
/** The random prefix the Randomized variant puts before the client's message (RFC 9474 section 4.1). */
export const PREFIX_LENGTH = 32;

export interface BlindKeyPair {
  /** SubjectPublicKeyInfo, DER: what is published and what the page imports. */
  publicSpki: Buffer;
  /** PKCS #8, DER: kept sealed in the database. */
  privatePkcs8: Buffer;
}

const generate = promisify(generateKeyPair);

export async function generateBlindKeyPair(bits = MODULUS_BITS): Promise<BlindKeyPair> {
  const { publicKey, privateKey } = await generate('rsa', {
    modulusLength: bits,
    publicExponent: 0x10001,
    publicKeyEncoding: { type: 'spki', format: 'der' },
    privateKeyEncoding: { type: 'pkcs8', format: 'der' },
  });
  return { publicSpki: publicKey as unknown as Buffer, privatePkcs8: privateKey as unknown as Buffer };
}

export const publicKeyOf = (spki: Buffer): KeyObject => createPublicKey({ key: spki, format: 'der', type: 'spki' });
export const privateKeyOf = (pkcs8: Buffer): KeyObject => createPrivateKey({ key: pkcs8, format: 'der', type: 'pkcs8' });

const modulusBytes = (key: KeyObject) => Math.ceil((key.asymmetricKeyDetails?.modulusLength ?? 0) / 8);

/**
 * BlindSign (RFC 9474 section 4.3): s = m^d mod n for a blinded message m of exactly the
 * modulus's length, checked as the RFC asks (s^e mod n must give m back, so a fault in the
 * signing computation never answers with a value that could leak the key). Returns null for a
 * message that is not a number below n of the right length.
 */
export function blindSign(privateKey: KeyObject, publicKey: KeyObject, blindedMsg: Uint8Array): Buffer | null {
  const k = modulusBytes(publicKey);
  if (blindedMsg.length !== k) return null;
  let sig: Buffer;
  try {
    sig = privateDecrypt({ key: privateKey, padding: constants.RSA_NO_PADDING }, blindedMsg);
  } catch {
    return null; // m >= n: OpenSSL refuses it ("data too large for modulus")
  }
  const back = publicEncrypt({ key: publicKey, padding: constants.RSA_NO_PADDING }, sig);
  if (back.length !== k || !timingSafeEqual(back, Buffer.from(blindedMsg))) throw new Error('blind signature failed its own check');
  return sig;
}

/** RSASSA-PSS-VERIFY of a finished token: `preparedMsg` is the 32-byte random prefix and the client's message. */
export function verifyToken(publicKey: KeyObject, preparedMsg: Uint8Array, signature: Uint8Array): boolean {
  if (signature.length !== modulusBytes(publicKey)) return false;
  return verify('sha384', preparedMsg, { key: publicKey, padding: constants.RSA_PKCS1_PSS_PADDING, saltLength: SALT_LENGTH }, signature);
}
