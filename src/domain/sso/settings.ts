import { randomBytes } from 'node:crypto';
import { resolveTxt } from 'node:dns/promises';
import type { DatabaseExecutor, Queryable } from '../database.js';
import {
  deleteSsoDomain,
  deleteSsoSettings,
  findSsoDomain,
  findSsoSettings,
  findVerifiedDomainOwner,
  insertSsoDomain,
  listSsoDomains,
  lockSsoSettings,
  markSsoDomainVerified,
  writeSsoSettings,
  type GroupRole,
  type SsoDomainRow,
  type SsoSettingsRow,
} from '../../db/repositories/sso.js';
import { findMember, lockOrganization } from '../../db/repositories/members.js';
import { deleteSessionsWithoutSso } from '../../db/repositories/sessions.js';
import { dbFailure } from '../../db/errors.js';
import { ApiError, invalid } from '../../contract/errors.js';
import { recordAudit, type Actor } from '../audit.js';
import { requireLiveOrg } from '../orgs.js';
import { MEMBER_ROLES } from '../members.js';
import { checkWebhookUrl } from '../webhook-deliveries.js';
import { sealSsoSecret } from './seal.js';
import { discoverIssuer } from './oidc-config.js';
import type { SsoNetworkRules } from './fetch.js';

export type { GroupRole, SsoDomainRow };

/**
 * An organization's single sign-on (CONTRACT.md section 11, amended: *Single sign-on*): its
 * identity provider, the groups mapped to roles, enforced SSO with its break-glass owner, and the
 * domains whose addresses go to the IdP. The console, the operator API and the CLI call these.
 */

/** Roles a group can map to: the console's roles (a manager's once the console has managers). */
export const mappableRoles = (): readonly string[] => MEMBER_ROLES;

/** What anyone allowed to read the settings sees: never the client secret, only that one is set. */
export interface SsoSettingsView {
  kind: 'oidc' | 'saml';
  issuer: string | null;
  clientId: string | null;
  clientSecretSet: boolean;
  groupsClaim: string;
  groupRoles: GroupRole[];
  defaultRole: 'admin' | 'manager' | 'viewer' | null;
  required: boolean;
  breakGlassMemberId: string | null;
  sessionMaxHours: number;
  updatedAt: string;
}

export const settingsView = (s: SsoSettingsRow): SsoSettingsView => ({
  kind: s.kind,
  issuer: s.oidcIssuer,
  clientId: s.oidcClientId,
  clientSecretSet: s.oidcClientSecretSealed !== null,
  groupsClaim: s.groupsClaim,
  groupRoles: s.groupRoles,
  defaultRole: s.defaultRole,
  required: s.required,
  breakGlassMemberId: s.breakGlassMemberId,
  sessionMaxHours: s.sessionMaxHours,
  updatedAt: s.updatedAt,
});

export async function getSsoSettings(db: Queryable, orgId: string): Promise<SsoSettingsView | null> {
  const s = await findSsoSettings(db, orgId);
  return s ? settingsView(s) : null;
}

/** Whether SSO is required for the organization, and who the break-glass owner is (the passkeys sign-in reads this). */
export interface SsoPolicy {
  required: boolean;
  breakGlassMemberId: string | null;
}

export async function ssoPolicy(db: Queryable, orgId: string): Promise<SsoPolicy> {
  const s = await findSsoSettings(db, orgId);
  return { required: s?.required === true, breakGlassMemberId: s?.required ? s.breakGlassMemberId : null };
}

/** What a password sign-in of a member of an organization that requires SSO answers (after a right password only). */
export const SSO_REQUIRED_FOR_PASSWORD =
  'Your organization signs in through its own identity provider (single sign-on): password and two-factor sign-in are turned off. Enter your work email and choose Sign in, leaving the password empty, to continue at your organization.';

// Checking the input.

const text = (v: unknown, field: string, max: number): string => {
  if (typeof v !== 'string' || v.trim() === '' || v.length > max) throw invalid(`${field} must be text of 1 to ${max} characters.`);
  return v.trim();
};

