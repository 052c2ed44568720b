-- Issue 41: invitations that can be revoked and die with the owner who made them.
--
-- invited_by: the member who made the invitation in the console (NULL: the operator, through its
-- API or the CLI). When that member is removed or demoted below owner, their pending invitations
-- are deleted in the same transaction (CONTRACT.md section 11).
ALTER TABLE member_invitations ADD COLUMN invited_by text;
CREATE INDEX member_invitations_by_inviter ON member_invitations (org_id, invited_by) WHERE accepted_at IS NULL;

-- One address may be a member of several organizations, each membership with its own password
-- and second factor (docs/decisions.md, "an address in two organizations"): no acceptance can then
-- fail because another organization holds the address, so none tells an owner whether it does.
-- Unique per organization; sign-in finds every membership of an email through the plain index.
DROP INDEX members_by_email;
CREATE UNIQUE INDEX members_by_org_email ON members (org_id, lower(email));
CREATE INDEX members_by_email_lookup ON members (lower(email));

-- The two-factor secret a session is enrolling: made by the server and shown once (as a QR code
-- and as text); the form carries only the code, so no client chooses the secret.
ALTER TABLE console_sessions ADD COLUMN pending_totp_secret text;

-- Post, redirect, get: what a change said (a new secret included) waits here for the page the
-- redirect leads to, which shows it once and clears it. Encrypted with a key derived from the
-- session's cookie, which the database never holds (it keeps the cookie's SHA-256 only).
ALTER TABLE console_sessions ADD COLUMN flash bytea;
