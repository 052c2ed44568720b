import { isTimeZone } from '../../../domain/checkins/week.js';
import type { Form } from '../../plugins/index.js';

/** A textarea's lines, trimmed, empty ones left out (reasons, flag words). */
const lines = (v: string | undefined) =>
  (v ?? '')
    .split(/\r?\n/)
    .map((l) => l.trim())
    .filter(Boolean);

/** A zone's city as people name it: its last part, underscores as spaces (Europe/Paris -> Paris, America/Argentina/Buenos_Aires -> Buenos Aires). */
export const cityOf = (zone: string) => (zone.split('/').pop() ?? zone).replace(/_/g, ' ');

let zones: { zone: string; city: string }[] | undefined;
/** Every IANA time zone this runtime knows, with its city, by city. */
export function timeZones(): { zone: string; city: string }[] {
  zones ??= [...new Set(['UTC', ...Intl.supportedValuesOf('timeZone')])]
    .map((zone) => ({ zone, city: zone === 'UTC' ? 'UTC (no time zone)' : cityOf(zone) }))
    .sort((a, b) => a.city.localeCompare(b.city) || a.zone.localeCompare(b.zone));
  return zones;
}

/**
 * The time zone field: an IANA name (Europe/Paris), or a city ("Paris", "buenos aires", or the
 * list's "Paris (Europe/Paris)"), read as its zone when exactly one zone has that city. Anything
 * else goes to the domain as typed, which refuses it with its own message.
 */
export function zoneOf(typed: string): string {
  const t = typed.trim();
  if (isTimeZone(t) && t.includes('/')) return t;
  const named = /\(([^()]+)\)$/.exec(t)?.[1];
  if (named && isTimeZone(named)) return named;
  const found = timeZones().filter((z) => z.city.toLowerCase() === t.toLowerCase());
  return found.length === 1 ? found[0]!.zone : t;
}

/** The settings form as updateCheckinSettings' patch (the domain checks every field). */
export const settingsOf = (form: Form) => ({
  weekday: Number(form.weekday),
  hour: Number(form.hour),
  timeZone: zoneOf(form.timeZone ?? ''),
  reminderWeekday: form.reminderWeekday ? Number(form.reminderWeekday) : null,
  reasons: lines(form.reasons),
  flagWords: lines(form.flagWords),
});
