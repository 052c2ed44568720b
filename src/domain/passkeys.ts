import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { isIP } from 'node:net';
import type { AuthenticationResponseJSON, AuthenticatorTransportFuture, RegistrationResponseJSON } from '@simplewebauthn/server';
import type { DatabaseExecutor, Queryable } from './database.js';
import {
  consumeChallenge,
  countPasskeys,
  deletePasskeyRow,
  findPasskeyByCredential,
  insertPasskey,
  listPasskeyRows,
  lockMemberForPasskeys,
  markSessionPasskey,
  purgeChallenges,
  readRequirePasskeys,
  renamePasskeyRow,
  setRequirePasskeys,
  usePasskeyCounter,
  type PasskeyRow,
} from '../db/repositories/passkeys.js';
import { deleteSession, findMember, markSignedIn, type MemberRow } from '../db/repositories/members.js';
import { serviceSecret } from '../db/repositories/secrets.js';
import { ApiError, invalid, notFound } from '../contract/errors.js';
import { recordAudit, type Actor } from './audit.js';
import { newId } from './ids.js';
import { checkPassword, spendAttempt } from './passwords.js';
import { memberActor, memberOf, memberView } from './members.js';
import { requireLiveOrg } from './orgs.js';
import { openSession, type ConsoleSession, type NewSession, type SignedIn } from './sessions.js';
import { ssoPolicy } from './sso/settings.js';

/**
 * The WebAuthn library, loaded on first use: with its certificate parsers it is about a quarter of
 * the modules a server loads at start, for pages few requests reach (docs/decisions.md).
 */
const webauthn = () => import('@simplewebauthn/server');

/**
 * Passkeys (CONTRACT.md section 11, amended; issue 55 item 5): WebAuthn credentials of console
 * members, several per member, named, renamable and removable, used as the second factor after
 * the password or on their own (a discoverable credential names its member). `@simplewebauthn/server`
 * does every WebAuthn check; this module keeps the rules around it:
 *
 * - registration asks for the password again first (issue 52, L5: a session alone never binds the
 *   account to another authenticator), under the sign-in limits;
 * - every challenge is made here, one-time and short-lived: its purpose, expiry and binding (the
 *   session, or before sign-in the form cookie's token) are sealed into it by an HMAC under a
 *   service secret, so a page that offers a passkey writes nothing; using it inserts its digest in
 *   webauthn_challenges, whose key lets it in once (src/db/repositories/passkeys.ts);
 * - a use whose signature counter does not move forward is a cloned authenticator's: refused, and
 *   audited (`member.passkey_refused`); the database moves the counter, so two uses of one value
 *   cannot both pass;
 * - every sign-in by passkey spends the same limits per account and address as a password or a
 *   code, and every registration, rename, removal, refusal and use is in the audit log.
 */

/** The relying party: the service's public address (PUBLIC_BASE_URL, else the listener's). */
export interface RelyingParty {
  /** The host name, the WebAuthn RP ID. */
  id: string;
  /** The origin pages are served from (scheme, host, port). */
  origin: string;
  name: string;
}

/**
 * The relying party of a base URL, or null when its host is an IP address: WebAuthn takes only a
 * domain name as RP ID, so passkeys need the console reached by a name (`localhost` will do).
 */
export function relyingPartyOf(baseUrl: string): RelyingParty | null {
  let url: URL;
  try {
    url = new URL(baseUrl);
  } catch {
    return null;
  }
  const host = url.hostname.replace(/^\[|\]$/g, '');
  if (!host || isIP(host) !== 0) return null;
  return { id: host, origin: url.origin, name: 'Climate Pulse' };
}

export const PASSKEY_NAME_MAX = 64;

/** One refusal for every passkey that does not sign in: it never says which check failed. */
export const PASSKEY_REFUSED =
  'That passkey was not accepted: it is not registered here, was removed, or the attempt was too old or used already (or too many attempts were made: they pause for 15 minutes after 10). Try again, or sign in with your password.';
export const PASSKEY_PASSWORD_REFUSED =
  'Enter your current password to add a passkey (or too many attempts were made: password checks pause for 15 minutes after 10).';
export const PASSKEY_REGISTRATION_REFUSED =
  'The passkey was not added: your device did not create it, the attempt was too old or used already, or that passkey is registered already. Start again.';
