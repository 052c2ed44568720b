import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';

/**
 * The seal of the round's outbox: a link's token waits for the relay sealed (AES-256-GCM) under a
 * key made at random when this process started and kept in its memory only. The database, its
 * WAL and every backup hold the sealed bytes, which no one can open once this process is gone, so
 * the tie of a person to a link is readable only in this process's memory and in the mail. Another
 * process cannot open a row sealed here: when this process dies, its waiting rows are given new
 * links by another (src/domain/checkins/rounds.ts).
 */
const KEY = randomBytes(32);

/** This process's seal, named at random (the outbox's `sealed_by`). */
export const SEAL_ID = randomBytes(12).toString('base64url');

export function sealToken(token: string, aad: string): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', KEY, iv);
  cipher.setAAD(Buffer.from(aad));
  return Buffer.concat([iv, cipher.update(token, 'utf8'), cipher.final(), cipher.getAuthTag()]).toString('base64url');
}

/** The token, or null when this process did not seal it (or the bytes were changed). */
export function unsealToken(sealed: string, aad: string): string | null {
  try {
    const b = Buffer.from(sealed, 'base64url');
    const decipher = createDecipheriv('aes-256-gcm', KEY, b.subarray(0, 12));
    decipher.setAAD(Buffer.from(aad));
    decipher.setAuthTag(b.subarray(b.length - 16));
    return Buffer.concat([decipher.update(b.subarray(12, b.length - 16)), decipher.final()]).toString('utf8');
  } catch {
    return null;
  }
}
