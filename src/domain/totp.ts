import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';
import { Secret, TOTP } from 'otpauth';
import type { DatabaseExecutor, Queryable } from './database.js';
import {
  deleteSession,
  findMember,
  listClearTotpSecrets,
  markSignedIn,
  readPendingTotpSecret,
  replaceClearTotpSecret,
  setPendingTotpSecret,
  updateMemberTotp,
  useRecoveryCode,
  useTotpStep,
  type MemberRow,
} from '../db/repositories/members.js';
import { serviceSecret } from '../db/repositories/secrets.js';
import { ApiError, invalid } from '../contract/errors.js';
import { recordAudit, type Actor } from './audit.js';
import { checkPassword, spendAttempt } from './passwords.js';
import { memberActor, memberOf } from './members.js';
import { openSession, type ConsoleSession, type NewSession } from './sessions.js';
import { mustUsePasskey } from './passkeys.js';

/** An owner or admin who has a passkey, while the organization requires passkeys, gives it, not a code. */
export const PASSKEY_REQUIRED_NOT_CODE = 'Your organization requires owners and admins to sign in with a passkey: use your passkey.';

const sha256 = (s: string | Buffer) => createHash('sha256').update(s).digest();

// Two-factor (TOTP, RFC 6238: SHA-1, 6 digits, 30 s) and recovery codes.

const totp = (secret: string, label = 'Climate Pulse') =>
  new TOTP({ issuer: 'Climate Pulse', label, algorithm: 'SHA1', digits: 6, period: 30, secret: Secret.fromBase32(secret) });

/** A new secret to enroll (not stored until a code from it is confirmed) and its otpauth:// URI. */
export function createTotpSecret(email: string): { secret: string; uri: string } {
  const secret = new Secret({ size: 20 }).base32;
  return { secret, uri: totp(secret, email).toString() };
}

/*
 * TOTP secrets at rest (issue 52, L4): sealed like the other secrets the service keeps (the
 * check-in keys): AES-256-GCM under a key derived from the service secret `totp_seal`, bound to
 * the organization and the member (or the enrolling session), stored as `sealed:v1:<base64url of
 * iv, ciphertext, tag>` in the same text column. A copy of the members table alone (an export, a
 * log of a row, a column read by mistake) holds no usable secret, and a sealed value moved to
 * another member's row does not open. `db copy`, backup and restore move service_secrets with the
 * rows, so a copy opens them. Secrets written in clear before migration 0025 are sealed at the
 * console's start (sealClearTotpSecrets) and, should one remain, when it is next used.
 */
const SEALED = 'sealed:v1:';
const sealKeys = new WeakMap<object, Promise<Buffer>>();

/** The seal key of a database, read once per executor (serviceSecret writes it the first time). */
function sealKeyOf(db: Queryable): Promise<Buffer> {
  let key = sealKeys.get(db);
  if (!key) {
    key = serviceSecret(db, 'totp_seal').then((secret) => createHash('sha256').update('climate-pulse totp seal\0').update(secret).digest());
    key.catch(() => sealKeys.delete(db));
    sealKeys.set(db, key);
  }
  return key;
}

const memberBinding = (orgId: string, memberId: string) => `member\0${orgId}\0${memberId}`;
const sessionBinding = (orgId: string, idHash: Buffer) => `session\0${orgId}\0${idHash.toString('hex')}`;

function seal(key: Buffer, binding: string, secret: string): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  cipher.setAAD(Buffer.from(binding));
  return SEALED + Buffer.concat([iv, cipher.update(secret, 'utf8'), cipher.final(), cipher.getAuthTag()]).toString('base64url');
}

/**
 * A sealed secret that does not open (another database's seal key, or a value moved from another
 * row) refuses the code as the server's failure (500, logged): a member is never let through.
 */
export const TOTP_SEAL_BROKEN = "A two-factor secret does not open with this database's seal key (service secret totp_seal).";

function unseal(key: Buffer, binding: string, stored: string): string {
  const bytes = Buffer.from(stored.slice(SEALED.length), 'base64url');
  try {
    if (bytes.length < 29) throw new Error('too short');
    const decipher = createDecipheriv('aes-256-gcm', key, bytes.subarray(0, 12));
    decipher.setAAD(Buffer.from(binding));
    decipher.setAuthTag(bytes.subarray(bytes.length - 16));
    return Buffer.concat([decipher.update(bytes.subarray(12, bytes.length - 16)), decipher.final()]).toString('utf8');
  } catch {
    throw new ApiError('internal_error', TOTP_SEAL_BROKEN);
  }
}