export const PASSKEY_LAST_REQUIRED = 'Your organization requires a passkey for owners and admins: add another passkey before you remove this one.';
export const PASSKEY_REQUIREMENT_NEEDS_OWN =
  'Add a passkey of your own (Account page) before you require passkeys: otherwise you would be held at your next request.';
export const PASSKEY_HELD_USE_YOURS =
  'Your organization requires owners and admins to sign in with a passkey, and you have one: use it to continue (a new one can be added after).';
export const PASSKEYS_NEED_A_NAME =
  'Passkeys need the console to be reached by a name (such as localhost or console.example.com), not an IP address: set PUBLIC_BASE_URL.';

const sha256 = (s: string | Buffer) => createHash('sha256').update(s).digest();
const b64 = (b: Buffer | Uint8Array) => Buffer.from(b).toString('base64url');
/** The WebAuthn user handle of a member: their id's bytes (random, names no one). */
const userHandle = (memberId: string) => Buffer.from(memberId, 'utf8');

// Challenges.

type Purpose = 'register' | 'second_factor' | 'sign_in';
const PURPOSE_BYTE: Record<Purpose, number> = { register: 1, second_factor: 2, sign_in: 3 };
/** How long a challenge (and so a page offering a passkey) may be answered. */
export const CHALLENGE_TTL_MS = 5 * 60_000;
const MAC_BYTES = 16;
const CHALLENGE_BYTES = 1 + 6 + 16 + MAC_BYTES;

const challengeKeys = new WeakMap<object, Promise<Buffer>>();
function challengeKeyOf(db: Queryable): Promise<Buffer> {
  let key = challengeKeys.get(db);
  if (!key) {
    key = serviceSecret(db, 'webauthn_challenge').then((secret) => sha256(`climate-pulse webauthn challenge\0${secret}`));
    key.catch(() => challengeKeys.delete(db));
    challengeKeys.set(db, key);
  }
  return key;
}

const macOf = (key: Buffer, head: Buffer, binding: string) =>
  createHmac('sha256', key).update(head).update('\0').update(binding).digest().subarray(0, MAC_BYTES);

async function makeChallenge(db: Queryable, purpose: Purpose, binding: string, now: Date): Promise<Buffer> {
  const head = Buffer.alloc(1 + 6 + 16);
  head[0] = PURPOSE_BYTE[purpose];
  head.writeUIntBE(Math.floor((now.getTime() + CHALLENGE_TTL_MS) / 1000), 1, 6);
  randomBytes(16).copy(head, 7);
  return Buffer.concat([head, macOf(await challengeKeyOf(db), head, binding)]);
}

/** A challenge this service made for `purpose` and `binding`, still in time: its digest and expiry; else null. */
async function checkChallenge(db: Queryable, text: string, purpose: Purpose, binding: string, now: Date): Promise<{ digest: Buffer; expiresAt: Date } | null> {
  const bytes = Buffer.from(text, 'base64url');
  if (bytes.length !== CHALLENGE_BYTES || b64(bytes) !== text || bytes[0] !== PURPOSE_BYTE[purpose]) return null;
  const head = bytes.subarray(0, CHALLENGE_BYTES - MAC_BYTES);
  if (!timingSafeEqual(macOf(await challengeKeyOf(db), head, binding), bytes.subarray(head.length))) return null;
  const expiresAt = new Date(head.readUIntBE(1, 6) * 1000);
  if (expiresAt.getTime() <= now.getTime()) return null;
  return { digest: sha256(bytes), expiresAt };
}

/** Lets a challenge in once (the database decides); now and then, purges the expired ones. */
async function spendChallenge(db: Queryable, c: { digest: Buffer; expiresAt: Date }, now: Date): Promise<boolean> {
  if (Math.random() < 0.02) await purgeChallenges(db, now);
  return consumeChallenge(db, c.digest, c.expiresAt);
}

/** The challenge a WebAuthn answer carries (in its client data), or '' when it has none. */
function challengeOf(response: { response: { clientDataJSON: string } }): string {
  try {
    const data = JSON.parse(Buffer.from(response.response.clientDataJSON, 'base64url').toString('utf8')) as { challenge?: unknown };
    return typeof data.challenge === 'string' ? data.challenge : '';
  } catch {
    return '';
  }
}

