import { createHash, randomBytes } from 'node:crypto';
import type { DatabaseExecutor, Queryable, Transaction } from './database.js';
import {
  countOwners,
  deleteMemberRow,
  deleteMemberSessions,
  deletePendingInvitation,
  deletePendingInvitationsBy,
  findInvitationByToken,
  findMember,
  findMemberByEmailInOrg,
  insertInvitation,
  listMemberRows,
  listPendingInvitations,
  lockOrganization,
  readRequireTwoFactor,
  updateMemberLanguage,
  updateMemberRoleRow,
  writeRequireTwoFactor,
  type InvitationRow,
  type MemberRole,
  type MemberRow,
  type SessionStage,
} from '../db/repositories/members.js';
import { invitationTeams, memberTeamIds, memberTeamsByMember, replaceMemberTeams, setInvitationTeams } from '../db/repositories/member-teams.js';
import { listTeamNames } from '../db/repositories/teams.js';
import { ApiError, invalid } from '../contract/errors.js';
import { newId } from './ids.js';
import { requireLiveOrg } from './orgs.js';
import { recordAudit, type Actor } from './audit.js';
import { LOCALES } from '../i18n/index.js';

/**
 * The organization console's people (CONTRACT.md section 11): members, their roles, and the
 * invitations that make them. Passwords are in passwords.ts, sessions and signing in in
 * sessions.ts, two-factor codes in totp.ts. Every face (console, operator API, CLI) calls these;
 * none keeps a rule of its own.
 */

export type { MemberRole, SessionStage };
export const MEMBER_ROLES = ['owner', 'admin', 'viewer', 'manager'] as const;
/** A manager reads the figures of at most this many teams (a form, an API body or a groups claim names them). */
export const MAX_MANAGER_TEAMS = 100;

export const INVITATION_HOURS = 72;
const sha256 = (s: string | Buffer) => createHash('sha256').update(s).digest();

