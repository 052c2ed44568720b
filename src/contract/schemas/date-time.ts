import { Format } from 'typebox/format';

/**
 * The one rule for every date-time a request carries (CONTRACT.md section 4): queries, bodies of
 * both APIs, the dataset file and imported rows. RFC 3339 with an offset or Z, a real instant (no
 * leap second, no 30 February, no hour 24), and between the first and the last instant the API can
 * store and render as YYYY-MM-DDTHH:mm:ss.sssZ: PostgreSQL has no year 0, and year 10000 does not
 * fit four digits. Both validators (Ajv for the HTTP schemas, TypeBox for the dataset file and
 * imported rows) check format `date-time` with this function, so no other check is needed after it.
 */
export const FIRST_INSTANT_TEXT = '0001-01-01T00:00:00.000Z';
export const LAST_INSTANT_TEXT = '9999-12-31T23:59:59.999Z';
export const FIRST_INSTANT = Date.parse(FIRST_INSTANT_TEXT);
export const LAST_INSTANT = Date.parse(LAST_INSTANT_TEXT);

/** What a refused date-time is told, after the field's name. */
export const DATE_TIME_RULE = `must be an RFC 3339 date-time with an offset or Z, like 2026-11-20T08:15:00Z, from ${FIRST_INSTANT_TEXT} to ${LAST_INSTANT_TEXT}`;

// T or t between date and time; a space too (RFC 3339 allows it for readability, and the API always has).
const SHAPE = /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(?:\.(\d+))?(?:[Zz]|([+-])(\d{2}):(\d{2}))$/;

const CANONICAL = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

/** The two digits at `i` (the form is checked to be digits there). */
const two = (s: string, i: number) => (s.charCodeAt(i) - 48) * 10 + (s.charCodeAt(i + 1) - 48);

const isLeapYear = (y: number) => y % 4 === 0 && (y % 100 !== 0 || y % 400 === 0);
const DAYS = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

/**
 * The instant (milliseconds since 1970, fractions past the millisecond dropped, as they are when
 * stored) of a date-time that keeps the rule, or null. Computed from its parts: Date.parse takes
 * 30 February and hour 24 for the next day.
 */
export function instantOf(text: string): number | null {
  // The stored form itself (what exports and this API write, and most imported rows): its fields
  // read from their fixed places, and Date.parse for the instant (fixed-form ISO text is exact
  // there), without the general path's regular expression groups and arithmetic.
  if (text.length === 24 && CANONICAL.test(text)) {
    const year = two(text, 0) * 100 + two(text, 2);
    const month = two(text, 5);
    const day = two(text, 8);
    if (month < 1 || month > 12 || day < 1 || day > (month === 2 && isLeapYear(year) ? 29 : DAYS[month - 1])) return null;
    if (two(text, 11) > 23 || two(text, 14) > 59 || two(text, 17) > 59) return null;
    const t = Date.parse(text); // exact for this form, years 0001-0099 included
    return t >= FIRST_INSTANT && t <= LAST_INSTANT ? t : null;
  }
  const m = SHAPE.exec(text);
  if (!m) return null;
  const [year, month, day, hour, minute, second] = m.slice(1, 7).map(Number);
  if (month < 1 || month > 12 || day < 1) return null;
  if (day > (month === 2 && isLeapYear(year) ? 29 : DAYS[month - 1])) return null;
  if (hour > 23 || minute > 59 || second > 59) return null;
  let offsetMinutes = 0;
  if (m[8]) {
    const oh = Number(m[9]);
    const om = Number(m[10]);
    if (oh > 23 || om > 59) return null;
    offsetMinutes = (m[8] === '-' ? -1 : 1) * (oh * 60 + om);
  }
  const millis = Number((m[7] ?? '').slice(0, 3).padEnd(3, '0'));
  const d = new Date(0);
  d.setUTCFullYear(year, month - 1, day); // Date.UTC would read years 0-99 as 1900-1999
  d.setUTCHours(hour, minute, second, millis);
  const t = d.getTime() - offsetMinutes * 60_000;
  return t >= FIRST_INSTANT && t <= LAST_INSTANT ? t : null;
}

export const isApiDateTime = (value: string): boolean => instantOf(value) !== null;

/** The stored form, YYYY-MM-DDTHH:mm:ss.sssZ, of a date-time that keeps the rule (validated before). */
export function canonicalDateTime(text: string): string {
  const t = instantOf(text);
  if (t === null) throw new RangeError('not a date-time of the API'); // a caller skipped validation
  return new Date(t).toISOString();
}

// TypeBox's registry is global and read when a schema is checked or compiled; this module is
// imported by common.ts and domain/time.ts, which every schema-building module loads first.
Format.Set('date-time', isApiDateTime);