/** A browser's answer as posted in a form field (JSON text), in the shape the library reads; null when it is not. */
function parseAnswer<T extends RegistrationResponseJSON | AuthenticationResponseJSON>(text: unknown, kind: 'attestation' | 'assertion'): T | null {
  if (typeof text !== 'string' || text.length === 0 || text.length > 16_384) return null;
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    return null;
  }
  const r = v as { id?: unknown; rawId?: unknown; type?: unknown; response?: Record<string, unknown> };
  if (typeof r !== 'object' || r === null || typeof r.id !== 'string' || typeof r.rawId !== 'string' || r.type !== 'public-key') return null;
  if (typeof r.response !== 'object' || r.response === null || typeof r.response.clientDataJSON !== 'string') return null;
  const field = kind === 'attestation' ? 'attestationObject' : 'signature';
  if (typeof r.response[field] !== 'string') return null;
  if (kind === 'assertion' && typeof r.response.authenticatorData !== 'string') return null;
  return { clientExtensionResults: {}, ...(v as object) } as T;
}

// What a member sees of their passkeys.

export interface PasskeyView {
  id: string;
  name: string;
  createdAt: string;
  lastUsedAt: string | null;
  /** Synced by a password manager or a platform account (the authenticator says so). */
  backedUp: boolean;
}

const view = (p: PasskeyRow): PasskeyView => ({ id: p.id, name: p.name, createdAt: p.createdAt, lastUsedAt: p.lastUsedAt, backedUp: p.backedUp });

export async function listPasskeys(db: Queryable, orgId: string, memberId: string): Promise<PasskeyView[]> {
  return (await listPasskeyRows(db, orgId, memberId)).map(view);
}

/** A name as typed: trimmed, no control characters, 1 to 64 characters; empty: `fallback`. */
function nameOf(input: unknown, fallback: string): string {
  const name = (typeof input === 'string' ? input : '').replace(/[\p{Cc}\p{Cf}]/gu, '').trim();
  if (name === '') return fallback;
  if ([...name].length > PASSKEY_NAME_MAX) throw invalid(`A passkey's name must be at most ${PASSKEY_NAME_MAX} characters long.`);
  return name;
}

// The organization's requirement.

const HELD_ROLES: readonly string[] = ['owner', 'admin'];

export const requiresPasskeys = (db: Queryable, orgId: string) => readRequirePasskeys(db, orgId);

/**
 * Whether a member may sign in with a code instead of a passkey: not an owner or admin who has a
 * passkey while the organization requires them (they sign in with it; without one yet, they are
 * held after signing in until they add one).
 */
export async function mustUsePasskey(db: Queryable, m: Pick<MemberRow, 'orgId' | 'id' | 'role'>): Promise<boolean> {
  if (!HELD_ROLES.includes(m.role)) return false;
  // While SSO is required, the break-glass owner's way in is a passkey: never a TOTP code (issue 55).
  const policy = await ssoPolicy(db, m.orgId);
  const required = (policy.required && policy.breakGlassMemberId === m.id) || (await readRequirePasskeys(db, m.orgId));
  return required && (await countPasskeys(db, m.orgId, m.id)) > 0;
}

/**
 * Whether the member may sign in by passkey (alone, without the password): always, but while the
 * organization requires single sign-on (issue 55, item 4), when only its break-glass owner may.
 */
export async function mayUsePasskeySignIn(db: Queryable, orgId: string, memberId: string): Promise<boolean> {
  const policy = await ssoPolicy(db, orgId);
  return !policy.required || policy.breakGlassMemberId === memberId;
}

/**
 * An owner's "passkeys required for owners and admins". Turning it on asks that the owner who does
 * it has a passkey (else their own session would be held at once). Audited
 * (`organization.passkeys_required`).
 */
export async function updateRequirePasskeys(db: DatabaseExecutor, orgId: string, on: boolean, actor: Actor, now: Date): Promise<void> {
  await db.transaction(async (tx) => {
    if (on && actor.kind === 'member' && (await countPasskeys(tx, orgId, actor.memberId)) === 0) throw invalid(PASSKEY_REQUIREMENT_NEEDS_OWN);
    if (!(await setRequirePasskeys(tx, orgId, on))) throw notFound('Organization');
    await recordAudit(
      tx,
      orgId,
      actor,
      { action: 'organization.passkeys_required', target: { kind: 'organization', id: orgId }, details: { required: on } },
      now,
    );
  });
}

// The operator's view (operator API and CLI): the way back in for a member who lost their passkeys.

