import { sql, type Queryable } from '../executor.js';
import { iso, isoOrNull } from './time.js';

/** One mapping of an IdP group to a role (and, for managers, teams). */
export interface GroupRole {
  group: string;
  role: 'owner' | 'admin' | 'manager' | 'viewer';
  teams: string[];
}

export interface SsoSettingsRow {
  orgId: string;
  kind: 'oidc' | 'saml';
  oidcIssuer: string | null;
  oidcClientId: string | null;
  /** Sealed (src/domain/sso/seal.ts); never in clear here. */
  oidcClientSecretSealed: string | null;
  groupsClaim: string;
  groupRoles: GroupRole[];
  defaultRole: 'admin' | 'manager' | 'viewer' | null;
  required: boolean;
  breakGlassMemberId: string | null;
  sessionMaxHours: number;
  createdAt: string;
  updatedAt: string;
}

interface RawSettings {
  org_id: string;
  kind: 'oidc' | 'saml';
  oidc_issuer: string | null;
  oidc_client_id: string | null;
  oidc_client_secret_sealed: string | null;
  groups_claim: string;
  group_roles: GroupRole[] | string;
  default_role: SsoSettingsRow['defaultRole'];
  required: boolean;
  break_glass_member_id: string | null;
  session_max_hours: number;
  created_at: Date | string;
  updated_at: Date | string;
}

const settings = (r: RawSettings): SsoSettingsRow => ({
  orgId: r.org_id,
  kind: r.kind,
  oidcIssuer: r.oidc_issuer,
  oidcClientId: r.oidc_client_id,
  oidcClientSecretSealed: r.oidc_client_secret_sealed,
  groupsClaim: r.groups_claim,
  groupRoles: typeof r.group_roles === 'string' ? JSON.parse(r.group_roles) : r.group_roles,
  defaultRole: r.default_role,
  required: r.required,
  breakGlassMemberId: r.break_glass_member_id,
  sessionMaxHours: Number(r.session_max_hours),
  createdAt: iso(r.created_at),
  updatedAt: iso(r.updated_at),
});

const readSettings = sql('sso.settings', `SELECT * FROM sso_settings WHERE org_id = $1`);
export async function findSsoSettings(db: Queryable, orgId: string): Promise<SsoSettingsRow | null> {
  const [r] = await db.query<RawSettings>(readSettings, [orgId]);
  return r ? settings(r) : null;
}

const lockSettings = sql('sso.settings_lock', `SELECT * FROM sso_settings WHERE org_id = $1 FOR UPDATE`);
export async function lockSsoSettings(db: Queryable, orgId: string): Promise<SsoSettingsRow | null> {
  const [r] = await db.query<RawSettings>(lockSettings, [orgId]);
  return r ? settings(r) : null;
}

const upsertSettings = sql(
  'sso.settings_upsert',
  `INSERT INTO sso_settings (org_id, kind, oidc_issuer, oidc_client_id, oidc_client_secret_sealed, groups_claim, group_roles, default_role,
                             required, break_glass_member_id, session_max_hours, created_at, updated_at)
   VALUES ($1, $2, $3, $4, $5, $6, $7::jsonb, $8, $9, $10, $11, $12, $12)
   ON CONFLICT (org_id) DO UPDATE SET kind = $2, oidc_issuer = $3, oidc_client_id = $4, oidc_client_secret_sealed = $5, groups_claim = $6,
     group_roles = $7::jsonb, default_role = $8, required = $9, break_glass_member_id = $10, session_max_hours = $11, updated_at = $12`,
);
export async function writeSsoSettings(db: Queryable, s: Omit<SsoSettingsRow, 'createdAt' | 'updatedAt'>, at: Date): Promise<void> {
  await db.query(upsertSettings, [
    s.orgId,
    s.kind,
    s.oidcIssuer,
    s.oidcClientId,
    s.oidcClientSecretSealed,
    s.groupsClaim,
    JSON.stringify(s.groupRoles),
    s.defaultRole,
    s.required,
    s.breakGlassMemberId,
    s.sessionMaxHours,
    at.toISOString(),
  ]);
}

