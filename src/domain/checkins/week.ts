import { DAY_MS, startOfIsoWeek, WEEK_MS, ymd } from '../time.js';
import { GRACE_HOURS } from './window.js';

/**
 * The weeks of check-ins: ISO weeks (UTC, CONTRACT.md section 5), each named by its Monday
 * (`YYYY-MM-DD`). The organization's round falls on its weekday and hour in its own time zone.
 */

export const weekOf = (t: Date): string => ymd(startOfIsoWeek(t));
export const weekStart = (week: string): Date => new Date(`${week}T00:00:00.000Z`);
export const addWeeks = (week: string, n: number): string => ymd(new Date(weekStart(week).getTime() + n * WEEK_MS));

/**
 * A link and its token serve through their week and its grace hours: an answer given in them
 * still belongs to the link's week. The page, by its own clock, answers under the key of the week
 * before only during these hours.
 */
export const checkinClosesAt = (week: string): Date => new Date(weekStart(week).getTime() + WEEK_MS + GRACE_HOURS * 3_600_000);

export function isTimeZone(tz: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: tz });
    return true;
  } catch {
    return false;
  }
}

/** How far the zone's wall clock is ahead of UTC at instant `t`, in ms. */
function zoneOffset(t: number, tz: string): number {
  const parts = new Intl.DateTimeFormat('en-US', {
    timeZone: tz,
    hourCycle: 'h23',
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
    hour: '2-digit',
    minute: '2-digit',
    second: '2-digit',
  }).formatToParts(new Date(t));
  const v = (type: string) => Number(parts.find((p) => p.type === type)!.value);
  const wall = Date.UTC(v('year'), v('month') - 1, v('day'), v('hour'), v('minute'), v('second'));
  return wall - Math.floor(t / 1000) * 1000;
}

/** The instant at which the wall clock of `tz` shows `hour`:00 on the day `day` (YYYY-MM-DD). */
export function zonedInstant(day: string, hour: number, tz: string): Date {
  const wall = new Date(`${day}T00:00:00.000Z`).getTime() + hour * 3_600_000;
  let t = wall - zoneOffset(wall, tz);
  t = wall - zoneOffset(t, tz); // once more across an offset change (a summer-time switch that day)
  return new Date(t);
}

export interface RoundSchedule {
  weekday: number;
  hour: number;
  timeZone: string;
  reminderWeekday: number | null;
}

/** When the round of `week` goes out: its weekday, at its hour, in its time zone. */
export const roundTime = (week: string, s: RoundSchedule): Date =>
  zonedInstant(ymd(new Date(weekStart(week).getTime() + (s.weekday - 1) * DAY_MS)), s.hour, s.timeZone);

/** When its reminder goes: a later weekday of the same week, same hour; null without one. */
export const reminderTime = (week: string, s: RoundSchedule): Date | null =>
  s.reminderWeekday !== null && s.reminderWeekday > s.weekday
    ? zonedInstant(ymd(new Date(weekStart(week).getTime() + (s.reminderWeekday - 1) * DAY_MS)), s.hour, s.timeZone)
    : null;

/**
 * The createdAt of a check-in's pulse: the answer's time rounded down to the hour, inside the
 * link's week (its last hour for an answer in the grace hours, its first for one before the week).
 */
export function answerHour(now: Date, week: string): Date {
  const hour = Math.floor(now.getTime() / 3_600_000) * 3_600_000;
  const first = weekStart(week).getTime();
  return new Date(Math.min(Math.max(hour, first), first + WEEK_MS - 3_600_000));
}