/**
 * Group mappings as people type them, one per line: `group = role`, or for a manager
 * `group = manager: team_a, team_b`. The API takes the same as a JSON array.
 */
export function parseGroupRoles(input: unknown): GroupRole[] {
  const list: unknown[] = typeof input === 'string' ? input.split(/\r?\n/).filter((l) => l.trim() !== '') : Array.isArray(input) ? input : [];
  if (typeof input !== 'string' && !Array.isArray(input)) throw invalid('groupRoles must be a list of {group, role, teams}.');
  if (list.length > 100) throw invalid('At most 100 group mappings.');
  const roles = mappableRoles();
  const out: GroupRole[] = [];
  for (const [i, item] of list.entries()) {
    let g: unknown;
    let r: unknown;
    let teams: unknown = [];
    if (typeof item === 'string') {
      const eq = item.indexOf('=');
      if (eq < 0) throw invalid(`Line ${i + 1} of the group mappings needs the form 'group = role'.`);
      g = item.slice(0, eq).trim();
      const [role, teamList] = item.slice(eq + 1).split(':');
      r = role.trim();
      teams = teamList
        ? teamList
            .split(',')
            .map((t) => t.trim())
            .filter(Boolean)
        : [];
    } else if (item && typeof item === 'object') {
      ({ group: g, role: r, teams = [] } = item as Record<string, unknown>);
    }
    const group = text(g, `The group of mapping ${i + 1}`, 256);
    if (typeof r !== 'string' || !roles.includes(r)) throw invalid(`The role of group ${JSON.stringify(group)} must be one of ${roles.join(', ')}.`);
    if (!Array.isArray(teams) || teams.some((t) => typeof t !== 'string' || t.length === 0 || t.length > 128) || teams.length > 100)
      throw invalid(`The teams of group ${JSON.stringify(group)} must be team ids.`);
    if (r !== 'manager' && teams.length > 0) throw invalid(`Only a manager's group names teams (group ${JSON.stringify(group)}).`);
    out.push({ group, role: r as GroupRole['role'], teams: teams as string[] });
  }
  return out;
}

export interface OidcSettingsInput {
  issuer: unknown;
  clientId: unknown;
  /** Omitted or empty on a later save: the stored secret is kept. */
  clientSecret?: unknown;
  groupsClaim?: unknown;
  groupRoles?: unknown;
  defaultRole?: unknown;
  sessionMaxHours?: unknown;
}

/**
 * Connects (or reconnects) the organization to an OpenID Connect IdP. The issuer is checked by
 * discovery before anything is saved, so a typo is said at once. One transaction with its audit row
 * (`sso.configured`), never with the secret.
 */
