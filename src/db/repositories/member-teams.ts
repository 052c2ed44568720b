import { sql, type Queryable } from '../executor.js';

/**
 * Managers' teams (migration 0028): the teams a manager member reads, and the teams an invitation
 * will give its manager. Team ids only; names come from the teams table, joined where a list shows
 * them, so a renamed team reads with its new name.
 */

const ofMember = sql(
  'member_teams.of_member',
  `SELECT mt.team_id FROM member_teams mt JOIN teams t ON t.org_id = mt.org_id AND t.id = mt.team_id
    WHERE mt.org_id = $1 AND mt.member_id = $2 ORDER BY lower(t.name), t.id`,
);
export async function memberTeamIds(db: Queryable, orgId: string, memberId: string): Promise<string[]> {
  return (await db.query<{ team_id: string }>(ofMember, [orgId, memberId])).map((r) => r.team_id);
}

const ofOrg = sql(
  'member_teams.of_org',
  `SELECT mt.member_id, mt.team_id FROM member_teams mt JOIN teams t ON t.org_id = mt.org_id AND t.id = mt.team_id
    WHERE mt.org_id = $1 ORDER BY mt.member_id, lower(t.name), t.id`,
);
/** Every manager's teams in the organization, by member id. */
export async function memberTeamsByMember(db: Queryable, orgId: string): Promise<Map<string, string[]>> {
  const out = new Map<string, string[]>();
  for (const r of await db.query<{ member_id: string; team_id: string }>(ofOrg, [orgId])) {
    const list = out.get(r.member_id) ?? [];
    list.push(r.team_id);
    out.set(r.member_id, list);
  }
  return out;
}

const clearMember = sql('member_teams.clear', `DELETE FROM member_teams WHERE org_id = $1 AND member_id = $2`);
const addMember = sql('member_teams.add', `INSERT INTO member_teams (org_id, member_id, team_id) SELECT $1, $2, unnest($3::text[]) ON CONFLICT DO NOTHING`);
/** Replaces a member's teams (none: every row removed), in the caller's transaction. */
export async function replaceMemberTeams(db: Queryable, orgId: string, memberId: string, teamIds: readonly string[]) {
  await db.query(clearMember, [orgId, memberId]);
  if (teamIds.length > 0) await db.query(addMember, [orgId, memberId, [...teamIds]]);
}

const setInvitation = sql('member_invitations.set_teams', `UPDATE member_invitations SET team_ids = $3 WHERE org_id = $1 AND id = $2`);
export async function setInvitationTeams(db: Queryable, orgId: string, invitationId: string, teamIds: readonly string[]) {
  await db.query(setInvitation, [orgId, invitationId, [...teamIds]]);
}

const ofInvitations = sql('member_invitations.teams', `SELECT id, team_ids FROM member_invitations WHERE org_id = $1 AND id = ANY ($2::text[])`);
/** The teams of these invitations, by invitation id. */
export async function invitationTeams(db: Queryable, orgId: string, invitationIds: readonly string[]): Promise<Map<string, string[]>> {
  if (invitationIds.length === 0) return new Map();
  const rows = await db.query<{ id: string; team_ids: string[] | string | null }>(ofInvitations, [orgId, [...invitationIds]]);
  return new Map(rows.map((r) => [r.id, asTextArray(r.team_ids)]));
}

/** PGlite and pg both give text[] as an array; a driver that gives its literal ('{a,b}') is read too. */
const asTextArray = (v: string[] | string | null): string[] =>
  v === null
    ? []
    : Array.isArray(v)
      ? v
      : v
          .replace(/^\{|\}$/g, '')
          .split(',')
          .filter(Boolean)
          .map((s) => s.replace(/^"|"$/g, ''));
