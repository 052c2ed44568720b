-- Issue 41: invitations that can be revoked and die with the owner who made them.
--
-- invited_by: the member who made the invitation in the console (NULL: the operator, through its
-- API or the CLI). When that member is removed or demoted below owner, their pending invitations
-- are deleted in the same transaction (CONTRACT.md section 11).
ALTER TABLE member_invitations ADD COLUMN invited_by text;
CREATE INDEX member_invitations_by_inviter ON member_invitations (org_id, invited_by) WHERE accepted_at IS NULL;
