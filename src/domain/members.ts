import { createHash, randomBytes } from 'node:crypto';
import type { DatabaseExecutor, Queryable } from './database.js';
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
  updateMemberRoleRow,
  writeRequireTwoFactor,
  type InvitationRow,
  type MemberRole,
  type MemberRow,
  type SessionStage,
} from '../db/repositories/members.js';
import { ApiError, invalid } from '../contract/errors.js';
import { newId } from './ids.js';
import { requireLiveOrg } from './orgs.js';
import { recordAudit, type Actor } from './audit.js';

/**
 * The organization console's people (CONTRACT.md section 11): members, their roles, and the
 * invitations that make them. Passwords are in passwords.ts, sessions and signing in in
 * sessions.ts, two-factor codes in totp.ts. Every face (console, operator API, CLI) calls these;
 * none keeps a rule of its own.
 */

export type { MemberRole, SessionStage };
export const MEMBER_ROLES = ['owner', 'admin', 'viewer'] as const;

export const INVITATION_HOURS = 72;
const sha256 = (s: string | Buffer) => createHash('sha256').update(s).digest();

const EMAIL = /^[^\s@<>"',;:\\()[\]]{1,64}@[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)+$/;
export function checkEmail(email: unknown): string {
  const e = typeof email === 'string' ? email.trim() : '';
  if (e.length < 3 || e.length > 254 || !EMAIL.test(e)) throw invalid("The email must be an address like 'name@example.com'.");
  return e;
}

function checkRole(role: unknown): MemberRole {
  if (!MEMBER_ROLES.includes(role as MemberRole)) throw invalid("The role must be 'owner', 'admin' or 'viewer'.");
  return role as MemberRole;
}

// Members and invitations.

export interface MemberView {
  id: string;
  email: string;
  role: MemberRole;
  twoFactor: boolean;
  createdAt: string;
  lastSignInAt: string | null;
}

export const memberView = (m: MemberRow): MemberView => ({
  id: m.id,
  email: m.email,
  role: m.role,
  twoFactor: m.totpSecret !== null,
  createdAt: m.createdAt,
  lastSignInAt: m.lastSignInAt,
});

/** A member as the actor of a change (the console's face). */
export const memberActor = (m: { id: string; email: string }, address: string | null): Actor => ({ kind: 'member', memberId: m.id, email: m.email, address });

export interface CreatedInvitation {
  id: string;
  email: string;
  role: MemberRole;
  /** The link's secret part: in this answer only; the database keeps its SHA-256. */
  token: string;
  expiresAt: string;
}

/** An invitation to the organization's console, valid 72 hours, used once. */
export async function inviteMember(
  db: DatabaseExecutor,
  orgId: string,
  input: { email: unknown; role: unknown },
  actor: Actor,
  now: Date,
): Promise<CreatedInvitation> {
  await requireLiveOrg(db, orgId);
  const email = checkEmail(input.email);
  const role = checkRole(input.role);
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
    await recordAudit(tx, orgId, actor, { action: 'member.invited', target: { kind: 'invitation', id }, details: { email, role } }, now);
  });
  return { id, email, role, token, expiresAt: expiresAt.toISOString() };
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
  return (await listMemberRows(db, orgId)).map(memberView);
}

export interface InvitationView {
  id: string;
  email: string;
  role: MemberRole;
  /** The member who made it in the console; null: the operator. */
  invitedBy: string | null;
  createdAt: string;
  expiresAt: string;
}
const invitationView = ({ id, email, role, invitedBy, createdAt, expiresAt }: InvitationRow): InvitationView => ({
  id,
  email,
  role,
  invitedBy,
  createdAt,
  expiresAt,
});

/** Invitations not yet accepted and not expired, newest first. */
export async function listInvitations(db: Queryable, orgId: string, now: Date): Promise<InvitationView[]> {
  await requireLiveOrg(db, orgId);
  return (await listPendingInvitations(db, orgId, now)).map(invitationView);
}

/** Revokes an invitation not yet accepted: its link opens nothing from now on. */
export async function revokeInvitation(db: DatabaseExecutor, orgId: string, invitationId: string, actor: Actor, now: Date): Promise<InvitationView> {
  await requireLiveOrg(db, orgId);
  return db.transaction(async (tx) => {
    const inv = await deletePendingInvitation(tx, orgId, invitationId);
    if (!inv) throw new ApiError('not_found', `No pending invitation ${JSON.stringify(invitationId)} in this organization (accepted ones are members now).`);
    await recordAudit(
      tx,
      orgId,
      actor,
      { action: 'member.invitation_revoked', target: { kind: 'invitation', id: inv.id }, details: { email: inv.email, role: inv.role } },
      now,
    );
    return invitationView(inv);
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
    await deleteMemberRow(tx, orgId, memberId);
    await recordAudit(tx, orgId, actor, { action: 'member.removed', target: { kind: 'member', id: memberId }, details: { email: m.email, role: m.role } }, now);
    return memberView(m);
  });
}

/** Changes a member's role. The last owner cannot be demoted. */
export async function updateMemberRole(db: DatabaseExecutor, orgId: string, memberId: string, role: unknown, actor: Actor, now: Date): Promise<MemberView> {
  const next = checkRole(role);
  await requireLiveOrg(db, orgId);
  return db.transaction(async (tx) => {
    await lockOrganization(tx, orgId);
    const m = await memberOf(tx, orgId, memberId);
    if (m.role === 'owner' && next !== 'owner' && (await countOwners(tx, orgId)) <= 1) {
      throw invalid('The last owner of an organization cannot be demoted; make another member owner first.');
    }
    await updateMemberRoleRow(tx, orgId, memberId, next);
    if (m.role === 'owner' && next !== 'owner') await revokeInvitationsBy(tx, orgId, memberId, 'inviter_demoted', actor, now);
    await recordAudit(
      tx,
      orgId,
      actor,
      { action: 'member.role_changed', target: { kind: 'member', id: memberId }, details: { email: m.email, from: m.role, to: next } },
      now,
    );
    return memberView({ ...m, role: next });
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
