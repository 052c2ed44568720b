-- Issue 55, item 5: passkeys (WebAuthn) for console members, as a second factor after the password
-- or on their own (CONTRACT.md section 11, amended: *Passkeys*).
--
-- member_passkeys is found by its credential id before the organization is known (a passkey
-- sign-in names no one before the authenticator answers), as members are found by an email and
-- console_sessions by a cookie: on Citus it is a reference table like them (src/db/citus.ts). A
-- member's passkeys go with the member (ON DELETE CASCADE) and with an erased organization.
CREATE TABLE member_passkeys (
  org_id         text NOT NULL,
  id             text NOT NULL,
  member_id      text NOT NULL,
  -- The credential id the authenticator made (raw bytes): one credential, one member, anywhere.
  credential_id  bytea NOT NULL CHECK (octet_length(credential_id) BETWEEN 16 AND 1023),
  -- The COSE public key the authenticator gave at registration; nothing secret is kept.
  public_key     bytea NOT NULL,
  -- The authenticator's signature counter at its last use: a use whose counter is not above it
  -- (when either is not zero) is a cloned authenticator's, and refused.
  sign_count     bigint NOT NULL DEFAULT 0 CHECK (sign_count >= 0),
  -- How the browser may reach it (usb, nfc, ble, hybrid, internal): a hint for the next ceremony.
  transports     text[] NOT NULL DEFAULT '{}',
  -- The name the member gives it ("Work laptop").
  name           text NOT NULL CHECK (length(name) BETWEEN 1 AND 64),
  -- Whether the authenticator says the credential is synced (a passkey of a password manager).
  backed_up      boolean NOT NULL DEFAULT false,
  created_at     timestamptz NOT NULL,
  last_used_at   timestamptz,
  PRIMARY KEY (org_id, id),
  FOREIGN KEY (org_id, member_id) REFERENCES members (org_id, id) ON DELETE CASCADE
);
CREATE UNIQUE INDEX member_passkeys_by_credential ON member_passkeys (credential_id);
CREATE INDEX member_passkeys_by_member ON member_passkeys (org_id, member_id);

-- One-time WebAuthn challenges. A challenge is made by the server (random, with its purpose, its
-- expiry and what it is bound to, under an HMAC of a service secret: src/domain/passkeys.ts), so
-- showing a page writes nothing; using one inserts its digest here, and the primary key lets it in
-- once: a replayed answer finds its challenge used, on one process or many. Rows past their expiry
-- are purged. Service-wide, not organization data (a passkey sign-in has no organization yet).
CREATE TABLE webauthn_challenges (
  digest      bytea PRIMARY KEY,
  expires_at  timestamptz NOT NULL
);
CREATE INDEX webauthn_challenges_by_expiry ON webauthn_challenges (expires_at);

-- An owner's "passkeys required for owners and admins" (docs/decisions.md, "Passkeys required").
ALTER TABLE organizations ADD COLUMN require_passkeys boolean NOT NULL DEFAULT false;

-- Whether the session's member proved a passkey at sign-in (or registered one in it): under the
-- requirement, an owner's or admin's session without it is held until they do.
ALTER TABLE console_sessions ADD COLUMN passkey boolean NOT NULL DEFAULT false;
