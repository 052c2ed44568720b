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
