import type { Queryable } from '../database.js';
import { serviceSecret } from '../../db/repositories/secrets.js';

/** The service secret the check-in keys are sealed under (made once, shared by every process; moved by db copy and backup). */
export const serviceSecretOf = (db: Queryable) => serviceSecret(db, 'checkin_key_seal');
