-- Issue 27: the organization console (CONTRACT.md section 11): its members, their invitations,
-- their sessions and the limits on signing in.
--
-- members, member_invitations and console_sessions are found before the organization is known (an
-- email at sign-in, an invitation's token, a session's cookie), as api_keys is found by its hash:
-- on Citus they are reference tables like api_keys. They hold few rows.

-- An owner's "require two-factor" for every member.
ALTER TABLE organizations ADD COLUMN require_two_factor boolean NOT NULL DEFAULT false;

CREATE TABLE members (
  org_id           text NOT NULL REFERENCES organizations (id),
  id               text NOT NULL,
  -- As given (trimmed); one person, one organization: unique whatever the case.
  email            text NOT NULL CHECK (length(email) BETWEEN 3 AND 254),
  role             text NOT NULL CHECK (role IN ('owner', 'admin', 'viewer')),
  -- scrypt, with its parameters and salt: never reversible.
  password_hash    text NOT NULL,
  -- The TOTP secret (base32) once enrolled; recovery codes as SHA-256 digests, a used one removed.
  totp_secret      text,
  totp_last_step   bigint,
  recovery_codes   bytea[] NOT NULL DEFAULT '{}',
  created_at       timestamptz NOT NULL,
  last_sign_in_at  timestamptz,
  PRIMARY KEY (org_id, id)
);
CREATE UNIQUE INDEX members_by_email ON members (lower(email));

CREATE TABLE member_invitations (
  org_id       text NOT NULL REFERENCES organizations (id),
  id           text NOT NULL,
  email        text NOT NULL CHECK (length(email) BETWEEN 3 AND 254),
  role         text NOT NULL CHECK (role IN ('owner', 'admin', 'viewer')),
  -- SHA-256 of the link's token (at least 128 random bits); the token itself is never stored.
  token_hash   bytea NOT NULL,
  created_at   timestamptz NOT NULL,
  expires_at   timestamptz NOT NULL,
  accepted_at  timestamptz,
  PRIMARY KEY (org_id, id)
);
CREATE UNIQUE INDEX member_invitations_by_token ON member_invitations (token_hash);

CREATE TABLE console_sessions (
  org_id        text NOT NULL REFERENCES organizations (id),
  -- SHA-256 of the cookie's random id; the id itself is never stored.
  id_hash       bytea NOT NULL,
  member_id     text NOT NULL,
  -- 'active'; 'totp' (password right, code still to give); 'enroll' (the organization requires
  -- two-factor and the member has none yet: only enrolling is allowed).
  stage         text NOT NULL CHECK (stage IN ('active', 'totp', 'enroll')),
  -- The token every change carries (bound to the session).
  csrf_token    text NOT NULL,
  address       text,
  created_at    timestamptz NOT NULL,
  last_seen_at  timestamptz NOT NULL,
  PRIMARY KEY (org_id, id_hash)
);
CREATE UNIQUE INDEX console_sessions_by_id ON console_sessions (id_hash);
CREATE INDEX console_sessions_by_member ON console_sessions (org_id, member_id);

-- Failed sign-ins per account and per address in fixed 15-minute windows: reserved before the
-- password is checked (so concurrent attempts cannot pass the limit), given back on success.
-- Service-wide, not organization data (an address is no organization's).
CREATE TABLE console_sign_in_attempts (
  scope         text NOT NULL CHECK (scope IN ('account', 'address')),
  key           text NOT NULL,
  window_start  timestamptz NOT NULL,
  count         integer NOT NULL,
  PRIMARY KEY (scope, key, window_start)
);