export const isSealedTotpSecret = (stored: string) => stored.startsWith(SEALED);

/** A member's secret in clear, for checking a code: opened, or (still in clear) sealed in place first. */
async function memberSecret(db: Queryable, m: MemberRow & { totpSecret: string }): Promise<string> {
  const key = await sealKeyOf(db);
  if (isSealedTotpSecret(m.totpSecret)) return unseal(key, memberBinding(m.orgId, m.id), m.totpSecret);
  await replaceClearTotpSecret(db, m.orgId, m.id, m.totpSecret, seal(key, memberBinding(m.orgId, m.id), m.totpSecret));
  return m.totpSecret;
}

const SWEEP_BATCH = 500;

/**
 * Seals every TOTP secret still stored in clear (migration 0025 cannot: SQL has no AES-GCM, and the
 * seal key is derived here). Run at every start of the console (src/console/plugins/totp-sealing.ts);
 * a row changed meanwhile is left to the next pass, or to its next use. Answers how many it sealed.
 */
export async function sealClearTotpSecrets(db: Queryable): Promise<number> {
  let sealed = 0;
  for (;;) {
    const rows = await listClearTotpSecrets(db, SWEEP_BATCH);
    if (rows.length === 0) return sealed;
    const key = await sealKeyOf(db);
    let progress = 0;
    for (const r of rows) {
      if (await replaceClearTotpSecret(db, r.orgId, r.id, r.secret, seal(key, memberBinding(r.orgId, r.id), r.secret))) progress++;
    }
    sealed += progress;
    if (rows.length < SWEEP_BATCH || progress === 0) return sealed;
  }
}

/** A code as typed: apps show "123 456", people paste "123-456" or add spaces around a recovery code. */
export function normalizeCode(code: unknown): string {
  if (typeof code !== 'string') return '';
  const t = code.trim().slice(0, 64);
  const digits = t.replace(/[\s-]/g, '');
  return /^\d{6}$/.test(digits) ? digits : t.replace(/\s+/g, '');
}

/** The time step a six-digit code matches (the current one, or one either side), or null. */
function matchStep(secret: string, code: string, now: Date): number | null {
  if (!/^\d{6}$/.test(code)) return null;
  const delta = totp(secret).validate({ token: code, timestamp: now.getTime(), window: 1 });
  return delta === null ? null : Math.floor(now.getTime() / 30_000) + delta;
}

const RECOVERY_ALPHABET = 'abcdefghjkmnpqrstuvwxyz23456789';
function recoveryCode(): string {
  const bytes = randomBytes(10);
  const chars = [...bytes].map((b) => RECOVERY_ALPHABET[b % RECOVERY_ALPHABET.length]).join('');
  return `${chars.slice(0, 5)}-${chars.slice(5)}`;
}
const codeDigest = (code: string) => sha256(code.trim().toLowerCase());

/**
 * A new secret for the session to enroll, made here and kept with the session (the form carries
 * only the code): each call replaces the last, so a secret is shown once.
 */
export async function startTotpEnrollment(db: Queryable, session: ConsoleSession): Promise<{ secret: string; uri: string }> {
  const made = createTotpSecret(session.member.email);
  const key = await sealKeyOf(db);
  await setPendingTotpSecret(db, session.orgId, session.idHash, seal(key, sessionBinding(session.orgId, session.idHash), made.secret));
  return made;
}

/** The refusal of an enrollment whose password is wrong, missing or over the sign-in limits. */
export const REPLACE_FACTOR_REFUSED =
  'Enter your current password to set up an authenticator app (or too many attempts were made: password checks pause for 15 minutes after 10).';

/**
 * Confirms enrollment with a code from the session's new secret; answers the ten recovery codes,
 * shown once. Every enrollment asks for the password again, the first as well as a replacement
 * (issue 52, L5: an open session alone, left or stolen, could bind the account to someone else's
 * app), checked by checkPassword under the sign-in limits before the code is. A session held at
 * enrollment steps up to active under a new id (its cookie).
 */
