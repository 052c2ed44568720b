import type { Queryable } from '../database.js';
import type { DatabaseExecutor } from '../../db/executor.js';
import {
  readCheckinLanguage,
  readCheckinSettings,
  readCheckinZoneAndLanguage,
  writeCheckinLanguage,
  writeCheckinSettings,
  type CheckinSettingsRow,
} from '../../db/repositories/checkins.js';
import { matchLocale, type Locale } from '../../i18n/index.js';
import { invalid } from '../../contract/errors.js';
import { recordAudit, type Actor } from '../audit.js';
import { requireLiveOrg } from '../orgs.js';
import { isTimeZone } from './week.js';

export type CheckinSettings = CheckinSettingsRow;

export async function getCheckinSettings(db: Queryable, orgId: string): Promise<CheckinSettings> {
  return readCheckinSettings(db, orgId);
}

const int = (v: unknown, field: string, min: number, max: number): number => {
  if (typeof v !== 'number' || !Number.isInteger(v) || v < min || v > max) throw invalid(`'${field}' must be an integer from ${min} to ${max}.`);
  return v;
};

function words(v: unknown, field: string, maxItems: number, maxLength: number): string[] {
  if (!Array.isArray(v) || v.length > maxItems) throw invalid(`'${field}' must be a list of at most ${maxItems} entries.`);
  const out: string[] = [];
  for (const [i, w] of v.entries()) {
    if (typeof w !== 'string' || w.trim() === '' || w.includes('\0') || [...w.trim()].length > maxLength)
      throw invalid(`'${field}[${i}]' must be 1-${maxLength} characters.`);
    if (!out.some((o) => o.toLowerCase() === w.trim().toLowerCase())) out.push(w.trim());
  }
  return out;
}

/**
 * The organization's round (weekday 1 Monday .. 7 Sunday, hour 0-23, an IANA time zone, the
 * reminder's later weekday or null), its reasons and its words that make an answer FLAGGED. Fields
 * not given keep their value.
 */
export async function updateCheckinSettings(
  db: DatabaseExecutor,
  orgId: string,
  patch: Record<string, unknown>,
  actor: Actor,
  now: Date,
): Promise<CheckinSettings> {
  const known = ['weekday', 'hour', 'timeZone', 'reminderWeekday', 'reasons', 'flagWords'];
  const unknown = Object.keys(patch).find((k) => !known.includes(k));
  if (unknown) throw invalid(`Unknown field '${unknown}'.`);
  await requireLiveOrg(db, orgId);
  return db.transaction(async (tx) => {
    const s = { ...(await readCheckinSettings(tx, orgId)) };
    if (patch.weekday !== undefined) s.weekday = int(patch.weekday, 'weekday', 1, 7);
    if (patch.hour !== undefined) s.hour = int(patch.hour, 'hour', 0, 23);
    if (patch.timeZone !== undefined) {
      if (typeof patch.timeZone !== 'string' || patch.timeZone.length > 64 || !isTimeZone(patch.timeZone))
        throw invalid("'timeZone' must be an IANA time zone such as Europe/Paris.");
      s.timeZone = patch.timeZone;
    }
    if (patch.reminderWeekday !== undefined) s.reminderWeekday = patch.reminderWeekday === null ? null : int(patch.reminderWeekday, 'reminderWeekday', 1, 7);
    if (s.reminderWeekday !== null && s.reminderWeekday <= s.weekday) throw invalid("'reminderWeekday' must come after 'weekday' in the week, or be null.");
    if (patch.reasons !== undefined) s.reasons = words(patch.reasons, 'reasons', 20, 60);
    if (patch.flagWords !== undefined) s.flagWords = words(patch.flagWords, 'flagWords', 500, 60);
    await writeCheckinSettings(tx, orgId, s, now);
    // The words themselves stay out of the log: how many there are is enough.
    await recordAudit(
      tx,
      orgId,
      actor,
      {
        action: 'checkin_settings.updated',
        target: { kind: 'checkin_settings', id: null },
        details: {
          weekday: s.weekday,
          hour: s.hour,
          timeZone: s.timeZone,
          reminderWeekday: s.reminderWeekday,
          reasons: s.reasons.length,
          flagWords: s.flagWords.length,
        },
      },
      now,
    );
    return s;
  });
}

const escapeRegExp = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** Whether the comment holds one of the words (whole words, any case, any script). */
export function holdsFlaggedWord(comment: string, flagWords: string[]): boolean {
  if (flagWords.length === 0 || comment === '') return false;
  const any = new RegExp(`(?<![\\p{L}\\p{N}])(?:${flagWords.map((w) => escapeRegExp(w.normalize('NFC'))).join('|')})(?![\\p{L}\\p{N}])`, 'iu');
  return any.test(comment.normalize('NFC'));
}

/** The language of the organization's round mails, for the people whose roster row names none (issue 57). */
export async function getDefaultLanguage(db: Queryable, orgId: string): Promise<Locale> {
  return matchLocale(await readCheckinLanguage(db, orgId)) ?? 'en';
}

/** The organization's time zone (its people's, UTC when unset) and default language, in one read. */
export async function getZoneAndLanguage(db: Queryable, orgId: string): Promise<{ timeZone: string; language: Locale }> {
  const r = await readCheckinZoneAndLanguage(db, orgId);
  return { timeZone: r.timeZone, language: matchLocale(r.language) ?? 'en' };
}

/** Sets the organization's default language (one of the catalogues' locales); audited as a change of the check-in settings. */
export async function setDefaultLanguage(db: DatabaseExecutor, orgId: string, language: unknown, actor: Actor, now: Date): Promise<Locale> {
  const locale = typeof language === 'string' ? matchLocale(language) : null;
  if (!locale || locale.toLowerCase() !== String(language).toLowerCase())
    throw invalid("'language' must be one of the languages offered, such as de or pt-BR.");
  await requireLiveOrg(db, orgId);
  await db.transaction(async (tx) => {
    await writeCheckinLanguage(tx, orgId, locale, now);
    await recordAudit(
      tx,
      orgId,
      actor,
      { action: 'checkin_settings.updated', target: { kind: 'checkin_settings', id: null }, details: { language: locale } },
      now,
    );
  });
  return locale;
}

/**
 * A respondent's language as the roster keeps it: empty for none (the organization's default
 * applies), else one of the offered locales, written as the catalogue writes it ("pt-br" → "pt-BR").
 */
export function rosterLanguage(v: unknown, field = 'language'): Locale | null {
  if (v === undefined || v === null || (typeof v === 'string' && v.trim() === '')) return null;
  const locale = typeof v === 'string' ? matchLocale(v.trim()) : null;
  if (!locale) throw invalid(`'${field}' must be one of the languages offered (such as de, fr or pt-BR), or empty.`);
  return locale;
}