export async function saveOidcSettings(
  db: DatabaseExecutor,
  orgId: string,
  input: OidcSettingsInput,
  actor: Actor,
  now: Date,
  rules: SsoNetworkRules,
): Promise<SsoSettingsView> {
  // An unknown or deleted organization is 404 before its settings are read (CONTRACT section 10).
  await requireLiveOrg(db, orgId);
  // Kept as typed: discovery compares it, character for character, with the IdP's own `issuer`.
  const issuer = text(input.issuer, 'The issuer URL', 2048);
  checkWebhookUrl(issuer, rules);
  const clientId = text(input.clientId, 'The client id', 512);
  const secret = input.clientSecret === undefined || input.clientSecret === '' ? null : text(input.clientSecret, 'The client secret', 1024);
  const groupsClaim = input.groupsClaim === undefined || input.groupsClaim === '' ? 'groups' : text(input.groupsClaim, 'The groups claim', 200);
  const groupRoles = input.groupRoles === undefined ? undefined : parseGroupRoles(input.groupRoles);
  const defaultRole = input.defaultRole === undefined || input.defaultRole === '' || input.defaultRole === null ? null : input.defaultRole;
  if (defaultRole !== null && (defaultRole === 'owner' || !mappableRoles().includes(defaultRole as string)))
    throw invalid(
      `The role of people in no mapped group must be one of ${mappableRoles()
        .filter((r) => r !== 'owner')
        .join(', ')}, or none.`,
    );
  const hours = input.sessionMaxHours === undefined || input.sessionMaxHours === '' ? undefined : Number(input.sessionMaxHours);
  if (hours !== undefined && !(Number.isInteger(hours) && hours >= 1 && hours <= 168))
    throw invalid('The longest session must be a whole number of hours from 1 to 168.');
  await requireLiveOrg(db, orgId);
  await discoverIssuer(issuer, rules).catch((err: Error) => {
    throw invalid(`The identity provider at ${issuer} did not answer OpenID Connect discovery: ${err.message}`);
  });
  const sealed = secret === null ? null : await sealSsoSecret(db, orgId, 'oidc_client_secret', secret);
  return db.transaction(async (tx) => {
    const old = await lockSsoSettings(tx, orgId);
    const keptSecret = sealed ?? (old?.kind === 'oidc' && old.oidcClientId === clientId ? old.oidcClientSecretSealed : null);
    if (!keptSecret) throw invalid('The client secret is required (the IdP shows it when the application is registered).');
    const row: Omit<SsoSettingsRow, 'createdAt' | 'updatedAt'> = {
      orgId,
      kind: 'oidc',
      oidcIssuer: issuer,
      oidcClientId: clientId,
      oidcClientSecretSealed: keptSecret,
      groupsClaim,
      groupRoles: groupRoles ?? old?.groupRoles ?? [],
      defaultRole: (defaultRole as SsoSettingsRow['defaultRole']) ?? (input.defaultRole === undefined ? (old?.defaultRole ?? null) : null),
      required: old?.required ?? false,
      breakGlassMemberId: old?.breakGlassMemberId ?? null,
      sessionMaxHours: hours ?? old?.sessionMaxHours ?? 168,
    };
    await writeSsoSettings(tx, row, now);
    await recordAudit(
      tx,
      orgId,
      actor,
      {
        action: 'sso.configured',
        target: { kind: 'organization', id: orgId },
        details: {
          kind: 'oidc',
          issuer,
          clientId,
          credentialsChanged: sealed !== null,
          groupsClaim,
          groupRoles: row.groupRoles.length,
          defaultRole: row.defaultRole,
          sessionMaxHours: row.sessionMaxHours,
        },
      },
      now,
    );
    return settingsView({ ...row, createdAt: old?.createdAt ?? now.toISOString(), updatedAt: now.toISOString() });
  });
}

/** Disconnects the IdP: SSO sign-in and enforced SSO stop; open sessions run on to their end. */
export async function removeSsoSettings(db: DatabaseExecutor, orgId: string, actor: Actor, now: Date): Promise<void> {
  await requireLiveOrg(db, orgId);
  await db.transaction(async (tx) => {
    if (!(await deleteSsoSettings(tx, orgId))) throw new ApiError('not_found', 'This organization has no single sign-on set up.');
    await recordAudit(tx, orgId, actor, { action: 'sso.removed', target: { kind: 'organization', id: orgId }, details: {} }, now);
  });
}

/**
 * Enforced SSO: password and two-factor sign-in stop for every member but the break-glass owner
 * (an owner of this organization, named by member id), who keeps a passkey sign-in. Requiring it
 * needs an IdP connected and a verified domain, so that members have a way in, and ends the open
 * sessions that did not come through the IdP in the same transaction (the break-glass owner's
 * passkey sessions excepted), whoever requires it: an owner, the operator API or the CLI.
 */
