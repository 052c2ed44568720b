import { randomBytes } from 'node:crypto';
import { sql, type Queryable } from '../executor.js';

const insertIfMissing = sql('secrets.insert_if_missing', `INSERT INTO service_secrets (name, value) VALUES ($1, $2) ON CONFLICT (name) DO NOTHING`);
const read = sql('secrets.read', `SELECT value FROM service_secrets WHERE name = $1`);

/** Returns the named secret, generating it once; every process sharing the database agrees on it. */
export async function serviceSecret(db: Queryable, name: string): Promise<string> {
  await db.query(insertIfMissing, [name, randomBytes(32).toString('base64url')]);
  const [r] = await db.query<{ value: string }>(read, [name]);
  return r.value;
}
