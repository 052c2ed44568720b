-- Issue 55, item 2: SAML 2.0 per organization (CONTRACT.md section 11, "Single sign-on",
-- amended; src/domain/sso/saml.ts). Three tables, all keyed by the organization first, so each is
-- distributed by org_id under Citus and moves with `db copy`, a backup and its restore.

-- The organization's service provider (its key and certificate, made at the first look at its
-- metadata) and the identity provider it trusts (from the IdP's metadata, pasted in or fetched).
-- sp_private_key is sealed (AES-256-GCM under the service secret 'saml_seal', bound to the
-- organization): 'sealed:v1:<base64url>'. The IdP's columns are NULL until an owner connects one.
CREATE TABLE saml_providers (
  org_id            text PRIMARY KEY REFERENCES organizations (id),
  sp_private_key    text NOT NULL CHECK (sp_private_key LIKE 'sealed:v1:%'),
  sp_certificate    text NOT NULL CHECK (sp_certificate LIKE '-----BEGIN CERTIFICATE-----%'),
  idp_entity_id     text CHECK (length(idp_entity_id) BETWEEN 1 AND 1024),
  idp_sso_url       text CHECK (length(idp_sso_url) BETWEEN 1 AND 2048),
  idp_slo_url       text CHECK (length(idp_slo_url) BETWEEN 1 AND 2048),
  -- PEM certificates the IdP signs with: several during its key's rollover.
  idp_certificates  text[] NOT NULL DEFAULT '{}',
  -- What the settings came from: the metadata as it was read, and its URL when fetched.
  metadata_xml      text CHECK (length(metadata_xml) <= 1000000),
  metadata_url      text CHECK (length(metadata_url) <= 2048),
  -- Attribute names read from the assertion; NULL: the usual names (docs/sso-saml.md).
  email_attribute   text CHECK (length(email_attribute) BETWEEN 1 AND 512),
  groups_attribute  text CHECK (length(groups_attribute) BETWEEN 1 AND 512),
  created_at        timestamptz NOT NULL,
  updated_at        timestamptz NOT NULL,
  CHECK ((idp_entity_id IS NULL) = (idp_sso_url IS NULL)),
  CHECK (idp_entity_id IS NULL OR cardinality(idp_certificates) >= 1)
);

-- AuthnRequests sent: a response's InResponseTo must name one that is unexpired, and spends it
-- (spent_at, set in the transaction that accepts the assertion) once, whichever process sent it.
-- A spent row stays until it expires, so that a replay is told apart from an unknown request.
CREATE TABLE saml_requests (
  org_id      text NOT NULL REFERENCES organizations (id),
  id          text NOT NULL CHECK (length(id) BETWEEN 1 AND 256),
  created_at  timestamptz NOT NULL,
  expires_at  timestamptz NOT NULL,
  spent_at    timestamptz,
  PRIMARY KEY (org_id, id)
);
CREATE INDEX saml_requests_by_expiry ON saml_requests (org_id, expires_at);

-- Assertions accepted: an id is accepted once, across processes, by this primary key (the
-- database decides, never a timing). A row may go once its assertion has expired (expires_at, the
-- latest NotOnOrAfter it carried, plus the clock skew allowed): it is refused as expired then.
CREATE TABLE saml_assertions_seen (
  org_id        text NOT NULL REFERENCES organizations (id),
  assertion_id  text NOT NULL CHECK (length(assertion_id) BETWEEN 1 AND 256),
  seen_at       timestamptz NOT NULL,
  expires_at    timestamptz NOT NULL,
  PRIMARY KEY (org_id, assertion_id)
);
CREATE INDEX saml_assertions_seen_by_expiry ON saml_assertions_seen (org_id, expires_at);