const deleteSettings = sql('sso.settings_delete', `DELETE FROM sso_settings WHERE org_id = $1 RETURNING 1 AS n`);
export async function deleteSsoSettings(db: Queryable, orgId: string): Promise<boolean> {
  return (await db.query(deleteSettings, [orgId])).length > 0;
}

// Domains.

export interface SsoDomainRow {
  orgId: string;
  domain: string;
  txtToken: string;
  createdAt: string;
  verifiedAt: string | null;
  verifiedBy: 'operator' | 'dns' | null;
}

interface RawDomain {
  org_id: string;
  domain: string;
  txt_token: string;
  created_at: Date | string;
  verified_at: Date | string | null;
  verified_by: 'operator' | 'dns' | null;
}

const domain = (r: RawDomain): SsoDomainRow => ({
  orgId: r.org_id,
  domain: r.domain,
  txtToken: r.txt_token,
  createdAt: iso(r.created_at),
  verifiedAt: isoOrNull(r.verified_at),
  verifiedBy: r.verified_by,
});

const listDomains = sql('sso.domains', `SELECT * FROM sso_domains WHERE org_id = $1 ORDER BY domain`);
export async function listSsoDomains(db: Queryable, orgId: string): Promise<SsoDomainRow[]> {
  return (await db.query<RawDomain>(listDomains, [orgId])).map(domain);
}

const oneDomain = sql('sso.domain', `SELECT * FROM sso_domains WHERE org_id = $1 AND domain = $2`);
export async function findSsoDomain(db: Queryable, orgId: string, name: string): Promise<SsoDomainRow | null> {
  const [r] = await db.query<RawDomain>(oneDomain, [orgId, name]);
  return r ? domain(r) : null;
}

const insertDomain = sql(
  'sso.domain_insert',
  `INSERT INTO sso_domains (org_id, domain, txt_token, created_at) VALUES ($1, $2, $3, $4) ON CONFLICT (org_id, domain) DO NOTHING RETURNING *`,
);
export async function insertSsoDomain(db: Queryable, orgId: string, name: string, token: string, at: Date): Promise<SsoDomainRow | null> {
  const [r] = await db.query<RawDomain>(insertDomain, [orgId, name, token, at.toISOString()]);
  return r ? domain(r) : null;
}

const verifyDomain = sql(
  'sso.domain_verify',
  `UPDATE sso_domains SET verified_at = $3, verified_by = $4 WHERE org_id = $1 AND domain = $2 AND verified_at IS NULL RETURNING *`,
);
/** Marks a domain verified; null when it was already, or is not the organization's. A domain verified elsewhere raises the unique index's error. */
export async function markSsoDomainVerified(db: Queryable, orgId: string, name: string, by: 'operator' | 'dns', at: Date): Promise<SsoDomainRow | null> {
  const [r] = await db.query<RawDomain>(verifyDomain, [orgId, name, at.toISOString(), by]);
  return r ? domain(r) : null;
}

const deleteDomain = sql('sso.domain_delete', `DELETE FROM sso_domains WHERE org_id = $1 AND domain = $2 RETURNING *`);
export async function deleteSsoDomain(db: Queryable, orgId: string, name: string): Promise<SsoDomainRow | null> {
  const [r] = await db.query<RawDomain>(deleteDomain, [orgId, name]);
  return r ? domain(r) : null;
}

/** The organization (live, with SSO set up) whose verified domain this is, or null. */
const verifiedOwner = sql(
  'sso.domain_owner',
  `SELECT d.org_id, s.kind FROM sso_domains d
     JOIN organizations o ON o.id = d.org_id AND o.deleted_at IS NULL
     JOIN sso_settings s ON s.org_id = d.org_id
    WHERE d.domain = $1 AND d.verified_at IS NOT NULL`,
);
export async function findVerifiedDomainOwner(db: Queryable, name: string): Promise<{ orgId: string; kind: 'oidc' | 'saml' } | null> {
  const [r] = await db.query<{ org_id: string; kind: 'oidc' | 'saml' }>(verifiedOwner, [name]);
  return r ? { orgId: r.org_id, kind: r.kind } : null;
}

// Sign-ins under way.

export interface SignInRow {
  orgId: string;
  browserHash: Buffer;
  nonce: string;
  pkceVerifier: string;
  expiresAt: string;
}

