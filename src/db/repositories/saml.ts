import { sql, type Queryable } from '../executor.js';
import { iso, isoOrNull } from './time.js';

/**
 * SAML 2.0 per organization (migration 0032, src/domain/sso/saml.ts): the service provider's key,
 * the identity provider trusted, the AuthnRequests outstanding and the assertions accepted. Every
 * query takes the organization first.
 */

export interface SamlProviderRow {
  orgId: string;
  /** Sealed ('sealed:v1:...'); opened by the domain only. */
  spPrivateKey: string;
  spCertificate: string;
  idpEntityId: string | null;
  idpSsoUrl: string | null;
  idpSloUrl: string | null;
  idpCertificates: string[];
  metadataXml: string | null;
  metadataUrl: string | null;
  emailAttribute: string | null;
  groupsAttribute: string | null;
  createdAt: string;
  updatedAt: string;
}

interface DbProvider {
  org_id: string;
  sp_private_key: string;
  sp_certificate: string;
  idp_entity_id: string | null;
  idp_sso_url: string | null;
  idp_slo_url: string | null;
  idp_certificates: string[] | string;
  metadata_xml: string | null;
  metadata_url: string | null;
  email_attribute: string | null;
  groups_attribute: string | null;
  created_at: Date;
  updated_at: Date;
}

