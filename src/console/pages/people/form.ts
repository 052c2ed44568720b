import type { Form } from '../../plugins/index.js';

/** A textarea's lines, trimmed, empty ones left out (reasons, flag words). */
const lines = (v: string | undefined) =>
  (v ?? '')
    .split(/\r?\n/)
    .map((l) => l.trim())
    .filter(Boolean);

/** The add form as createRespondent's input (the domain checks the address and the team). */
export const respondentOf = (form: Form) => ({ email: form.email ?? '', team: form.team || null });

/** The move form's team: none when left empty. */
export const teamOf = (form: Form) => form.team || null;

/** The settings form as updateCheckinSettings' patch (the domain checks every field). */
export const settingsOf = (form: Form) => ({
  weekday: Number(form.weekday),
  hour: Number(form.hour),
  timeZone: form.timeZone ?? '',
  reminderWeekday: form.reminderWeekday ? Number(form.reminderWeekday) : null,
  reasons: lines(form.reasons),
  flagWords: lines(form.flagWords),
});
