-- Issue 55: single sign-on (CONTRACT.md section 11, amended). An organization's identity provider
-- (OpenID Connect here; SAML's own columns come with its own migration), the domains whose
-- addresses go to it, the one-time state of a sign-in under way, and the link of a console session
-- to the IdP's session it came from (for back-channel logout and the session's end).
--
-- sso_domains is found by an address's domain before the organization is known (the sign-in page),
-- so on Citus it is a reference table, like members; the rest are found with the organization
-- (every SSO URL names it) and are distributed by org_id.

CREATE TABLE sso_settings (
  org_id                     text PRIMARY KEY REFERENCES organizations (id),
  kind                       text NOT NULL CHECK (kind IN ('oidc', 'saml')),
  -- OpenID Connect: the issuer (discovery reads <issuer>/.well-known/openid-configuration), the
  -- client registered at the IdP, and its secret sealed ('sealed:v1:...', src/domain/sso/seal.ts:
  -- AES-256-GCM under the service secret 'sso_seal', bound to the organization).
  oidc_issuer                text CHECK (length(oidc_issuer) <= 2048),
  oidc_client_id             text CHECK (length(oidc_client_id) <= 512),
  oidc_client_secret_sealed  text,
  -- The claim (OIDC) or attribute (SAML) listing the person's groups, and what each group maps to:
  -- a JSON array of {"group": text, "role": "owner"|"admin"|"manager"|"viewer", "teams": [team ids]}.
  groups_claim               text NOT NULL DEFAULT 'groups' CHECK (length(groups_claim) BETWEEN 1 AND 200),
  group_roles                jsonb NOT NULL DEFAULT '[]',
  -- The role of a person in none of the mapped groups; NULL: such a person is refused.
  default_role               text CHECK (default_role IN ('admin', 'manager', 'viewer')),
  -- Enforced SSO: password and two-factor sign-in stop for every member but the break-glass owner.
  required                   boolean NOT NULL DEFAULT false,
  break_glass_member_id      text,
  -- The longest a console session opened through the IdP lasts (never more than the console's 7 days).
  session_max_hours          integer NOT NULL DEFAULT 168 CHECK (session_max_hours BETWEEN 1 AND 168),
  created_at                 timestamptz NOT NULL,
  updated_at                 timestamptz NOT NULL,
  CHECK (kind <> 'oidc' OR (oidc_issuer IS NOT NULL AND oidc_client_id IS NOT NULL AND oidc_client_secret_sealed IS NOT NULL))
);

CREATE TABLE sso_domains (
  org_id       text NOT NULL REFERENCES organizations (id),
  -- Lower case, no trailing dot.
  domain       text NOT NULL CHECK (length(domain) BETWEEN 3 AND 253 AND domain = lower(domain)),
  -- The value of the TXT record that proves control of the domain: climate-pulse-verification=<token>.
  txt_token    text NOT NULL,
  created_at   timestamptz NOT NULL,
  verified_at  timestamptz,
  verified_by  text CHECK (verified_by IN ('operator', 'dns')),
  PRIMARY KEY (org_id, domain),
  CHECK ((verified_at IS NULL) = (verified_by IS NULL))
);
-- A verified domain belongs to one organization: the database refuses a second, whatever the race.
CREATE UNIQUE INDEX sso_domains_verified ON sso_domains (domain) WHERE verified_at IS NOT NULL;

-- A sign-in under way: made when the browser leaves for the IdP, consumed by the one callback that
-- deletes it (DELETE ... RETURNING: a replayed state finds nothing, on any process). Expiry is a
-- column compared with the time of the callback, never a timer.
CREATE TABLE sso_sign_ins (
  org_id          text NOT NULL REFERENCES organizations (id),
  -- SHA-256 of the `state` sent to the IdP.
  state_hash      bytea NOT NULL,
  -- SHA-256 of the cookie that binds the sign-in to the browser that began it (login CSRF).
  browser_hash    bytea NOT NULL,
  nonce           text NOT NULL,
  pkce_verifier   text NOT NULL,
  created_at      timestamptz NOT NULL,
  expires_at      timestamptz NOT NULL,
  PRIMARY KEY (org_id, state_hash)
);
CREATE INDEX sso_sign_ins_by_expiry ON sso_sign_ins (expires_at);

-- A console session opened through the IdP: which IdP session it belongs to (OIDC `sid` and `sub`;
-- SAML SessionIndex and NameID) and when it ends at the latest (the IdP session's end, or the
-- organization's maximum, whichever comes first). NULL on password sessions.
ALTER TABLE console_sessions ADD COLUMN sso_protocol text CHECK (sso_protocol IN ('oidc', 'saml'));
ALTER TABLE console_sessions ADD COLUMN sso_subject text;
ALTER TABLE console_sessions ADD COLUMN sso_session text;
ALTER TABLE console_sessions ADD COLUMN ends_at timestamptz;
CREATE INDEX console_sessions_by_sso_subject ON console_sessions (org_id, sso_subject) WHERE sso_subject IS NOT NULL;

-- The IdP's subject a member was made from (just in time) or last signed in as.
ALTER TABLE members ADD COLUMN sso_subject text;
