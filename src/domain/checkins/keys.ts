import { createCipheriv, createDecipheriv, createHash, randomBytes, type KeyObject } from 'node:crypto';
import type { Queryable } from '../database.js';
import { findCheckinKey, findCheckinKeyFor, insertCheckinKey, listPublishedKeys, slotExists, type CheckinKeyRow } from '../../db/repositories/checkins.js';
import { ApiError } from '../../contract/errors.js';
import { generateBlindKeyPair, privateKeyOf, publicKeyOf, SUITE } from '../../crypto/blind-rsa.js';
import { newId } from '../ids.js';
import { addWeeks, weekOf } from './week.js';

/**
 * The check-in keys: one RSA key per (organization, team or none, ISO week). The private half is
 * kept sealed (AES-256-GCM under a key derived from a service secret, bound to the organization
 * and the key's id), like the other secrets the service keeps; `db copy`, backup and restore move
 * the rows and the secret together. Unsealed keys are cached in memory for the week.
 */
export class CheckinKeys {
  private readonly sealKey: Buffer;
  private readonly cache = new Map<string, { priv: KeyObject; pub: KeyObject }>();
  /** Keys being made in this process, by (organization, week, team slot). */
  private readonly making = new Map<string, Promise<CheckinKeyRow>>();

  constructor(secret: string) {
    this.sealKey = createHash('sha256').update('climate-pulse checkin key seal\0').update(secret).digest();
  }

  seal(orgId: string, keyId: string, pkcs8: Buffer): Buffer {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.sealKey, iv);
    cipher.setAAD(Buffer.from(`${orgId}\0${keyId}`));
    return Buffer.concat([iv, cipher.update(pkcs8), cipher.final(), cipher.getAuthTag()]);
  }

  unseal(orgId: string, keyId: string, sealed: Buffer): Buffer {
    const decipher = createDecipheriv('aes-256-gcm', this.sealKey, sealed.subarray(0, 12));
    decipher.setAAD(Buffer.from(`${orgId}\0${keyId}`));
    decipher.setAuthTag(sealed.subarray(sealed.length - 16));
    return Buffer.concat([decipher.update(sealed.subarray(12, sealed.length - 16)), decipher.final()]);
  }

  /**
   * The key of (week, team slot), made once: concurrent callers all get the one the database kept.
   * In one process, callers that find no key wait for the one being made rather than each making
   * their own: at a round's hour every link of a team is opened at once, and 50 openings each
   * generating a 2048-bit key took the CPU for seconds (the check-in bench, issue 45). Across
   * processes the unique index still decides.
   */
  async keyFor(db: Queryable, orgId: string, week: string, teamSlot: string): Promise<CheckinKeyRow> {
    const found = await findCheckinKeyFor(db, orgId, week, teamSlot);
    if (found) return found;
    const slot = `${orgId}\0${week}\0${teamSlot}`;
    let making = this.making.get(slot);
    if (!making) {
      making = this.make(db, orgId, week, teamSlot).finally(() => this.making.delete(slot));
      this.making.set(slot, making);
    }
    return making;
  }

  private async make(db: Queryable, orgId: string, week: string, teamSlot: string): Promise<CheckinKeyRow> {
    // Keys for real rounds only: a week and slot that no round started get none, whatever a row says.
    if (!(await slotExists(db, orgId, week, teamSlot))) throw new ApiError('not_found', 'This check-in link is not valid or has closed.');
    const pair = await generateBlindKeyPair();
    const id = newId('ck');
    await insertCheckinKey(db, orgId, { id, week, teamSlot, publicSpki: pair.publicSpki, privateSealed: this.seal(orgId, id, pair.privatePkcs8) });
    return (await findCheckinKeyFor(db, orgId, week, teamSlot))!;
  }

  async byId(db: Queryable, orgId: string, keyId: string): Promise<CheckinKeyRow | null> {
    return findCheckinKey(db, orgId, keyId);
  }

  /** The key's OpenSSL objects, unsealed once per process. */
  objects(orgId: string, key: CheckinKeyRow): { priv: KeyObject; pub: KeyObject } {
    const id = `${orgId}\0${key.id}`;
    let o = this.cache.get(id);
    if (!o) {
      o = { priv: privateKeyOf(this.unseal(orgId, key.id, key.privateSealed)), pub: publicKeyOf(key.publicSpki) };
      if (this.cache.size > 5_000) this.cache.clear();
      this.cache.set(id, o);
    }
    return o;
  }
}

export interface PublishedKey {
  id: string;
  week: string;
  teamId: string | null;
  teamName: string | null;
  suite: string;
  publicKey: string;
}

/**
 * GET /checkin/keys/{orgId}: the public keys of the rounds of the previous, current and next weeks,
 * the same for every caller (SPKI DER, base64url), so that anyone can see that everyone of a team
 * and week was given the one key. A key is made once per round and slot and never changed or
 * removed, so the list of a week only grows.
 */
export async function publishedKeys(db: Queryable, orgId: string, now: Date): Promise<PublishedKey[]> {
  const rows = await listPublishedKeys(db, orgId, addWeeks(weekOf(now), -1));
  return rows
    .filter((r) => r.week <= addWeeks(weekOf(now), 1))
    .map((r) => ({ id: r.id, week: r.week, teamId: r.teamSlot || null, teamName: r.teamName, suite: SUITE, publicKey: r.publicSpki.toString('base64url') }));
}