/** A passkey as the operator sees it: never the public key, only the credential id's first characters. */
export interface OperatorPasskeyView extends PasskeyView {
  /** The first 8 characters of the credential id (base64url), to tell passkeys apart; never the whole id. */
  credentialStart: string;
}

/** A member's passkeys, oldest first, for the operator (not_found: no such live organization or member). */
export async function listMemberPasskeys(db: Queryable, orgId: string, memberId: string): Promise<OperatorPasskeyView[]> {
  await requireLiveOrg(db, orgId);
  const m = await memberOf(db, orgId, memberId);
  return (await listPasskeyRows(db, m.orgId, m.id)).map((p) => ({ ...view(p), credentialStart: b64(p.credentialId).slice(0, 8) }));
}

/**
 * The operator removes one of a member's passkeys (a lost or stolen device), audited as the
 * member's own removal (`member.passkey_removed`, the operator as actor). Unlike the member's own
 * removal, the last passkey of an owner or admin may go under the requirement: that is the way
 * back in for one who lost it (they sign in with their password, are held, and add a new one).
 */
export async function removeMemberPasskey(
  db: DatabaseExecutor,
  orgId: string,
  memberId: string,
  id: string,
  actor: Actor,
  now: Date,
): Promise<OperatorPasskeyView> {
  await requireLiveOrg(db, orgId);
  return db.transaction(async (tx) => {
    const m = await memberOf(tx, orgId, memberId);
    await lockMemberForPasskeys(tx, m.orgId, m.id);
    const row = await deletePasskeyRow(tx, m.orgId, m.id, id);
    if (!row) throw new ApiError('not_found', `No passkey ${JSON.stringify(id)} of this member.`);
    await recordAudit(
      tx,
      row.orgId,
      actor,
      { action: 'member.passkey_removed', target: { kind: 'member', id: row.memberId }, details: { passkey: row.id, name: row.name } },
      now,
    );
    return { ...view(row), credentialStart: b64(row.credentialId).slice(0, 8) };
  });
}

/** The organization's "passkeys required for owners and admins" (not_found: no such live organization). */
export async function readPasskeySettings(db: Queryable, orgId: string): Promise<{ required: boolean }> {
  await requireLiveOrg(db, orgId);
  return { required: await readRequirePasskeys(db, orgId) };
}

// Registration.

/** What binds a registration's challenge: the session, and the name the member gave. */
const registrationBinding = (s: Pick<ConsoleSession, 'orgId' | 'idHash'>, name: string) => `register\0${s.orgId}\0${s.idHash.toString('hex')}\0${name}`;

export interface RegistrationStart {
  /** The options for the browser (`@simplewebauthn/browser`'s startRegistration), as JSON text. */
  options: string;
  name: string;
}

/**
 * The first step of adding a passkey: the password again (checkPassword, under the sign-in limits),
 * then the options of a registration bound to this session and this name, valid 5 minutes.
 */
export async function startPasskeyRegistration(
  db: Queryable,
  rp: RelyingParty,
  session: ConsoleSession,
  input: { password: unknown; name: unknown },
  actor: Actor,
  now: Date,
): Promise<RegistrationStart> {
  const m = await memberOf(db, session.orgId, session.member.id);
  const existing = await listPasskeyRows(db, m.orgId, m.id);
  // Held by the requirement with a passkey already: only that passkey lets the session on, never
  // a new one made with the password alone (which would make the requirement a password's).
  if (session.stage === 'passkey' && existing.length > 0) throw new ApiError('unauthorized', PASSKEY_HELD_USE_YOURS);
  const name = nameOf(input.name, `Passkey ${existing.length + 1}`);
  const password = typeof input.password === 'string' ? input.password : '';
  const outcome = await checkPassword(db, { account: m.email.toLowerCase(), address: actor.address ?? '', password, stored: [m.passwordHash] }, now);
  if (outcome !== 0) throw new ApiError('unauthorized', PASSKEY_PASSWORD_REFUSED);
  const options = await (await webauthn()).generateRegistrationOptions({
    rpName: rp.name,
    rpID: rp.id,
    userName: m.email,
    userID: new Uint8Array(userHandle(m.id)),
    userDisplayName: `${m.email} (${session.orgName})`,
    challenge: new Uint8Array(await makeChallenge(db, 'register', registrationBinding(session, name), now)),
    timeout: CHALLENGE_TTL_MS,
    attestationType: 'none',
    excludeCredentials: existing.map((p) => ({ id: b64(p.credentialId), transports: p.transports as AuthenticatorTransportFuture[] })),
    // A passkey: discoverable (it can sign in alone) and verifying its user (a PIN or biometrics).
    authenticatorSelection: { residentKey: 'required', requireResidentKey: true, userVerification: 'required' },
  });
  return { options: JSON.stringify(options), name };
}

