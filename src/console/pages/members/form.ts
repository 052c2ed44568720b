import type { Form } from '../../plugins/index.js';

/**
 * The members' forms as the domain's input, unchecked: inviteMember, setMemberRoleAndTeams and
 * updatePassword check every field themselves (they take `unknown`), with the messages the
 * operator API and the CLI give.
 */

/** A team's checkbox: one field per team (a form field may not repeat), named by its id. */
export const TEAM_FIELD = 'team:';
export const teamsOf = (form: Form): string[] =>
  Object.keys(form)
    .filter((k) => k.startsWith(TEAM_FIELD))
    .map((k) => k.slice(TEAM_FIELD.length));

/** The teams ticked count for a manager only: another role's form may carry ticks it ignores. */
const teamsFor = (form: Form) => (form.role === 'manager' ? teamsOf(form) : []);

export const invitationOf = (form: Form) => ({ email: form.email, role: form.role, teams: teamsFor(form) });

export const roleOf = (form: Form) => form.role;

export const roleAndTeamsOf = (form: Form) => ({ role: form.role, teams: teamsFor(form) });

/** The two-factor form: whether every member must use it from now on. */
export const twoFactorRequiredOf = (form: Form) => form.required === 'true';

export const passwordChangeOf = (form: Form) => ({ current: form.current, next: form.next });

/** The Account page's language: a locale, or '' to follow the browser (setMemberLanguage checks it). */
export const languageOf = (form: Form) => form.language;