const insertSignIn = sql(
  'sso.sign_in_insert',
  `INSERT INTO sso_sign_ins (org_id, state_hash, browser_hash, nonce, pkce_verifier, created_at, expires_at) VALUES ($1, $2, $3, $4, $5, $6, $7)`,
);
export async function insertSignInRow(
  db: Queryable,
  s: { orgId: string; stateHash: Buffer; browserHash: Buffer; nonce: string; pkceVerifier: string; at: Date; expiresAt: Date },
): Promise<void> {
  await db.query(insertSignIn, [s.orgId, s.stateHash, s.browserHash, s.nonce, s.pkceVerifier, s.at.toISOString(), s.expiresAt.toISOString()]);
}

const takeSignIn = sql(
  'sso.sign_in_take',
  `DELETE FROM sso_sign_ins WHERE org_id = $1 AND state_hash = $2 RETURNING org_id, browser_hash, nonce, pkce_verifier, expires_at`,
);
/** Consumes the sign-in a state names: the one caller that deletes it gets it; any other, null. */
export async function takeSignInRow(db: Queryable, orgId: string, stateHash: Buffer): Promise<SignInRow | null> {
  const [r] = await db.query<{ org_id: string; browser_hash: Buffer | Uint8Array; nonce: string; pkce_verifier: string; expires_at: Date | string }>(
    takeSignIn,
    [orgId, stateHash],
  );
  return r ? { orgId: r.org_id, browserHash: Buffer.from(r.browser_hash), nonce: r.nonce, pkceVerifier: r.pkce_verifier, expiresAt: iso(r.expires_at) } : null;
}

const purgeSignIns = sql('sso.sign_in_purge', `DELETE FROM sso_sign_ins WHERE org_id = $1 AND expires_at <= $2`);
export async function purgeExpiredSignIns(db: Queryable, orgId: string, now: Date): Promise<void> {
  await db.query(purgeSignIns, [orgId, now.toISOString()]);
}

// Console sessions opened through the IdP.

const linkSession = sql(
  'sso.session_link',
  `UPDATE console_sessions SET sso_protocol = $3, sso_subject = $4, sso_session = $5, ends_at = $6 WHERE org_id = $1 AND id_hash = $2`,
);
export async function linkSessionToIdp(
  db: Queryable,
  orgId: string,
  idHash: Buffer,
  link: { protocol: 'oidc' | 'saml'; subject: string; session: string | null; endsAt: Date },
): Promise<void> {
  await db.query(linkSession, [orgId, idHash, link.protocol, link.subject, link.session, link.endsAt.toISOString()]);
}

const endBySession = sql(
  'sso.sessions_end_by_idp_session',
  `DELETE FROM console_sessions WHERE org_id = $1 AND sso_protocol = $2 AND sso_session = $3 RETURNING member_id`,
);
const endBySubject = sql(
  'sso.sessions_end_by_subject',
  `DELETE FROM console_sessions WHERE org_id = $1 AND sso_protocol = $2 AND sso_subject = $3 RETURNING member_id`,
);
const endBySessionAndSubject = sql(
  'sso.sessions_end_by_both',
  `DELETE FROM console_sessions WHERE org_id = $1 AND sso_protocol = $2 AND sso_session = $3 AND sso_subject = $4 RETURNING member_id`,
);
/** Ends the console sessions of an IdP session (and subject, when both are given); the members whose sessions ended. */
export async function endIdpSessions(db: Queryable, orgId: string, protocol: 'oidc' | 'saml', by: { session?: string; subject?: string }): Promise<string[]> {
  let rows: { member_id: string }[];
  if (by.session && by.subject) rows = await db.query(endBySessionAndSubject, [orgId, protocol, by.session, by.subject]);
  else if (by.session) rows = await db.query(endBySession, [orgId, protocol, by.session]);
  else if (by.subject) rows = await db.query(endBySubject, [orgId, protocol, by.subject]);
  else return [];
  return rows.map((r) => r.member_id);
}

const setSubject = sql('sso.member_subject', `UPDATE members SET sso_subject = $3 WHERE org_id = $1 AND id = $2`);
export async function setMemberSsoSubject(db: Queryable, orgId: string, memberId: string, subject: string): Promise<void> {
  await db.query(setSubject, [orgId, memberId, subject]);
}