/**
 * The second step: the browser's answer, verified against the challenge of the first (this
 * session, this name, in time, once), stored, audited (`member.passkey_added`). The session then
 * counts as having proved a passkey; one held by the requirement steps up under a new id.
 */
export async function finishPasskeyRegistration(
  db: DatabaseExecutor,
  rp: RelyingParty,
  session: ConsoleSession,
  input: { name: unknown; response: unknown },
  actor: Actor,
  now: Date,
): Promise<{ passkey: PasskeyView; renewed: NewSession | null }> {
  const refused = () => invalid(PASSKEY_REGISTRATION_REFUSED);
  const name = typeof input.name === 'string' ? input.name : '';
  const response = parseAnswer<RegistrationResponseJSON>(input.response, 'attestation');
  if (!response) throw refused();
  const challenge = await checkChallenge(db, challengeOf(response), 'register', registrationBinding(session, name), now);
  if (!challenge) throw refused();
  let info: Extract<Awaited<ReturnType<typeof import('@simplewebauthn/server').verifyRegistrationResponse>>, { verified: true }>['registrationInfo'];
  try {
    const verified = await (await webauthn()).verifyRegistrationResponse({
      response,
      expectedChallenge: b64(Buffer.from(challengeOf(response), 'base64url')),
      expectedOrigin: rp.origin,
      expectedRPID: rp.id,
      requireUserVerification: true,
    });
    if (!verified.verified) throw refused();
    info = verified.registrationInfo;
  } catch {
    throw refused();
  }
  const m = await memberOf(db, session.orgId, session.member.id);
  if (!(await spendChallenge(db, challenge, now))) throw refused();
  const row: Omit<PasskeyRow, 'lastUsedAt'> = {
    orgId: m.orgId,
    id: newId('pk'),
    memberId: m.id,
    credentialId: Buffer.from(info.credential.id, 'base64url'),
    publicKey: Buffer.from(info.credential.publicKey),
    signCount: info.credential.counter,
    transports: (info.credential.transports ?? []).filter((t) => /^[a-z-]{1,16}$/.test(t)).slice(0, 8),
    name,
    backedUp: info.credentialBackedUp,
    createdAt: now.toISOString(),
  };
  return db.transaction(async (tx) => {
    await lockMemberForPasskeys(tx, m.orgId, m.id);
    if (session.stage === 'passkey' && (await countPasskeys(tx, m.orgId, m.id)) > 0) throw new ApiError('unauthorized', PASSKEY_HELD_USE_YOURS);
    if (!(await insertPasskey(tx, row))) throw refused();
    await recordAudit(tx, m.orgId, actor, { action: 'member.passkey_added', target: { kind: 'member', id: m.id }, details: { passkey: row.id, name } }, now);
    if (session.stage === 'passkey') {
      await deleteSession(tx, session.orgId, session.idHash);
      const renewed = await openSession(tx, m, 'active', actor.address ?? null, now, true);
      return { passkey: view({ ...row, lastUsedAt: null }), renewed };
    }
    await markSessionPasskey(tx, session.orgId, session.idHash);
    return { passkey: view({ ...row, lastUsedAt: null }), renewed: null };
  });
}

// Renaming and removing.

export async function renamePasskey(db: DatabaseExecutor, session: ConsoleSession, id: unknown, name: unknown, actor: Actor, now: Date): Promise<PasskeyView> {
  const newName = nameOf(name, '');
  if (newName === '') throw invalid("Give the passkey a name (what you will recognise it by: 'Work laptop').");
  return db.transaction(async (tx) => {
    const row = typeof id === 'string' ? await renamePasskeyRow(tx, session.orgId, session.member.id, id, newName) : null;
    if (!row) throw notFound('Passkey');
    await recordAudit(
      tx,
      row.orgId,
      actor,
      { action: 'member.passkey_renamed', target: { kind: 'member', id: row.memberId }, details: { passkey: row.id, name: newName } },
      now,
    );
    return view(row);
  });
}

