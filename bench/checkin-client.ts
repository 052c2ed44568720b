import { constants, createHash, createPublicKey, publicEncrypt, randomBytes, type KeyObject } from 'node:crypto';
import { MODULUS_BITS, PREFIX_LENGTH, SALT_LENGTH } from '../src/crypto/blind-rsa.js';

/**
 * The check-in page's half of RFC 9474 (prepare, blind, finalize) for the benchmark's load
 * client, fast enough to prepare 20,000 tokens between two phases: the library's own `blind`
 * measured about 100 ms a message in Node (sjcl's big numbers, an asynchronous digest per
 * block). Here EMSA-PSS (SHA-384, MGF1, 48-byte salt; RFC 8017 section 9.1.1) is computed with
 * node:crypto's hashes, r^e mod n through OpenSSL (`publicEncrypt` without padding), products and
 * inverses through BigInt. The service verifies every token it is given (and
 * test/checkin/blind-rsa.test.ts checks the page's library against the RFC's vectors), so a
 * mistake here shows as refused answers, never as a faster figure.
 */
const K = MODULUS_BITS / 8;
const toBig = (b: Uint8Array) => BigInt(`0x${Buffer.from(b).toString('hex') || '0'}`);
const toBytes = (x: bigint) => Buffer.from(x.toString(16).padStart(K * 2, '0'), 'hex');

function inverse(a: bigint, n: bigint): bigint {
  let [r0, r1] = [n, a % n];
  let [t0, t1] = [0n, 1n];
  while (r1 !== 0n) {
    const q = r0 / r1;
    [r0, r1] = [r1, r0 - q * r1];
    [t0, t1] = [t1, t0 - q * t1];
  }
  if (r0 !== 1n) throw new Error('not invertible');
  return t0 < 0n ? t0 + n : t0;
}

export interface PublicKeyParts {
  key: KeyObject;
  n: bigint;
}

export function publicKeyParts(spki: Buffer): PublicKeyParts {
  const key = createPublicKey({ key: spki, format: 'der', type: 'spki' });
  const jwk = key.export({ format: 'jwk' }) as { n: string };
  return { key, n: toBig(Buffer.from(jwk.n, 'base64url')) };
}

export interface Blinded {
  /** The 32-byte random prefix and the client's random message: what the answer carries as `message`. */
  prepared: Buffer;
  blindedMsg: Buffer;
  inv: bigint;
}

const sha384 = (...parts: Buffer[]) => {
  const h = createHash('sha384');
  for (const p of parts) h.update(p);
  return h.digest();
};

/** EMSA-PSS-ENCODE (RFC 8017 section 9.1.1) for a 2048-bit modulus: emBits 2047, emLen 256. */
function emsaPssEncode(message: Buffer): Buffer {
  const hLen = 48;
  const emLen = K;
  const salt = randomBytes(SALT_LENGTH);
  const h = sha384(Buffer.alloc(8), sha384(message), salt);
  const db = Buffer.alloc(emLen - hLen - 1);
  db[emLen - SALT_LENGTH - hLen - 2] = 0x01;
  salt.copy(db, emLen - SALT_LENGTH - hLen - 1);
  // MGF1 with SHA-384
  const mask = Buffer.alloc(db.length);
  for (let c = 0, at = 0; at < mask.length; c++, at += hLen) {
    const counter = Buffer.alloc(4);
    counter.writeUInt32BE(c);
    sha384(h, counter).copy(mask, at);
  }
  for (let i = 0; i < db.length; i++) db[i] ^= mask[i];
  db[0] &= 0x7f; // 8 * emLen - emBits = 1 leftmost bit
  return Buffer.concat([db, h, Buffer.from([0xbc])]);
}

/**
 * Prepare (RFC 9474 section 4.1, randomized: a 32-byte prefix) and Blind (section 4.2) for `count`
 * messages under one key, each with its own random r. The inverses come from one inversion and
 * three products each (Montgomery's batch inversion): a single 2048-bit inversion in BigInt takes
 * milliseconds, 20,000 of them minutes.
 */
export function blindMany(pk: PublicKeyParts, count: number): Blinded[] {
  const rs: bigint[] = [];
  const out: Omit<Blinded, 'inv'>[] = [];
  for (let i = 0; i < count; i++) {
    const prepared = Buffer.concat([randomBytes(PREFIX_LENGTH), randomBytes(32)]);
    const encoded = emsaPssEncode(prepared);
    let r: bigint;
    do r = toBig(randomBytes(K)) % pk.n;
    while (r < 2n);
    const x = toBig(publicEncrypt({ key: pk.key, padding: constants.RSA_NO_PADDING }, toBytes(r)));
    rs.push(r);
    out.push({ prepared, blindedMsg: toBytes((toBig(encoded) * x) % pk.n) });
  }
  // prefix[i] = r0 * ... * r(i-1); one inverse of the whole product, then each inverse backwards.
  const prefix: bigint[] = [1n];
  for (const r of rs) prefix.push((prefix[prefix.length - 1] * r) % pk.n);
  let acc = inverse(prefix[count], pk.n);
  const inv: bigint[] = new Array(count);
  for (let i = count - 1; i >= 0; i--) {
    inv[i] = (acc * prefix[i]) % pk.n;
    acc = (acc * rs[i]) % pk.n;
  }
  return out.map((b, i) => ({ ...b, inv: inv[i] }));
}

/** Finalize (section 4.4) without its own verification: the answer endpoint verifies. */
export function finalize(pk: PublicKeyParts, b: Blinded, blindSig: Buffer): Buffer {
  return toBytes((toBig(blindSig) * b.inv) % pk.n);
}
