import type { Form } from '../../plugins/index.js';

/**
 * The members' forms as the domain's input, unchecked: inviteMember, updateMemberRole and
 * updatePassword check every field themselves (they take `unknown`), with the messages the
 * operator API and the CLI give.
 */
export const invitationOf = (form: Form) => ({ email: form.email, role: form.role });

export const roleOf = (form: Form) => form.role;

/** The two-factor form: whether every member must use it from now on. */
export const twoFactorRequiredOf = (form: Form) => form.required === 'true';

export const passwordChangeOf = (form: Form) => ({ current: form.current, next: form.next });
