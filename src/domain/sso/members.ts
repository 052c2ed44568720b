import { randomBytes } from 'node:crypto';
import type { Queryable } from '../database.js';
import {
  countOwners,
  findMemberByEmailInOrg,
  findPasswordHashesByEmail,
  insertMember,
  lockOrganization,
  markSignedIn,
  updateMemberRoleRow,
  type MemberRole,
  type MemberRow,
} from '../../db/repositories/members.js';
import { setMemberSsoSubject, type GroupRole, type SsoSettingsRow } from '../../db/repositories/sso.js';
import { recordAudit } from '../audit.js';
import { newId } from '../ids.js';
import { memberActor, replaceManagerTeams } from '../members.js';
import { hashPassword } from '../passwords.js';

/** What the groups claim maps a person to: a role, and a manager's teams. */
export interface MappedRole {
  role: GroupRole['role'];
  teams: string[];
}

const RANK: Record<GroupRole['role'], number> = { owner: 4, admin: 3, manager: 2, viewer: 1 };

/** The groups a claim or attribute holds: a list of strings, or one string (some IdPs send one group so). */
export function groupsOf(value: unknown): string[] {
  if (typeof value === 'string') return [value];
  return Array.isArray(value) ? value.filter((g): g is string => typeof g === 'string').slice(0, 1000) : [];
}

/**
 * The role of a person in `groups`: the highest of the roles their groups map to (owner, admin,
 * manager, viewer), with the teams of every matching manager group; none matched, the default role
 * (no teams); no default, null (refused).
 */
export function mapGroups(s: Pick<SsoSettingsRow, 'groupRoles' | 'defaultRole'>, groups: string[]): MappedRole | null {
  const held = new Set(groups);
  const matched = s.groupRoles.filter((g) => held.has(g.group));
  if (matched.length === 0) return s.defaultRole ? { role: s.defaultRole, teams: [] } : null;
  const role = matched.reduce((best, g) => (RANK[g.role] > RANK[best] ? g.role : best), matched[0].role);
  const teams = role === 'manager' ? [...new Set(matched.filter((g) => g.role === 'manager').flatMap((g) => g.teams))] : [];
  return { role, teams };
}

/**
 * The member an IdP sign-in is for, made just in time or brought up to date, in the caller's
 * transaction (the organization's row locked first, as every role change does): a new member gets
 * the mapped role and no usable password (a random one, hashed like the address's other
 * memberships so that their sign-in costs one scrypt as before); an existing one gets the mapped
 * role, except that the last owner is never demoted (the change waits for another owner). Audited
 * as `member.joined` or `member.role_changed` with `via`.
 */
export async function memberFromIdp(
  tx: Queryable,
  orgId: string,
  p: { email: string; subject: string; mapped: MappedRole; via: 'oidc' | 'saml'; address: string | null },
  now: Date,
): Promise<{ member: MemberRow; created: boolean }> {
  await lockOrganization(tx, orgId);
  let m = await findMemberByEmailInOrg(tx, orgId, p.email);
  let created = false;
  const role = p.mapped.role as MemberRole;
  if (!m) {
    const others = await findPasswordHashesByEmail(tx, p.email);
    const passwordHash = await hashPassword(randomBytes(32).toString('base64url'), others[0]?.passwordHash);
    const id = newId('mem');
    await insertMember(tx, { orgId, id, email: p.email, role, passwordHash, at: now });
    m = {
      orgId,
      id,
      email: p.email,
      role,
      passwordHash,
      totpSecret: null,
      totpLastStep: null,
      recoveryCodes: [],
      createdAt: now.toISOString(),
      lastSignInAt: null,
    };
    created = true;
    await recordAudit(
      tx,
      orgId,
      memberActor(m, p.address),
      { action: 'member.joined', target: { kind: 'member', id }, details: { email: p.email, role, via: p.via } },
      now,
    );
  } else if (m.role !== role && !(m.role === 'owner' && (await countOwners(tx, orgId)) <= 1)) {
    await updateMemberRoleRow(tx, orgId, m.id, role);
    await recordAudit(
      tx,
      orgId,
      memberActor(m, p.address),
      { action: 'member.role_changed', target: { kind: 'member', id: m.id }, details: { email: m.email, from: m.role, to: role, via: p.via } },
      now,
    );
    m = { ...m, role };
  }
  // A manager's teams follow the groups at each sign-in; a former manager keeps none (issue 53).
  await replaceManagerTeams(tx, orgId, m.id, m.role === 'manager' ? p.mapped.teams : []);
  await setMemberSsoSubject(tx, orgId, m.id, p.subject);
  await markSignedIn(tx, orgId, m.id, now);
  return { member: m, created };
}
