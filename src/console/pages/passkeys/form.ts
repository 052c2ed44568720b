import type { Form } from '../../plugins/index.js';

/**
 * The passkey forms as the domain's input, unchecked: src/domain/passkeys.ts checks every field
 * (the browser's answer is JSON text in `response`).
 */
export const registrationOf = (form: Form) => ({ password: form.password, name: form.name });
export const finishOf = (form: Form) => ({ name: form.name, response: form.response });
export const responseOf = (form: Form) => form.response;
export const nameOf = (form: Form) => form.name;
/** The form token the page was made with (the CSRF check has compared it): what a sign-in's challenge is bound to. */
export const tokenOf = (form: Form) => (typeof form._csrf === 'string' ? form._csrf : '');
export const requiredOf = (form: Form) => form.required === 'true';