export async function setSsoRequired(
  db: DatabaseExecutor,
  orgId: string,
  input: { required: unknown; breakGlassMemberId?: unknown },
  actor: Actor,
  now: Date,
): Promise<SsoSettingsView> {
  if (typeof input.required !== 'boolean') throw invalid('required must be true or false.');
  const breakGlass =
    input.breakGlassMemberId === undefined || input.breakGlassMemberId === null || input.breakGlassMemberId === '' ? null : input.breakGlassMemberId;
  if (breakGlass !== null && (typeof breakGlass !== 'string' || breakGlass.length > 128)) throw invalid('breakGlassMemberId must be a member id.');
  await requireLiveOrg(db, orgId);
  return db.transaction(async (tx) => {
    await lockOrganization(tx, orgId);
    const s = await lockSsoSettings(tx, orgId);
    if (!s) throw invalid('Connect an identity provider before requiring single sign-on.');
    if (input.required && !(await listSsoDomains(tx, orgId)).some((d) => d.verifiedAt))
      throw invalid('Verify at least one domain before requiring single sign-on: without one, nobody could reach the identity provider.');
    if (breakGlass !== null) {
      const m = await findMember(tx, orgId, breakGlass);
      if (m?.role !== 'owner') throw invalid('The break-glass member must be an owner of this organization.');
    }
    const row = { ...s, required: input.required as boolean, breakGlassMemberId: breakGlass as string | null };
    await writeSsoSettings(tx, row, now);
    await recordAudit(
      tx,
      orgId,
      actor,
      { action: 'sso.required', target: { kind: 'organization', id: orgId }, details: { required: row.required, breakGlassMemberId: row.breakGlassMemberId } },
      now,
    );
    if (row.required) await endSessionsWithoutSso(tx, orgId, row.breakGlassMemberId, actor, now);
    return settingsView({ ...row, updatedAt: now.toISOString() });
  });
}

/**
 * Requiring SSO ends, at once, every session that did not come through the IdP: password sessions
 * (a second factor included) and passkey sessions, but the break-glass owner's passkey sessions.
 * Their members are at the sign-in page at their next request, like the IdP's logout (one audit row
 * per member, `member.sessions_ended`, `via: 'sso_required'`). A session opened by password while
 * this commits is ended at its first request (resolveSession, src/domain/sessions.ts).
 */
async function endSessionsWithoutSso(tx: Queryable, orgId: string, breakGlass: string | null, actor: Actor, now: Date): Promise<void> {
  const counts = new Map<string, number>();
  for (const m of await deleteSessionsWithoutSso(tx, orgId, breakGlass)) counts.set(m, (counts.get(m) ?? 0) + 1);
  for (const [memberId, ended] of counts) {
    await recordAudit(
      tx,
      orgId,
      actor,
      { action: 'member.sessions_ended', target: { kind: 'member', id: memberId }, details: { ended, includingCurrent: true, via: 'sso_required' } },
      now,
    );
  }
}

// Domains.

const DOMAIN = /^(?=.{3,253}$)(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z][a-z0-9-]{0,61}[a-z0-9]$/;
export function checkDomain(input: unknown): string {
  const d = typeof input === 'string' ? input.trim().toLowerCase().replace(/\.$/, '') : '';
  if (!DOMAIN.test(d)) throw invalid("The domain must be a name like 'example.com'.");
  return d;
}

/** The TXT record that proves control of a domain: its name and value. */
export const txtRecordOf = (d: Pick<SsoDomainRow, 'domain' | 'txtToken'>) => ({
  name: `_climate-pulse.${d.domain}`,
  value: `climate-pulse-verification=${d.txtToken}`,
});

export interface SsoDomainView {
  domain: string;
  txtRecordName: string;
  txtRecordValue: string;
  createdAt: string;
  verifiedAt: string | null;
  verifiedBy: 'operator' | 'dns' | null;
}

export const domainView = (d: SsoDomainRow): SsoDomainView => {
  const txt = txtRecordOf(d);
  return { domain: d.domain, txtRecordName: txt.name, txtRecordValue: txt.value, createdAt: d.createdAt, verifiedAt: d.verifiedAt, verifiedBy: d.verifiedBy };
};

export async function listDomains(db: Queryable, orgId: string): Promise<SsoDomainView[]> {
  return (await listSsoDomains(db, orgId)).map(domainView);
}