/**
 * Removes one of the member's own passkeys: it signs in nowhere from then on. Under the requirement,
 * an owner's or admin's last passkey stays (docs/decisions.md, "Passkeys required").
 */
export async function removePasskey(db: DatabaseExecutor, session: ConsoleSession, id: unknown, actor: Actor, now: Date): Promise<PasskeyView> {
  return db.transaction(async (tx) => {
    await lockMemberForPasskeys(tx, session.orgId, session.member.id);
    const row = typeof id === 'string' ? await deletePasskeyRow(tx, session.orgId, session.member.id, id) : null;
    if (!row) throw notFound('Passkey');
    if (
      HELD_ROLES.includes(session.member.role) &&
      (await readRequirePasskeys(tx, session.orgId)) &&
      (await countPasskeys(tx, session.orgId, session.member.id)) === 0
    ) {
      throw invalid(PASSKEY_LAST_REQUIRED);
    }
    await recordAudit(
      tx,
      row.orgId,
      actor,
      { action: 'member.passkey_removed', target: { kind: 'member', id: row.memberId }, details: { passkey: row.id, name: row.name } },
      now,
    );
    return view(row);
  });
}

// Signing in.

const secondFactorBinding = (s: Pick<ConsoleSession, 'orgId' | 'idHash'>) => `second\0${s.orgId}\0${s.idHash.toString('hex')}`;
const signInBinding = (formToken: string) => `sign-in\0${formToken}`;

/** The options of a passkey as the second factor of this session: the member's own passkeys. */
export async function secondFactorOptions(db: Queryable, rp: RelyingParty, session: ConsoleSession, now: Date): Promise<string | null> {
  const rows = await listPasskeyRows(db, session.orgId, session.member.id);
  if (rows.length === 0) return null;
  const options = await (await webauthn()).generateAuthenticationOptions({
    rpID: rp.id,
    challenge: new Uint8Array(await makeChallenge(db, 'second_factor', secondFactorBinding(session), now)),
    timeout: CHALLENGE_TTL_MS,
    userVerification: 'required',
    allowCredentials: rows.map((p) => ({ id: b64(p.credentialId), transports: p.transports as AuthenticatorTransportFuture[] })),
  });
  return JSON.stringify(options);
}

/**
 * The options of a passkey sign-in from the sign-in page: any passkey of this site (a discoverable
 * credential names its member), bound to the page's form token (the form cookie's, before sign-in).
 */
export async function passkeySignInOptions(db: Queryable, rp: RelyingParty, formToken: string, now: Date): Promise<string> {
  const options = await (await webauthn()).generateAuthenticationOptions({
    rpID: rp.id,
    challenge: new Uint8Array(await makeChallenge(db, 'sign_in', signInBinding(formToken), now)),
    timeout: CHALLENGE_TTL_MS,
    userVerification: 'required',
  });
  return JSON.stringify(options);
}

interface Asserted {
  passkey: PasskeyRow;
  member: MemberRow;
}

/**
 * Checks a browser's assertion: its challenge (this service's, for this purpose and binding, in
 * time), its credential (registered, of a live organization, of `only` when given), the limits of
 * its member's account and the address, the signature and user verification (the library), the
 * counter (forward, else refused and audited as a clone), and lets the challenge in once.
 */
