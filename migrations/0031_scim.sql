-- Issue 56: the roster from the company's own systems, by SCIM 2.0 (CONTRACT.md section 12,
-- amended: *The roster from SCIM*). One roster, many doors: SCIM writes the same `respondents` and
-- `teams` rows as the people file and the People page, through the same domain operations.

-- An organization's SCIM bearer tokens, made like API keys: `cp_scim_` + base62 from a CSPRNG,
-- only its SHA-256 kept (found by it before the organization is known, hence a unique index of
-- its own), a short display prefix, who made it. A roll gives the old token an expiry.
CREATE TABLE scim_tokens (
  org_id      text NOT NULL REFERENCES organizations (id),
  id          text NOT NULL CHECK (length(id) BETWEEN 1 AND 128),
  token_hash  bytea NOT NULL CHECK (length(token_hash) = 32),
  prefix      text NOT NULL CHECK (length(prefix) BETWEEN 1 AND 32),
  name        text CHECK (length(name) BETWEEN 1 AND 128),
  created_at  timestamptz NOT NULL,
  created_by  text CHECK (length(created_by) BETWEEN 1 AND 320),
  expires_at  timestamptz,
  revoked_at  timestamptz,
  PRIMARY KEY (org_id, id)
);
CREATE UNIQUE INDEX scim_tokens_by_hash ON scim_tokens (token_hash);

-- How SCIM's users find their team: by their Groups memberships ('groups', the default) or by
-- the enterprise extension's `department` ('department').
CREATE TABLE scim_settings (
  org_id      text PRIMARY KEY REFERENCES organizations (id),
  team_from   text NOT NULL DEFAULT 'groups' CHECK (team_from IN ('groups', 'department')),
  updated_at  timestamptz NOT NULL
);

-- Where each person of the roster came from: the people file, by hand (the People page, the
-- operator API, the CLI), or SCIM. A person whom SCIM owns is not edited by hand (the domain refuses).
ALTER TABLE respondents ADD COLUMN source text NOT NULL DEFAULT 'console' CHECK (source IN ('file', 'console', 'scim'));
-- What the identity provider calls them: its userName when it differs from the address, its
-- externalId; when SCIM last changed them (meta.lastModified reads the latest of this, the
-- creation and the last move).
ALTER TABLE respondents ADD COLUMN scim_user_name text CHECK (length(scim_user_name) BETWEEN 1 AND 254);
ALTER TABLE respondents ADD COLUMN scim_external_id text CHECK (length(scim_external_id) BETWEEN 1 AND 254);
ALTER TABLE respondents ADD COLUMN scim_modified_at timestamptz;
CREATE INDEX respondents_by_scim_external_id ON respondents (org_id, scim_external_id);
CREATE INDEX respondents_by_scim_user_name ON respondents (org_id, lower(scim_user_name));

-- A team as a SCIM Group: its externalId, when SCIM last changed it, and whether SCIM removed
-- it (a team keeps its pulses, so a removed group leaves the team in the history, with nobody on it).
ALTER TABLE teams ADD COLUMN scim_external_id text CHECK (length(scim_external_id) BETWEEN 1 AND 254);
ALTER TABLE teams ADD COLUMN scim_modified_at timestamptz;
ALTER TABLE teams ADD COLUMN scim_removed boolean NOT NULL DEFAULT false;

-- Users SCIM set `active: false`: off the roster (their `respondents` row is removed, as a removal
-- by hand), kept here so that the identity provider still reads them and can turn them on again
-- under the same id. Their team is remembered as it was.
CREATE TABLE scim_inactive_users (
  org_id            text NOT NULL REFERENCES organizations (id),
  id                text NOT NULL CHECK (length(id) BETWEEN 1 AND 128),
  email             text NOT NULL CHECK (length(email) BETWEEN 3 AND 254),
  user_name         text CHECK (length(user_name) BETWEEN 1 AND 254),
  external_id       text CHECK (length(external_id) BETWEEN 1 AND 254),
  team_id           text,
  created_at        timestamptz NOT NULL,
  modified_at       timestamptz NOT NULL,
  PRIMARY KEY (org_id, id),
  FOREIGN KEY (org_id, team_id) REFERENCES teams (org_id, id)
);
CREATE UNIQUE INDEX scim_inactive_users_by_email ON scim_inactive_users (org_id, lower(email));
CREATE INDEX scim_inactive_users_by_user_name ON scim_inactive_users (org_id, lower(user_name));
