import type { DatabaseExecutor, Queryable } from '../database.js';
import { findMember } from '../../db/repositories/members.js';
import { endIdpSessions, findSsoSettings, listSsoDomains, lockSsoSettings, writeSsoSettings, type SsoSettingsRow } from '../../db/repositories/sso.js';
import { invalid } from '../../contract/errors.js';
import { recordAudit, type Actor } from '../audit.js';
import { memberActor } from '../members.js';
import { requireLiveOrg } from '../orgs.js';
import { openIdpSession, SESSION_MAX_MS, type SignedIn } from '../sessions.js';
import { mapGroups, memberFromIdp } from './members.js';
import { SSO_NO_ROLE, SSO_REFUSED, SSO_WRONG_DOMAIN, SsoRefused } from './oidc.js';
import { configureSamlIdp, consumeSamlResponse, handleSamlLogoutRequest, removeSamlIdp, type SamlLogoutMessage, type SamlSettingsInput } from './saml.js';
import { mappableRoles, parseGroupRoles, settingsView, type SsoSettingsView } from './settings.js';

/*
 * SAML 2.0 sign-in wired to the console's sessions (issue 55, item 2): what src/domain/sso/saml.ts
 * leaves to its caller. The organization's sso_settings row says kind 'saml' once a SAML IdP is
 * connected, so that the sign-in page, enforced SSO, the break-glass owner and the domains work
 * as with OpenID Connect; the checked assertion makes or updates the member (just in time) and
 * opens a session linked to the IdP's session (NameID, SessionIndex), which the IdP's single
 * logout ends.
 */

/** The kind of the organization's single sign-on ('oidc', 'saml'), or null when none is set up. */
export async function ssoKindOf(db: Queryable, orgId: string): Promise<'oidc' | 'saml' | null> {
  return (await findSsoSettings(db, orgId))?.kind ?? null;
}

export const SSO_SAML_NOT_SET_UP = 'This organization has not set up single sign-on through SAML.';

export interface SamlSsoInput extends SamlSettingsInput {
  groupRoles?: unknown;
  defaultRole?: unknown;
  sessionMaxHours?: unknown;
}

/**
 * Connects (or reconnects) the organization's SAML IdP (configureSamlIdp: the metadata pasted or
 * fetched through the SSRF guard) and makes its single sign-on settings say kind 'saml', with the
 * group mappings (audited as sso.configured). The mappings are checked before anything is saved.
 */
export async function saveSamlSso(
  db: DatabaseExecutor,
  orgId: string,
  input: SamlSsoInput,
  actor: Actor,
  now: Date,
  opts: { baseUrl: string; allowPrivate?: boolean },
): Promise<SsoSettingsView> {
  const groupRoles = input.groupRoles === undefined ? undefined : parseGroupRoles(input.groupRoles);
  const defaultRole = input.defaultRole === undefined || input.defaultRole === '' || input.defaultRole === null ? null : input.defaultRole;
  if (defaultRole !== null && (defaultRole === 'owner' || !mappableRoles().includes(defaultRole as string)))
    throw invalid(
      `The role of people in no mapped group must be one of ${mappableRoles()
        .filter((r) => r !== 'owner')
        .join(', ')}, or none.`,
    );
  const hours = input.sessionMaxHours === undefined || input.sessionMaxHours === '' ? undefined : Number(input.sessionMaxHours);
  if (hours !== undefined && !(Number.isInteger(hours) && hours >= 1 && hours <= 168))
    throw invalid('The longest session must be a whole number of hours from 1 to 168.');
  await requireLiveOrg(db, orgId);
  const saml = await configureSamlIdp(
    db,
    orgId,
    { metadataXml: input.metadataXml, metadataUrl: input.metadataUrl, emailAttribute: input.emailAttribute, groupsAttribute: input.groupsAttribute },
    actor,
    opts,
  );
  return db.transaction(async (tx) => {
    const old = await lockSsoSettings(tx, orgId);
    const row: Omit<SsoSettingsRow, 'createdAt' | 'updatedAt'> = {
      orgId,
      kind: 'saml',
      oidcIssuer: null,
      oidcClientId: null,
      oidcClientSecretSealed: null,
      groupsClaim: (saml.groupsAttribute ?? 'groups').slice(0, 200),
      groupRoles: groupRoles ?? old?.groupRoles ?? [],
      defaultRole: (defaultRole as SsoSettingsRow['defaultRole']) ?? (input.defaultRole === undefined ? (old?.defaultRole ?? null) : null),
      required: old?.required ?? false,
      breakGlassMemberId: old?.breakGlassMemberId ?? null,
      sessionMaxHours: hours ?? old?.sessionMaxHours ?? 168,
    };
    await writeSsoSettings(tx, row, now);
    await recordAudit(
      tx,
      orgId,
      actor,
      {
        action: 'sso.configured',
        target: { kind: 'organization', id: orgId },
        details: {
          kind: 'saml',
          idpEntityId: saml.idp?.entityId ?? null,
          metadataUrl: saml.idp?.metadataUrl ?? null,
          groupsAttribute: saml.groupsAttribute,
          groupRoles: row.groupRoles.length,
          defaultRole: row.defaultRole,
          sessionMaxHours: row.sessionMaxHours,
        },
      },
      now,
    );
    return settingsView({ ...row, createdAt: old?.createdAt ?? now.toISOString(), updatedAt: now.toISOString() });
  });
}

