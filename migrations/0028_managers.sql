-- Issue 53: managers (CONTRACT.md section 11, amended). A fourth console role, `manager`, scoped to
-- one or more teams: it reads the Overview, alerts, actions and released comments of those teams
-- only (src/console/plugins/guard.ts, src/domain/insight.ts).
--
-- The roles' CHECKs widen on members and on invitations (both reference tables under Citus).
ALTER TABLE members DROP CONSTRAINT members_role_check;
ALTER TABLE members ADD CONSTRAINT members_role_check CHECK (role IN ('owner', 'admin', 'viewer', 'manager'));
ALTER TABLE member_invitations DROP CONSTRAINT member_invitations_role_check;
ALTER TABLE member_invitations ADD CONSTRAINT member_invitations_role_check CHECK (role IN ('owner', 'admin', 'viewer', 'manager'));

-- The teams an invitation makes its manager manage (empty for every other role), copied to
-- member_teams when it is accepted. An array on the invitation's own row: the invitation is found
-- by its token before its organization is known, and a team never leaves an organization.
ALTER TABLE member_invitations ADD COLUMN team_ids text[] NOT NULL DEFAULT '{}';

-- A manager's teams: one row per (member, team). Organization data, distributed by org_id under
-- Citus like teams, which it refers to; the member is a reference-table row, so its rows are
-- removed by the domain with the member or with a change of role (src/domain/members.ts), in the
-- same transaction.
CREATE TABLE member_teams (
  org_id     text NOT NULL REFERENCES organizations (id),
  member_id  text NOT NULL,
  team_id    text NOT NULL,
  PRIMARY KEY (org_id, member_id, team_id),
  FOREIGN KEY (org_id, team_id) REFERENCES teams (org_id, id)
);
