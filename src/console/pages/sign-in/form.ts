import type { Form } from '../../plugins/index.js';

/**
 * The forms before and at sign-in as the domain's input, unchecked: signIn, completeTwoFactor,
 * enrollTotp and acceptInvitation check every field (and spend the sign-in limits) themselves.
 */
export const credentialsOf = (form: Form) => ({ email: form.email, password: form.password, organization: form.organization });

/** The email a refused sign-in form shows again (as typed, bounded). */
export const typedEmailOf = (form: Form | undefined) => (typeof form?.email === 'string' ? form.email.slice(0, 254) : '');

export const codeOf = (form: Form) => form.code;

/** The enrollment form: the code, and the password (every enrollment asks for it again). */
export const enrollmentOf = (form: Form) => ({ code: form.code, password: form.password });

export const acceptanceOf = (token: string, form: Form) => ({ token, password: form.password });

/**
 * Whether the person chose to sign in with a password although their address is on a domain that
 * goes to the organization's IdP (the break-glass owner when the IdP fails; issue 55): the sign-in
 * page's link sets it in the query, and its form carries it on.
 */
export const withoutSsoOf = (request: { query?: unknown; body?: unknown }) =>
  (request.query as Record<string, unknown> | undefined)?.['without-sso'] === '1' || (request.body as Form | undefined)?.without_sso === '1';
