import { invalid } from '../contract/errors.js';
import { DATE_TIME_RULE, FIRST_INSTANT, instantOf } from '../contract/schemas/date-time.js';

export const DAY_MS = 86_400_000;

/**
 * Parses a date-time under the API's one rule (contract/schemas/date-time.ts): validation has
 * normally refused a bad one already; this is the same check for values that did not pass a schema.
 */
export function parseDateTime(value: string, field: string): Date {
  const t = instantOf(value);
  if (t === null) throw invalid(`'${field}' ${DATE_TIME_RULE}.`);
  return new Date(t);
}

/** A calendar date (YYYY-MM-DD) as the start of that UTC day. */
export function parseDate(value: string, field: string): Date {
  const t = /^\d{4}-\d{2}-\d{2}$/.test(value) && !value.startsWith('0000') ? Date.parse(`${value}T00:00:00.000Z`) : NaN;
  if (Number.isNaN(t) || new Date(t).toISOString().slice(0, 10) !== value) {
    throw invalid(`'${field}' must be a calendar date YYYY-MM-DD.`);
  }
  return new Date(t);
}

export const ymd = (d: Date) => d.toISOString().slice(0, 10);
export const startOfUtcDay = (d: Date) => new Date(Math.floor(d.getTime() / DAY_MS) * DAY_MS);

export const WEEK_MS = 7 * DAY_MS;

/** Monday 00:00 UTC of the ISO week that holds `t`. */
export function startOfIsoWeek(t: Date): Date {
  const day = startOfUtcDay(t);
  return new Date(day.getTime() - ((day.getUTCDay() + 6) % 7) * DAY_MS);
}

/** The ISO 8601 week label of the week that holds `t`, like 2026-W47 (the year is the week's Thursday's). */
export function isoWeekLabel(t: Date): string {
  const thursday = new Date(startOfIsoWeek(t).getTime() + 3 * DAY_MS);
  const year = thursday.getUTCFullYear();
  const jan1 = new Date(0);
  jan1.setUTCFullYear(year, 0, 1); // Date.UTC would read years 0-99 as 1900-1999
  const week = Math.floor((thursday.getTime() - jan1.getTime()) / WEEK_MS) + 1;
  return `${String(year).padStart(4, '0')}-W${String(week).padStart(2, '0')}`;
}

/** Monday 00:00 UTC of an ISO week label (2026-W47); null when there is no such week (2026-W54, 2025-W53). */
export function parseIsoWeek(label: string): Date | null {
  const m = /^(\d{4})-W(\d{2})$/.exec(label);
  if (!m || Number(m[1]) < 1) return null;
  // 4 January is always in week 1.
  const jan4 = new Date(0);
  jan4.setUTCFullYear(Number(m[1]), 0, 4);
  const monday = new Date(startOfIsoWeek(jan4).getTime() + (Number(m[2]) - 1) * WEEK_MS);
  return isoWeekLabel(monday) === label ? monday : null;
}

/** Averages are rounded half up to 2 decimals, from exact integer sums. */
export function average(sum: number, count: number): number | null {
  return count === 0 ? null : Math.round((sum * 100) / count) / 100;
}

/** Resolves an optional half-open range with a default span ending now. */
export function resolveRange(q: { from?: string; to?: string }, defaultSpanMs: number, now: Date): { from: Date; to: Date } {
  const to = q.to !== undefined ? parseDateTime(q.to, 'to') : now;
  // A default span back from a 'to' in year 1 would reach year 0, which PostgreSQL has not.
  const from = q.from !== undefined ? parseDateTime(q.from, 'from') : new Date(Math.max(to.getTime() - defaultSpanMs, FIRST_INSTANT));
  if (from >= to) throw invalid(`'from' must be earlier than 'to'.`);
  return { from, to };
}
