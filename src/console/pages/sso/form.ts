import type { Form } from '../../plugins/index.js';

/**
 * The single sign-on forms as the domain's input, unchecked: saveOidcSettings, setSsoRequired and
 * the domain operations check every field themselves, with the messages the operator API and the
 * CLI give.
 */
export const oidcSettingsOf = (form: Form) => ({
  issuer: form.issuer,
  clientId: form.clientId,
  clientSecret: form.clientSecret,
  groupsClaim: form.groupsClaim,
  groupRoles: form.groupRoles ?? '',
  defaultRole: form.defaultRole,
  sessionMaxHours: form.sessionMaxHours,
});

export const requiredOf = (form: Form) => ({ required: form.required === 'true', breakGlassMemberId: form.breakGlassMemberId });

export const domainOf = (form: Form) => form.domain;

/** The SAML form as saveSamlSso's input: the metadata pasted or its URL (an empty field is none). */
export const samlSettingsOf = (form: Form) => ({
  metadataXml: form.metadataXml?.trim() ? form.metadataXml : undefined,
  metadataUrl: form.metadataUrl?.trim() ? form.metadataUrl : undefined,
  emailAttribute: form.emailAttribute ?? null,
  groupsAttribute: form.groupsAttribute ?? null,
  groupRoles: form.groupRoles ?? '',
  defaultRole: form.defaultRole,
  sessionMaxHours: form.sessionMaxHours,
});
