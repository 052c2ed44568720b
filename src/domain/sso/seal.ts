import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';
import type { Queryable } from '../database.js';
import { serviceSecret } from '../../db/repositories/secrets.js';
import { ApiError } from '../../contract/errors.js';

/*
 * SSO secrets at rest (an OIDC client secret, a SAML key): sealed like the TOTP secrets
 * (src/domain/totp.ts): AES-256-GCM under a key derived from the service secret `sso_seal`, bound
 * to the organization and the field, stored as `sealed:v1:<base64url of iv, ciphertext, tag>`. A
 * copy of sso_settings alone holds no usable secret, and a value moved to another organization's
 * row does not open. `db copy`, backup and restore move service_secrets with the rows.
 */
const SEALED = 'sealed:v1:';
const keys = new WeakMap<object, Promise<Buffer>>();

function keyOf(db: Queryable): Promise<Buffer> {
  let key = keys.get(db);
  if (!key) {
    key = serviceSecret(db, 'sso_seal').then((secret) => createHash('sha256').update('climate-pulse sso seal\0').update(secret).digest());
    key.catch(() => keys.delete(db));
    keys.set(db, key);
  }
  return key;
}

const binding = (orgId: string, field: string) => Buffer.from(`sso\0${orgId}\0${field}`);

export async function sealSsoSecret(db: Queryable, orgId: string, field: string, secret: string): Promise<string> {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', await keyOf(db), iv);
  cipher.setAAD(binding(orgId, field));
  return SEALED + Buffer.concat([iv, cipher.update(secret, 'utf8'), cipher.final(), cipher.getAuthTag()]).toString('base64url');
}

/** A sealed value that does not open (another database's key, a value moved between rows) is the server's failure (500): nobody is let through. */
export const SSO_SEAL_BROKEN = "An SSO secret does not open with this database's seal key (service secret sso_seal).";

export async function unsealSsoSecret(db: Queryable, orgId: string, field: string, stored: string): Promise<string> {
  const bytes = Buffer.from(stored.startsWith(SEALED) ? stored.slice(SEALED.length) : '', 'base64url');
  try {
    if (bytes.length < 29) throw new Error('too short');
    const decipher = createDecipheriv('aes-256-gcm', await keyOf(db), bytes.subarray(0, 12));
    decipher.setAAD(binding(orgId, field));
    decipher.setAuthTag(bytes.subarray(bytes.length - 16));
    return Buffer.concat([decipher.update(bytes.subarray(12, bytes.length - 16)), decipher.final()]).toString('utf8');
  } catch {
    throw new ApiError('internal_error', SSO_SEAL_BROKEN);
  }
}