const EMAIL = /^[^\s@<>"',;:\\()[\]]{1,64}@[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)+$/;
export function checkEmail(email: unknown): string {
  const e = typeof email === 'string' ? email.trim() : '';
  if (e.length < 3 || e.length > 254 || !EMAIL.test(e)) throw invalid("The email must be an address like 'name@example.com'.");
  return e;
}

function checkRole(role: unknown): MemberRole {
  if (!MEMBER_ROLES.includes(role as MemberRole)) throw invalid("The role must be 'owner', 'admin', 'viewer' or 'manager'.");
  return role as MemberRole;
}

/**
 * A role's teams, checked against the organization: a manager names 1 to MAX_MANAGER_TEAMS teams
 * of it (duplicates dropped), every other role none (undefined, null or [] are none). Returns the
 * teams with their names, in the order given.
 */
async function checkTeams(db: Queryable, orgId: string, role: MemberRole, teams: unknown): Promise<{ id: string; name: string }[]> {
  const given = teams === undefined || teams === null ? [] : teams;
  if (!Array.isArray(given) || given.some((t) => typeof t !== 'string' || t.length === 0 || t.length > 128)) {
    throw invalid('The teams must be a list of team ids.');
  }
  const ids = [...new Set(given as string[])];
  if (role !== 'manager') {
    if (ids.length > 0) throw invalid(`Only a manager has teams; a member with the role '${role}' reads the whole organization.`);
    return [];
  }
  if (ids.length === 0) throw invalid('A manager needs at least one team: the teams whose figures they read.');
  if (ids.length > MAX_MANAGER_TEAMS) throw invalid(`A manager has at most ${MAX_MANAGER_TEAMS} teams.`);
  const found = new Map((await listTeamNames(db, orgId, ids)).map((t) => [t.id, t.name]));
  const unknown = ids.find((id) => !found.has(id));
  if (unknown !== undefined) throw invalid(`${JSON.stringify(unknown)} names no team of this organization.`);
  return ids.map((id) => ({ id, name: found.get(id)! }));
}

// Members and invitations.

export interface MemberView {
  id: string;
  email: string;
  role: MemberRole;
  /** A manager's teams (ids); empty for every other role (absent where a page was not given them). */
  teams?: string[];
  twoFactor: boolean;
  createdAt: string;
  lastSignInAt: string | null;
}

/** `teams`: a manager's teams, when the caller read them (a session's member is shown without: the guard reads them per request). */
export const memberView = (m: MemberRow, teams: string[] = []): MemberView => ({
  id: m.id,
  email: m.email,
  role: m.role,
  teams,
  twoFactor: m.totpSecret !== null,
  createdAt: m.createdAt,
  lastSignInAt: m.lastSignInAt,
});

/**
 * Replaces a member's teams with those of `teamIds` that are teams of the organization (unknown ids
 * are dropped, not refused: an identity provider's group mapping may name a team since removed),
 * in the caller's transaction, and answers the ids kept. For a member whose role is not manager,
 * pass []: their teams go. No audit row of its own: it is part of a change that writes one (single
 * sign-on's `member.joined` or `member.role_changed`); setMemberRoleAndTeams is the checked,
 * audited change of the console and the operator API.
 */
export async function replaceManagerTeams(tx: Queryable, orgId: string, memberId: string, teamIds: readonly string[]): Promise<string[]> {
  const ids = [...new Set(teamIds.filter((id) => typeof id === 'string' && id.length > 0 && id.length <= 128))].slice(0, MAX_MANAGER_TEAMS);
  const known = new Set(ids.length > 0 ? (await listTeamNames(tx, orgId, ids)).map((t) => t.id) : []);
  const kept = ids.filter((id) => known.has(id));
  await replaceMemberTeams(tx, orgId, memberId, kept);
  return kept;
}

/** The teams a manager reads (ids, by team name); [] for a member of any other role, or none. */
export async function managedTeamIds(db: Queryable, orgId: string, memberId: string): Promise<string[]> {
  return memberTeamIds(db, orgId, memberId);
}

/** A member as the actor of a change (the console's face). */
export const memberActor = (m: { id: string; email: string }, address: string | null): Actor => ({ kind: 'member', memberId: m.id, email: m.email, address });

export interface CreatedInvitation {
  id: string;
  email: string;
  role: MemberRole;
  /** A manager's teams (ids); empty for every other role. */
  teams: string[];
  /** The link's secret part: in this answer only; the database keeps its SHA-256. */
  token: string;
  expiresAt: string;
}

/** An invitation to the organization's console, valid 72 hours, used once. */
export async function inviteMember(
  db: DatabaseExecutor,
  orgId: string,
  input: { email: unknown; role: unknown; teams?: unknown },
  actor: Actor,
  now: Date,
): Promise<CreatedInvitation> {
  await requireLiveOrg(db, orgId);
  const email = checkEmail(input.email);
  const role = checkRole(input.role);
  const teams = await checkTeams(db, orgId, role, input.teams);
  if (await findMemberByEmailInOrg(db, orgId, email)) throw invalid(`${email} is already a member of this organization.`);
  const token = randomBytes(24).toString('base64url'); // 192 bits
  const id = newId('inv');
  const createdAt = new Date(now.getTime());
  const expiresAt = new Date(now.getTime() + INVITATION_HOURS * 3_600_000);
  const invitedBy = actor.kind === 'member' ? actor.memberId : null;
  await db.transaction(async (tx) => {
    // Under the lock of role changes and removals: an owner removed or demoted meanwhile makes none.
    await lockOrganization(tx, orgId);
    if (invitedBy !== null && (await findMember(tx, orgId, invitedBy))?.role !== 'owner') {
      throw new ApiError('insufficient_scope', 'Only an owner of the organization can invite members.');
    }
    await insertInvitation(tx, { orgId, id, email, role, tokenHash: sha256(token), createdAt, expiresAt, invitedBy });
    if (teams.length > 0)
      await setInvitationTeams(
        tx,
        orgId,
        id,
        teams.map((t) => t.id),
      );
    await recordAudit(tx, orgId, actor, { action: 'member.invited', target: { kind: 'invitation', id }, details: { email, role, ...teamsDetail(teams) } }, now);
  });
  return { id, email, role, teams: teams.map((t) => t.id), token, expiresAt: expiresAt.toISOString() };
}

/** A manager's teams in an audit entry: their names, as people read them (nothing for other roles). */
const teamsDetail = (teams: { name: string }[]) => (teams.length > 0 ? { teams: teams.map((t) => t.name) } : {});

/**
 * At an invitation's acceptance, in its transaction: the new member manages the invitation's teams
 * (those still in the organization). Called by acceptInvitation (sessions.ts).
 */
export async function grantInvitationTeams(tx: Queryable, orgId: string, invitationId: string, memberId: string): Promise<string[]> {
  const ids = (await invitationTeams(tx, orgId, [invitationId])).get(invitationId) ?? [];
  const kept = new Set((await listTeamNames(tx, orgId, ids)).map((t) => t.id));
  const teams = ids.filter((id) => kept.has(id));
  await replaceMemberTeams(tx, orgId, memberId, teams);
  return teams;
}

/** What the invitation page shows before the password is set (nothing when the link is not usable). */
export async function getInvitation(db: Queryable, token: string, now: Date): Promise<InvitationRow | null> {
  if (typeof token !== 'string' || token.length < 16 || token.length > 128) return null;
  const inv = await findInvitationByToken(db, sha256(token));
  if (!inv || inv.acceptedAt !== null || Date.parse(inv.expiresAt) <= now.getTime()) return null;
  return inv;
}

export const INVITATION_UNUSABLE =
  'This invitation link is not valid: it was used already, it expired (after 72 hours), or it was mistyped. Ask for a new one.';

export async function listMembers(db: Queryable, orgId: string): Promise<MemberView[]> {
  await requireLiveOrg(db, orgId);
  const [rows, teams] = await Promise.all([listMemberRows(db, orgId), memberTeamsByMember(db, orgId)]);
  return rows.map((m) => memberView(m, m.role === 'manager' ? (teams.get(m.id) ?? []) : []));
}

export interface InvitationView {
  id: string;
  email: string;
  role: MemberRole;
  /** A manager's teams (ids); empty for every other role (absent where a page was not given them). */
  teams?: string[];
  /** The member who made it in the console; null: the operator. */
  invitedBy: string | null;
  createdAt: string;
  expiresAt: string;
}
const invitationView = ({ id, email, role, invitedBy, createdAt, expiresAt }: InvitationRow, teams: string[] = []): InvitationView => ({
  id,
  email,
  role,
  teams,
  invitedBy,
  createdAt,
  expiresAt,
});

/** Invitations not yet accepted and not expired, newest first. */
export async function listInvitations(db: Queryable, orgId: string, now: Date): Promise<InvitationView[]> {
  await requireLiveOrg(db, orgId);
  const rows = await listPendingInvitations(db, orgId, now);
  const teams = await invitationTeams(
    db,
    orgId,
    rows.map((r) => r.id),
  );
  return rows.map((r) => invitationView(r, teams.get(r.id) ?? []));
}

/** Revokes an invitation not yet accepted: its link opens nothing from now on. */
export async function revokeInvitation(db: DatabaseExecutor, orgId: string, invitationId: string, actor: Actor, now: Date): Promise<InvitationView> {
  await requireLiveOrg(db, orgId);
  return db.transaction(async (tx) => {
    const teams = (await invitationTeams(tx, orgId, [invitationId])).get(invitationId) ?? [];
    const inv = await deletePendingInvitation(tx, orgId, invitationId);
    if (!inv) throw new ApiError('not_found', `No pending invitation ${JSON.stringify(invitationId)} in this organization (accepted ones are members now).`);
    await recordAudit(
      tx,
      orgId,
      actor,
      { action: 'member.invitation_revoked', target: { kind: 'invitation', id: inv.id }, details: { email: inv.email, role: inv.role } },
      now,
    );
    return invitationView(inv, teams);
  });
}

/** The pending invitations a member made die with their removal or demotion below owner (in the change's transaction). */
async function revokeInvitationsBy(tx: Queryable, orgId: string, memberId: string, reason: 'inviter_removed' | 'inviter_demoted', actor: Actor, now: Date) {
  for (const inv of await deletePendingInvitationsBy(tx, orgId, memberId)) {
    await recordAudit(
      tx,
      orgId,
      actor,
      { action: 'member.invitation_revoked', target: { kind: 'invitation', id: inv.id }, details: { email: inv.email, role: inv.role, reason } },
      now,
    );
  }
}

export async function memberOf(db: Queryable, orgId: string, memberId: string): Promise<MemberRow> {
  const m = await findMember(db, orgId, memberId);
  if (!m) throw new ApiError('not_found', `No member ${JSON.stringify(memberId)} in this organization.`);
  return m;
}

/** Removes a member and ends their sessions at once. The last owner cannot be removed. */
export async function deleteMember(db: DatabaseExecutor, orgId: string, memberId: string, actor: Actor, now: Date): Promise<MemberView> {
  await requireLiveOrg(db, orgId);
  return db.transaction(async (tx) => {
    // The organization's row is locked before the owners are counted: of two concurrent changes
    // (on any process) the second counts after the first has committed.
    await lockOrganization(tx, orgId);
    const m = await memberOf(tx, orgId, memberId);
    if (m.role === 'owner' && (await countOwners(tx, orgId)) <= 1)
      throw invalid('The last owner of an organization cannot be removed; make another member owner first.');
    await deleteMemberSessions(tx, orgId, memberId);
    await revokeInvitationsBy(tx, orgId, memberId, 'inviter_removed', actor, now);
    const teams = await memberTeamIds(tx, orgId, memberId);
    await replaceMemberTeams(tx, orgId, memberId, []);
    await deleteMemberRow(tx, orgId, memberId);
    await recordAudit(tx, orgId, actor, { action: 'member.removed', target: { kind: 'member', id: memberId }, details: { email: m.email, role: m.role } }, now);
    return memberView(m, teams);
  });
}

/** Changes a member's role (not to or from manager's teams: setMemberRoleAndTeams does both). The last owner cannot be demoted. */
export async function updateMemberRole(db: DatabaseExecutor, orgId: string, memberId: string, role: unknown, actor: Actor, now: Date): Promise<MemberView> {
  return setMemberRoleAndTeams(db, orgId, memberId, role, undefined, actor, now);
}

/**
 * Sets a member's role and, for a manager, the teams they read (the console's Members page, the
 * operator API, and sign-in's mapping of an identity provider's groups). `teamIds`: a manager's 1
 * or more teams of the organization; none for the other roles (undefined keeps a manager's current
 * teams when the role stays manager). The last owner cannot be demoted. A change that changes
 * nothing writes nothing (no audit entry: a sign-in that maps the same groups again is silent).
 * Leaving the manager role removes the teams; demoting an owner revokes the invitations they made.
 * `db`: the database (one transaction of its own), or the caller's transaction.
 */
export async function setMemberRoleAndTeams(
  db: DatabaseExecutor | Transaction,
  orgId: string,
  memberId: string,
  role: unknown,
  teamIds: unknown,
  actor: Actor,
  now: Date,
): Promise<MemberView> {
  const next = checkRole(role);
  await requireLiveOrg(db, orgId);
  // In the caller's transaction when given one (sign-in makes the member and maps its groups in one).
  const inTransaction = <T>(fn: (tx: Queryable) => Promise<T>) => ('transaction' in db ? db.transaction(fn) : fn(db));
  return inTransaction(async (tx) => {
    await lockOrganization(tx, orgId);
    const m = await memberOf(tx, orgId, memberId);
    const before = m.role === 'manager' ? await memberTeamIds(tx, orgId, memberId) : [];
    const asked = teamIds === undefined && next === 'manager' && m.role === 'manager' ? before : teamIds;
    const teams = await checkTeams(tx, orgId, next, asked);
    const after = teams.map((t) => t.id);
    const sameTeams = before.length === after.length && after.every((id) => before.includes(id));
    if (m.role === next && sameTeams) return memberView(m, before);
    if (m.role === 'owner' && next !== 'owner' && (await countOwners(tx, orgId)) <= 1) {
      throw invalid('The last owner of an organization cannot be demoted; make another member owner first.');
    }
    if (m.role !== next) await updateMemberRoleRow(tx, orgId, memberId, next);
    if (!sameTeams) await replaceMemberTeams(tx, orgId, memberId, after);
    if (m.role === 'owner' && next !== 'owner') await revokeInvitationsBy(tx, orgId, memberId, 'inviter_demoted', actor, now);
    await recordAudit(
      tx,
      orgId,
      actor,
      { action: 'member.role_changed', target: { kind: 'member', id: memberId }, details: { email: m.email, from: m.role, to: next, ...teamsDetail(teams) } },
      now,
    );
    return memberView({ ...m, role: next }, after);
  });
}

export async function updateRequireTwoFactor(db: DatabaseExecutor, orgId: string, on: boolean, actor: Actor, now: Date): Promise<void> {
  await requireLiveOrg(db, orgId);
  await db.transaction(async (tx) => {
    await writeRequireTwoFactor(tx, orgId, on);
    await recordAudit(
      tx,
      orgId,
      actor,
      { action: 'organization.two_factor_required', target: { kind: 'organization', id: orgId }, details: { required: on } },
      now,
    );
  });
}

export const requiresTwoFactor = (db: Queryable, orgId: string) => readRequireTwoFactor(db, orgId);

/** A console language as a member chooses it: a locale of the catalogues, or none ('' or null: their browser's). */
export function checkMemberLanguage(language: unknown): string | null {
  if (language === null || language === undefined || language === '') return null;
  if (typeof language !== 'string' || !(LOCALES as readonly string[]).includes(language)) {
    throw invalid(`The language must be one of ${LOCALES.join(', ')}, or none to follow the browser.`);
  }
  return language;
}

/**
 * A member's own console language (issue 57): their pages are written in it from their next
 * request, whatever their browser asks for; null goes back to the browser's. A personal preference
 * that changes nothing of the organization, so it writes no audit entry (the audit codes are the
 * operator API's contract, and a code for it would add to that list).
 */
export async function setMemberLanguage(db: Queryable, orgId: string, memberId: string, language: unknown): Promise<string | null> {
  const chosen = checkMemberLanguage(language);
  if (!(await updateMemberLanguage(db, orgId, memberId, chosen)))
    throw new ApiError('not_found', `No member ${JSON.stringify(memberId)} in this organization.`);
  return chosen;
}