export async function enrollTotp(
  db: DatabaseExecutor,
  session: ConsoleSession,
  input: { code: unknown; password?: unknown },
  actor: Actor,
  now: Date,
): Promise<{ recoveryCodes: string[]; renewed: NewSession | null }> {
  const m = await memberOf(db, session.orgId, session.member.id);
  const password = typeof input.password === 'string' ? input.password : '';
  const outcome = await checkPassword(db, { account: m.email.toLowerCase(), address: actor.address ?? '', password, stored: [m.passwordHash] }, now);
  if (outcome !== 0) throw new ApiError('unauthorized', REPLACE_FACTOR_REFUSED);
  const key = await sealKeyOf(db);
  const pending = await readPendingTotpSecret(db, session.orgId, session.idHash);
  // A pending secret written in clear by the previous version (a rolling restart) is still taken.
  const secret = pending && isSealedTotpSecret(pending) ? unseal(key, sessionBinding(session.orgId, session.idHash), pending) : pending;
  const step = secret ? matchStep(secret, normalizeCode(input.code), now) : null;
  if (!secret || step === null) throw invalid('The code does not match; enter the six digits your authenticator app shows now.');
  const codes = Array.from({ length: 10 }, recoveryCode);
  const sealed = seal(key, memberBinding(session.orgId, session.member.id), secret);
  const renewed = await db.transaction(async (tx) => {
    await updateMemberTotp(tx, session.orgId, session.member.id, sealed, step, codes.map(codeDigest));
    await setPendingTotpSecret(tx, session.orgId, session.idHash, null);
    await markSignedIn(tx, session.orgId, session.member.id, now);
    await recordAudit(
      tx,
      session.orgId,
      actor,
      { action: 'member.two_factor_enabled', target: { kind: 'member', id: session.member.id }, details: { replaced: m.totpSecret !== null } },
      now,
    );
    if (session.stage !== 'enroll') return null;
    await deleteSession(tx, session.orgId, session.idHash);
    return openSession(tx, m, 'active', actor.address ?? null, now);
  });
  return { recoveryCodes: codes, renewed };
}

/** The second step of signing in: a code from the app (each once) or a recovery code (each once). */
export async function completeTwoFactor(db: DatabaseExecutor, session: ConsoleSession, code: unknown, address: string, now: Date): Promise<NewSession> {
  if (session.stage !== 'totp') throw new ApiError('unauthorized', TWO_FACTOR_REFUSED);
  const m = await findMember(db, session.orgId, session.member.id);
  // Passkeys required (passkeys.ts): an owner or admin who has one signs in with it, never a code.
  if (m && (await mustUsePasskey(db, m))) throw new ApiError('unauthorized', PASSKEY_REQUIRED_NOT_CODE);
  const text = normalizeCode(code);
  const spent = await spendAttempt(db, m?.email.toLowerCase() ?? '', address, now);
  if (!spent) throw new ApiError('unauthorized', TWO_FACTOR_REFUSED);
  let ok = false;
  if (m?.totpSecret) {
    const step = matchStep(await memberSecret(db, { ...m, totpSecret: m.totpSecret }), text, now);
    ok =
      step !== null
        ? await useTotpStep(db, m.orgId, m.id, step)
        : /^[a-z2-9]{5}-[a-z2-9]{5}$/i.test(text) && (await useRecoveryCode(db, m.orgId, m.id, codeDigest(text)));
  }
  if (!m || !ok) {
    if (m)
      await recordAudit(
        db,
        m.orgId,
        memberActor(m, address),
        { action: 'member.sign_in_failed', target: { kind: 'member', id: m.id }, details: { step: 'code' } },
        now,
      );
    throw new ApiError('unauthorized', TWO_FACTOR_REFUSED);
  }
  await spent.giveBack();
  // The step up renews the session's id: the cookie of the half-signed-in session opens nothing more.
  return db.transaction(async (tx) => {
    await deleteSession(tx, session.orgId, session.idHash);
    await markSignedIn(tx, m.orgId, m.id, now);
    await recordAudit(
      tx,
      m.orgId,
      memberActor(m, address),
      { action: 'member.signed_in', target: { kind: 'member', id: m.id }, details: { twoFactor: true } },
      now,
    );
    return openSession(tx, m, 'active', address, now);
  });
}

export const TWO_FACTOR_REFUSED =
  'The code is not right, or was used already, or too many attempts were made. Enter the six digits your app shows now, or a recovery code.';