export async function addDomain(db: DatabaseExecutor, orgId: string, input: unknown, actor: Actor, now: Date): Promise<SsoDomainView> {
  await requireLiveOrg(db, orgId);
  const name = checkDomain(input);
  return db.transaction(async (tx) => {
    if ((await listSsoDomains(tx, orgId)).length >= 50) throw invalid('An organization has at most 50 domains.');
    const d = await insertSsoDomain(tx, orgId, name, randomBytes(18).toString('base64url'), now);
    if (!d) throw invalid(`${name} is already one of this organization's domains.`);
    await recordAudit(tx, orgId, actor, { action: 'sso_domain.added', target: { kind: 'sso_domain', id: name }, details: {} }, now);
    return domainView(d);
  });
}

/** A domain named to be changed: one that cannot be a domain name is none of the organization's (404). */
function namedDomain(input: unknown): string {
  try {
    return checkDomain(input);
  } catch {
    throw new ApiError('not_found', "This is not one of this organization's domains.");
  }
}

export async function removeDomain(db: DatabaseExecutor, orgId: string, input: unknown, actor: Actor, now: Date): Promise<void> {
  await requireLiveOrg(db, orgId);
  const name = namedDomain(input);
  await db.transaction(async (tx) => {
    const d = await deleteSsoDomain(tx, orgId, name);
    if (!d) throw new ApiError('not_found', `${name} is not one of this organization's domains.`);
    await recordAudit(tx, orgId, actor, { action: 'sso_domain.removed', target: { kind: 'sso_domain', id: name }, details: {} }, now);
  });
}

export const DOMAIN_TAKEN = 'This domain is already verified by another organization of this service; ask the operator.';
export const TXT_NOT_FOUND = 'The TXT record was not found yet. DNS changes can take a while to show: try again later.';

/** A DNS TXT lookup: node:dns by default; tests give their own resolver. */
export type TxtResolver = (name: string) => Promise<string[][]>;

/**
 * Verifies a domain: by its TXT record (`by: 'dns'`, looked up now), or as the operator says
 * (`by: 'operator'`). A domain verified by another organization stays theirs (the database's
 * unique index decides, whatever the race).
 */
export async function verifyDomain(
  db: DatabaseExecutor,
  orgId: string,
  input: unknown,
  by: 'dns' | 'operator',
  actor: Actor,
  now: Date,
  resolver: TxtResolver = resolveTxt,
): Promise<SsoDomainView> {
  await requireLiveOrg(db, orgId);
  const name = namedDomain(input);
  const d = await findSsoDomain(db, orgId, name);
  if (!d) throw new ApiError('not_found', `${name} is not one of this organization's domains.`);
  if (d.verifiedAt) return domainView(d);
  if (by === 'dns') {
    const txt = txtRecordOf(d);
    const records = await resolver(txt.name).catch(() => [] as string[][]);
    if (!records.some((chunks) => chunks.join('') === txt.value)) throw invalid(TXT_NOT_FOUND);
  }
  try {
    return await db.transaction(async (tx) => {
      const v = await markSsoDomainVerified(tx, orgId, name, by, now);
      if (!v) return domainView((await findSsoDomain(tx, orgId, name)) ?? d);
      await recordAudit(tx, orgId, actor, { action: 'sso_domain.verified', target: { kind: 'sso_domain', id: name }, details: { by } }, now);
      return domainView(v);
    });
  } catch (err) {
    if (dbFailure(err) === 'unique_violation') throw invalid(DOMAIN_TAKEN);
    throw err;
  }
}

/** Where the sign-in page sends an address: the organization whose verified domain it is (with SSO set up), or null (password). */
export async function ssoRouteForEmail(db: Queryable, email: unknown): Promise<{ orgId: string; kind: 'oidc' | 'saml'; email: string } | null> {
  if (typeof email !== 'string') return null;
  const e = email.trim().toLowerCase();
  const at = e.lastIndexOf('@');
  if (at < 1 || e.length > 254) return null;
  const owner = await findVerifiedDomainOwner(db, e.slice(at + 1).replace(/\.$/, ''));
  return owner ? { ...owner, email: e } : null;
}