async function verifyAssertion(
  db: Queryable,
  rp: RelyingParty,
  text: unknown,
  purpose: Purpose,
  binding: string,
  address: string,
  now: Date,
  only?: { orgId: string; memberId: string },
): Promise<Asserted> {
  const refused = () => new ApiError('unauthorized', PASSKEY_REFUSED);
  const response = parseAnswer<AuthenticationResponseJSON>(text, 'assertion');
  if (!response) throw refused();
  const challengeText = challengeOf(response);
  const challenge = await checkChallenge(db, challengeText, purpose, binding, now);
  const rawId = Buffer.from(response.rawId, 'base64url');
  const pk = challenge && rawId.length > 0 ? await findPasskeyByCredential(db, rawId) : null;
  const mine = pk && (!only || (pk.orgId === only.orgId && pk.memberId === only.memberId)) ? pk : null;
  const m = mine ? await findMember(db, mine.orgId, mine.memberId) : null;
  // The member's account when the credential names one, else the credential itself: a stranger's
  // guesses spend the address's limit, never a member's.
  const spent = await spendAttempt(db, m ? m.email.toLowerCase() : `passkey:${response.rawId.slice(0, 200)}`, address, now);
  if (!spent || !challenge || !mine || !m) throw refused();
  const handle = response.response.userHandle;
  let counter: number;
  try {
    if (handle !== undefined && handle !== '' && handle !== b64(userHandle(m.id))) throw new Error('another user handle');
    const verified = await (await webauthn()).verifyAuthenticationResponse({
      response,
      expectedChallenge: challengeText,
      expectedOrigin: rp.origin,
      expectedRPID: rp.id,
      // The counter is checked below, where a clone is told from any other failure.
      credential: {
        id: b64(mine.credentialId),
        publicKey: new Uint8Array(mine.publicKey),
        counter: 0,
        transports: mine.transports as AuthenticatorTransportFuture[],
      },
      requireUserVerification: true,
    });
    if (!verified.verified) throw new Error('not verified');
    counter = verified.authenticationInfo.newCounter;
  } catch {
    await recordAudit(
      db,
      m.orgId,
      memberActor(m, address),
      { action: 'member.sign_in_failed', target: { kind: 'member', id: m.id }, details: { step: 'passkey' } },
      now,
    );
    throw refused();
  }
  const clone = () =>
    recordAudit(
      db,
      m.orgId,
      memberActor(m, address),
      {
        action: 'member.passkey_refused',
        target: { kind: 'member', id: m.id },
        details: { passkey: mine.id, name: mine.name, reason: 'counter', stored: mine.signCount, received: counter },
      },
      now,
    );
  // A counter that did not move forward: the key was copied (a cloned authenticator).
  if ((counter > 0 || mine.signCount > 0) && counter <= mine.signCount) {
    await clone();
    throw refused();
  }
  // The same answer posted again finds its challenge used.
  if (!(await spendChallenge(db, challenge, now))) throw refused();
  // Another use moved the counter past this one's meanwhile: two authenticators with one key.
  if (!(await usePasskeyCounter(db, mine.orgId, mine.id, counter, now))) {
    await clone();
    throw refused();
  }
  await spent.giveBack();
  return { passkey: mine, member: m };
}

/** The second step of signing in by a passkey of the member's (instead of a code); the session renews its id. */
export async function completePasskeySecondFactor(
  db: DatabaseExecutor,
  rp: RelyingParty,
  session: ConsoleSession,
  response: unknown,
  address: string,
  now: Date,
): Promise<NewSession> {
  if (session.stage !== 'totp' && session.stage !== 'passkey') throw new ApiError('unauthorized', PASSKEY_REFUSED);
  const { passkey: pk, member: m } = await verifyAssertion(db, rp, response, 'second_factor', secondFactorBinding(session), address, now, {
    orgId: session.orgId,
    memberId: session.member.id,
  });
  return db.transaction(async (tx) => {
    await deleteSession(tx, session.orgId, session.idHash);
    await markSignedIn(tx, m.orgId, m.id, now);
    await recordAudit(
      tx,
      m.orgId,
      memberActor(m, address),
      { action: 'member.signed_in', target: { kind: 'member', id: m.id }, details: { twoFactor: true, passkey: pk.id, passkeyName: pk.name } },
      now,
    );
    return openSession(tx, m, 'active', address, now, true);
  });
}

/**
 * Signing in by passkey alone, from the sign-in page: the credential names its member (a passkey
 * verifies its user, so it is two factors in one). Refused, as every failure, with PASSKEY_REFUSED
 * when the member may not sign in by passkey (mayUsePasskeySignIn).
 */
export async function signInWithPasskey(
  db: DatabaseExecutor,
  rp: RelyingParty,
  formToken: string,
  response: unknown,
  address: string,
  now: Date,
): Promise<SignedIn> {
  const { passkey: pk, member: m } = await verifyAssertion(db, rp, response, 'sign_in', signInBinding(formToken), address, now);
  if (!(await mayUsePasskeySignIn(db, m.orgId, m.id))) throw new ApiError('unauthorized', PASSKEY_REFUSED);
  return db.transaction(async (tx) => {
    await markSignedIn(tx, m.orgId, m.id, now);
    await recordAudit(
      tx,
      m.orgId,
      memberActor(m, address),
      { action: 'member.signed_in', target: { kind: 'member', id: m.id }, details: { twoFactor: true, passkey: pk.id, passkeyName: pk.name, alone: true } },
      now,
    );
    return { ...(await openSession(tx, m, 'active', address, now, true)), member: memberView(m) };
  });
}