/** Disconnects the SAML IdP's keys and metadata too when the organization's SSO is removed (the SP key stays, so its metadata URL keeps working). */
export async function forgetSamlIdp(db: DatabaseExecutor, orgId: string, actor: Actor): Promise<void> {
  await removeSamlIdp(db, orgId, actor);
}

/**
 * The ACS: the IdP's SAMLResponse checked by consumeSamlResponse (bound to this browser's request
 * id), then, as an OpenID Connect sign-in does, the address's domain must be a verified one, the
 * groups map to a role, and the member is made or updated and a session opened, linked to the IdP
 * session, in one transaction, audited. The session ends at the IdP session's end or at the
 * organization's maximum, whichever comes first. A refusal is an SsoRefused (reason for the log).
 */
export async function finishSamlSignIn(
  db: DatabaseExecutor,
  orgId: string,
  o: { baseUrl: string; samlResponse: unknown; expectedRequestId: string | undefined; address: string; now: Date },
): Promise<SignedIn> {
  const s = await findSsoSettings(db, orgId);
  if (s?.kind !== 'saml') throw new SsoRefused('not_set_up', SSO_SAML_NOT_SET_UP);
  // Without the browser's binding, nothing is read: a response for another browser is refused as such.
  if (!o.expectedRequestId) throw new SsoRefused('other_browser');
  const r = await consumeSamlResponse(db, orgId, o.baseUrl, { samlResponse: o.samlResponse, expectedRequestId: o.expectedRequestId });
  if (!r.ok) throw new SsoRefused(r.refusal, SSO_REFUSED, r.detail);
  const id = r.identity;
  const domain = id.email.slice(id.email.lastIndexOf('@') + 1);
  if (!(await listSsoDomains(db, orgId)).some((d) => d.domain === domain && d.verifiedAt)) throw new SsoRefused('wrong_domain', SSO_WRONG_DOMAIN);
  const mapped = mapGroups(s, id.groups);
  if (!mapped) throw new SsoRefused('no_role', SSO_NO_ROLE);
  const orgEnd = o.now.getTime() + Math.min(s.sessionMaxHours * 3_600_000, SESSION_MAX_MS);
  const idpEnd = id.sessionNotOnOrAfter ? Date.parse(id.sessionNotOnOrAfter) : Number.POSITIVE_INFINITY;
  if (idpEnd <= o.now.getTime()) throw new SsoRefused('expired', SSO_REFUSED, 'the IdP session has ended');
  const endsAt = new Date(Math.min(orgEnd, idpEnd));
  return db.transaction(async (tx) => {
    const { member } = await memberFromIdp(tx, orgId, { email: id.email, subject: id.nameId, mapped, via: 'saml', address: o.address }, o.now);
    const session = await openIdpSession(tx, member, { protocol: 'saml', subject: id.nameId, session: id.sessionIndex, endsAt }, o.address, o.now);
    await recordAudit(
      tx,
      orgId,
      memberActor(member, o.address),
      { action: 'member.signed_in', target: { kind: 'member', id: member.id }, details: { twoFactor: false, via: 'saml' } },
      o.now,
    );
    return session;
  });
}

/**
 * The IdP's single logout: a signed LogoutRequest (handleSamlLogoutRequest) ends the console
 * sessions of its NameID (of its SessionIndex only, when it names one), on every process (they are
 * rows), audited per member. Answers the signed LogoutResponse redirect, or the refusal.
 */
export async function samlSingleLogout(
  db: DatabaseExecutor,
  orgId: string,
  baseUrl: string,
  message: SamlLogoutMessage,
  o: { address: string | null; now: Date },
): Promise<{ ok: true; ended: number; redirectUrl: string | null } | { ok: false; refusal: string; detail: string }> {
  const r = await handleSamlLogoutRequest(db, orgId, baseUrl, message);
  if (!r.ok) return r;
  const ended = await db.transaction(async (tx) => {
    const members = await endIdpSessions(tx, orgId, 'saml', { subject: r.nameId, session: r.sessionIndex ?? undefined });
    const counts = new Map<string, number>();
    for (const m of members) counts.set(m, (counts.get(m) ?? 0) + 1);
    for (const [memberId, n] of counts) {
      const m = await findMember(tx, orgId, memberId);
      await recordAudit(
        tx,
        orgId,
        m ? memberActor(m, o.address) : { kind: 'operator', address: o.address },
        { action: 'member.sessions_ended', target: { kind: 'member', id: memberId }, details: { ended: n, includingCurrent: true, via: 'saml_single_logout' } },
        o.now,
      );
    }
    return members.length;
  });
  return { ok: true, ended, redirectUrl: r.responseRedirectUrl };
}