/** A text[] as pg and PGlite return it (an array; a literal in the odd driver that does not parse it). */
function textArray(v: string[] | string): string[] {
  if (Array.isArray(v)) return v;
  const inner = v.replace(/^\{|\}$/g, '');
  if (!inner) return [];
  return inner.split(/,(?=(?:[^"]*"[^"]*")*[^"]*$)/).map((s) => s.replace(/^"|"$/g, '').replace(/\\(.)/g, '$1'));
}

const toRow = (r: DbProvider): SamlProviderRow => ({
  orgId: r.org_id,
  spPrivateKey: r.sp_private_key,
  spCertificate: r.sp_certificate,
  idpEntityId: r.idp_entity_id,
  idpSsoUrl: r.idp_sso_url,
  idpSloUrl: r.idp_slo_url,
  idpCertificates: textArray(r.idp_certificates),
  metadataXml: r.metadata_xml,
  metadataUrl: r.metadata_url,
  emailAttribute: r.email_attribute,
  groupsAttribute: r.groups_attribute,
  createdAt: iso(r.created_at),
  updatedAt: isoOrNull(r.updated_at)!,
});

const COLUMNS = `org_id, sp_private_key, sp_certificate, idp_entity_id, idp_sso_url, idp_slo_url, idp_certificates,
  metadata_xml, metadata_url, email_attribute, groups_attribute, created_at, updated_at`;

const findQuery = sql(
  'saml.find_provider',
  `SELECT ${COLUMNS} FROM saml_providers
    WHERE org_id = $1 AND EXISTS (SELECT 1 FROM organizations WHERE id = $1 AND deleted_at IS NULL)`,
);
/** The organization's SAML row; null when it has none, or when the organization is deleted (its IdP then signs no one in). */
export async function findSamlProvider(db: Queryable, orgId: string): Promise<SamlProviderRow | null> {
  const [r] = await db.query<DbProvider>(findQuery, [orgId]);
  return r ? toRow(r) : null;
}

const insertSpQuery = sql(
  'saml.insert_sp',
  `INSERT INTO saml_providers (org_id, sp_private_key, sp_certificate, created_at, updated_at)
   SELECT $1, $2, $3, $4, $4 WHERE EXISTS (SELECT 1 FROM organizations WHERE id = $1 AND deleted_at IS NULL)
   ON CONFLICT (org_id) DO NOTHING`,
);
/**
 * Stores the service provider's key unless the organization has one already (two processes that
 * make one at once keep the first: the caller reads the row again). Nothing for an unknown or
 * deleted organization.
 */
export async function insertSpKeyIfMissing(db: Queryable, orgId: string, sealedKey: string, certificate: string, now: Date): Promise<void> {
  await db.query(insertSpQuery, [orgId, sealedKey, certificate, now]);
}

export interface IdpSettings {
  idpEntityId: string;
  idpSsoUrl: string;
  idpSloUrl: string | null;
  idpCertificates: string[];
  metadataXml: string;
  metadataUrl: string | null;
  emailAttribute: string | null;
  groupsAttribute: string | null;
}

const updateIdpQuery = sql(
  'saml.update_idp',
  `UPDATE saml_providers
      SET idp_entity_id = $2, idp_sso_url = $3, idp_slo_url = $4, idp_certificates = $5::text[], metadata_xml = $6,
          metadata_url = $7, email_attribute = $8, groups_attribute = $9, updated_at = $10
    WHERE org_id = $1
   RETURNING ${COLUMNS}`,
);
/** Sets the identity provider of an organization whose service provider exists; null when it does not. */
export async function updateIdpSettings(db: Queryable, orgId: string, s: IdpSettings, now: Date): Promise<SamlProviderRow | null> {
  const [r] = await db.query<DbProvider>(updateIdpQuery, [
    orgId,
    s.idpEntityId,
    s.idpSsoUrl,
    s.idpSloUrl,
    s.idpCertificates,
    s.metadataXml,
    s.metadataUrl,
    s.emailAttribute,
    s.groupsAttribute,
    now,
  ]);
  return r ? toRow(r) : null;
}

const clearIdpQuery = sql(
  'saml.clear_idp',
  `UPDATE saml_providers
      SET idp_entity_id = NULL, idp_sso_url = NULL, idp_slo_url = NULL, idp_certificates = '{}', metadata_xml = NULL,
          metadata_url = NULL, email_attribute = NULL, groups_attribute = NULL, updated_at = $2
    WHERE org_id = $1 AND idp_entity_id IS NOT NULL
   RETURNING 1 AS n`,
);
/** Forgets the identity provider (the service provider's key stays: the IdP's copy of our metadata stays right). */
export async function clearIdpSettings(db: Queryable, orgId: string, now: Date): Promise<boolean> {
  return (await db.query(clearIdpQuery, [orgId, now])).length > 0;
}

const insertRequestQuery = sql('saml.insert_request', `INSERT INTO saml_requests (org_id, id, created_at, expires_at) VALUES ($1, $2, $3, $4)`);
export async function insertSamlRequest(db: Queryable, orgId: string, id: string, createdAt: Date, expiresAt: Date): Promise<void> {
  await db.query(insertRequestQuery, [orgId, id, createdAt, expiresAt]);
}

const findRequestQuery = sql('saml.find_request', `SELECT created_at FROM saml_requests WHERE org_id = $1 AND id = $2 AND expires_at > $3`);
/** When an unexpired request we sent was made (spent or not: spending decides once); null when unknown or expired. */
export async function findSamlRequest(db: Queryable, orgId: string, id: string, now: Date): Promise<string | null> {
  const [r] = await db.query<{ created_at: Date }>(findRequestQuery, [orgId, id, now]);
  return r ? iso(r.created_at) : null;
}

const spendRequestQuery = sql(
  'saml.spend_request',
  `UPDATE saml_requests SET spent_at = $3 WHERE org_id = $1 AND id = $2 AND expires_at > $3 AND spent_at IS NULL RETURNING 1 AS n`,
);
/** Spends an outstanding request: true for the one caller that marks it spent, false for every other (the row lock decides). */
export async function spendSamlRequest(db: Queryable, orgId: string, id: string, now: Date): Promise<boolean> {
  return (await db.query(spendRequestQuery, [orgId, id, now])).length > 0;
}

const recordAssertionQuery = sql(
  'saml.record_assertion',
  `INSERT INTO saml_assertions_seen (org_id, assertion_id, seen_at, expires_at) VALUES ($1, $2, $3, $4)
   ON CONFLICT (org_id, assertion_id) DO NOTHING RETURNING 1 AS n`,
);
/**
 * Records an accepted assertion's id: true the first time, false when it was seen already. Under
 * concurrency the primary key decides (a second insert waits for the first's transaction, then
 * finds the row).
 */
export async function recordSeenAssertion(db: Queryable, orgId: string, assertionId: string, now: Date, expiresAt: Date): Promise<boolean> {
  return (await db.query(recordAssertionQuery, [orgId, assertionId, now, expiresAt])).length > 0;
}

const purgeRequestsQuery = sql('saml.purge_requests', `DELETE FROM saml_requests WHERE org_id = $1 AND expires_at <= $2`);
const purgeSeenQuery = sql('saml.purge_seen', `DELETE FROM saml_assertions_seen WHERE org_id = $1 AND expires_at <= $2`);
/** Drops the organization's expired requests and the ids of assertions that have expired (they are refused as expired anyway). */
export async function purgeExpiredSaml(db: Queryable, orgId: string, now: Date): Promise<void> {
  await db.query(purgeRequestsQuery, [orgId, now]);
  await db.query(purgeSeenQuery, [orgId, now]);
}
