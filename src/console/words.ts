import type { AuditAction } from '../contract/schemas/admin-audit.js';
import { escapeHtml, Safe } from '../http/html.js';
import {
  acceptLanguageTags,
  dirOf,
  formatParts,
  matchLocale,
  PSEUDO_LOCALE,
  SOURCE_LOCALE,
  translator,
  type Locale,
  type MessageKey,
  type Translate,
} from '../i18n/index.js';

/**
 * Words for people (CONTRACT.md section 11, amended): dates and times in the reader's locale and
 * time zone, numbers and plurals that read right, audit events named in words; and every word of a page from
 * the reader's catalogue (src/i18n/locales, section 12's *In the respondent's language*, amended).
 */

/** The locale when the request names none this runtime knows: day before month, month in letters. */
export const DEFAULT_LOCALE = 'en-GB';

/**
 * The first language of an `Accept-Language` header (by its q weights) that Intl supports, else
 * DEFAULT_LOCALE. A malformed tag is skipped, never an error: the header is the browser's, not the
 * member's choice.
 */
export function localeOf(header: string | undefined): string {
  if (!header) return DEFAULT_LOCALE;
  const tags = header
    .split(',')
    .slice(0, 20)
    .map((part, i) => {
      const [tag, ...params] = part.trim().split(';');
      const q = params.map((p) => /^\s*q=([01](?:\.\d{0,3})?)\s*$/.exec(p)).find(Boolean);
      return { tag: tag.trim(), q: q ? Number(q[1]) : 1, i };
    })
    .filter((t) => t.q > 0 && /^[A-Za-z]{1,8}(-[A-Za-z0-9]{1,8})*$/.test(t.tag))
    .sort((a, b) => b.q - a.q || a.i - b.i);
  for (const { tag } of tags) {
    try {
      const [supported] = Intl.DateTimeFormat.supportedLocalesOf([tag]);
      if (supported) return supported;
    } catch {
      // not a tag Intl takes: the next one
    }
  }
  return DEFAULT_LOCALE;
}

/** How a page speaks to its reader: their locale, and the organization's time zone (or UTC). */
export interface Speaker {
  /** The locale of dates and numbers (what Intl supports of the reader's language). */
  locale: string;
  /** The catalogue the page's words come from (src/i18n/locales), and its writing direction. */
  lang: Locale;
  dir: 'ltr' | 'rtl';
  /** One message of the catalogue, as text (the page's template escapes it). */
  t: Translate;
  /**
   * One message with markup: its tags (`<a>…</a>` in the catalogue) made by `tags`, every other
   * part escaped. Values may be Safe (already markup) or text (escaped).
   */
  rich(key: MessageKey, values?: Record<string, string | number | Date | Safe>, tags?: Record<string, (chunks: Safe) => Safe>): Safe;
  timeZone: string;
  /** An instant: "19 Nov 2026, 09:30 CET" (to the second when asked); `none` when there is none. */
  when(iso: string | null | undefined, none?: string, precision?: 'minute' | 'second'): string;
  /** A calendar day (YYYY-MM-DD, a UTC day as the figures count them): "19 Nov 2026". */
  day(date: string): string;
  /** The same without the year: "19 Nov" (a chart's axis, a heatmap's column). */
  shortDay(date: string): string;
  /** A figure with `digits` decimals, in the locale's digits and separator. */
  number(n: number, digits?: number): string;
  /** A share (0-1) as a whole percentage: "62%". */
  percent(share: number): string;
}

const cache = new Map<string, Intl.DateTimeFormat | Intl.NumberFormat | Intl.PluralRules>();
function memo<T extends Intl.DateTimeFormat | Intl.NumberFormat | Intl.PluralRules>(key: string, make: () => T): T {
  let f = cache.get(key) as T | undefined;
  if (!f) {
    f = make();
    if (cache.size > 500) cache.clear();
    cache.set(key, f);
  }
  return f;
}

/** Days and figures already worded, by locale: the map starts over when full. */
const words = new Map<string, string>();
function said(id: string, say: () => string): string {
  let w = words.get(id);
  if (w === undefined) {
    w = say();
    if (words.size >= 20_000) words.clear();
    words.set(id, w);
  }
  return w;
}

/**
 * Whether Intl knows the zone (a settings row holds an IANA name; anything else reads as UTC). The
 * answer is kept: trying a zone makes a formatter, and every console page asks for its own.
 */
const zones = new Map<string, string>();
function zoneOrUtc(tz: string | undefined): string {
  if (!tz) return 'UTC';
  let known = zones.get(tz);
  if (known === undefined) {
    try {
      new Intl.DateTimeFormat('en', { timeZone: tz });
      known = tz;
    } catch {
      known = 'UTC';
    }
    if (zones.size > 500) zones.clear();
    zones.set(tz, known);
  }
  return known;
}

/**
 * The language of a member's pages: the one they chose (members.language), else the first of their
 * browser's Accept-Language the catalogues have, else English.
 */
export function languageOf(acceptLanguage: string | undefined, chosen?: string | null): Locale {
  const picked = chosen ? matchLocale(chosen) : null;
  if (picked) return picked;
  for (const tag of acceptLanguageTags(acceptLanguage)) {
    const m = matchLocale(tag);
    if (m) return m;
  }
  return SOURCE_LOCALE;
}

export function speakerFor(acceptLanguage: string | undefined, timeZone?: string, chosen?: string | null): Speaker {
  const lang = languageOf(acceptLanguage, chosen);
  // Dates and numbers: in the chosen language when there is one (the pseudo-locale's in English), else the browser's.
  const locale = chosen && lang !== PSEUDO_LOCALE ? localeOf(lang) : localeOf(acceptLanguage);
  const t = translator(lang);
  const tz = zoneOrUtc(timeZone);
  const instant = (precision: 'minute' | 'second') =>
    memo(
      `i|${locale}|${tz}|${precision}`,
      () =>
        new Intl.DateTimeFormat(locale, {
          timeZone: tz,
          day: 'numeric',
          month: 'short',
          year: 'numeric',
          hour: '2-digit',
          minute: '2-digit',
          ...(precision === 'second' ? { second: '2-digit' } : {}),
          timeZoneName: 'short',
        }),
    );
  const days = (year: boolean) =>
    memo(
      `d|${locale}|${year}`,
      () => new Intl.DateTimeFormat(locale, { timeZone: 'UTC', day: 'numeric', month: 'short', ...(year ? { year: 'numeric' } : {}) }),
    );
  const num = (digits: number) =>
    memo(`n|${locale}|${digits}`, () => new Intl.NumberFormat(locale, { minimumFractionDigits: digits, maximumFractionDigits: digits }));
  const pct = memo(`%|${locale}`, () => new Intl.NumberFormat(locale, { style: 'percent', maximumFractionDigits: 0 }));
  const utcDay = (date: string) => new Date(`${date}T00:00:00.000Z`);
  // A calendar day and a figure read the same on every page in one locale: worded once (a year's
  // daily table and heatmap ask for hundreds of them a view).
  const dayWords = (year: boolean) => (date: string) => said(`${year ? 'd' : 's'}|${locale}|${date}`, () => days(year).format(utcDay(date)));
  return {
    locale,
    lang,
    dir: dirOf(lang),
    t,
    rich: (key, values, tags) => {
      const out: Record<string, unknown> = {};
      for (const [k, v] of Object.entries(values ?? {})) out[k] = v;
      for (const [k, make] of Object.entries(tags ?? {})) out[k] = (chunks: unknown[]) => make(richJoin(chunks));
      return richJoin(formatParts(lang, key, out));
    },
    timeZone: tz,
    when: (iso, none = 'never', precision = 'minute') => (iso ? instant(precision).format(new Date(iso)) : none),
    day: dayWords(true),
    shortDay: dayWords(false),
    number: (n, digits = 0) => said(`n|${locale}|${digits}|${n}`, () => num(digits).format(n)),
    percent: (share) => pct.format(share),
  };
}

/** Parts of a formatted message as markup: Safe parts kept, text escaped. */
function richJoin(parts: unknown): Safe {
  const list = Array.isArray(parts) ? parts : [parts];
  return new Safe(list.map((p) => (p instanceof Safe ? p.toString() : escapeHtml(String(p)))).join(''));
}

/** The speaker of pages that have no request at hand (tests, the CLI): DEFAULT_LOCALE, UTC. */
export const PLAIN = speakerFor(undefined, 'UTC');

/** The areas of the audit log, in the order its filter lists them (their names: `console.audit.area.<area>`). */
export const AUDIT_AREAS = ['organization', 'members', 'keys', 'teams', 'alerts', 'comments', 'checkins', 'webhooks', 'audit'] as const;
export type AuditArea = (typeof AUDIT_AREAS)[number];

/** The catalogue's name of each area of the audit log. */
export const AUDIT_AREA_KEYS: Record<AuditArea, MessageKey> = {
  organization: 'console.audit.area.organization',
  members: 'console.audit.area.members',
  keys: 'console.audit.area.keys',
  teams: 'console.audit.area.teams',
  alerts: 'console.audit.area.alerts',
  comments: 'console.audit.area.comments',
  checkins: 'console.audit.area.checkins',
  webhooks: 'console.audit.area.webhooks',
  audit: 'console.audit.area.audit',
};

/**
 * Every audit code's area and its words in the catalogue (`console.audit.event.<code, dots as
 * underscores>`). A `Record` over AuditAction, so a code added to the contract without words here
 * fails the type check (and test/console/words.test.ts); a key missing from the catalogue too.
 */
const AUDIT_EVENTS: Record<AuditAction, { area: AuditArea; key: MessageKey }> = {
  'organization.created': { area: 'organization', key: 'console.audit.event.organization_created' },
  'organization.updated': { area: 'organization', key: 'console.audit.event.organization_updated' },
  'organization.deleted': { area: 'organization', key: 'console.audit.event.organization_deleted' },
  'organization.two_factor_required': { area: 'organization', key: 'console.audit.event.organization_two_factor_required' },
  'retention.updated': { area: 'organization', key: 'console.audit.event.retention_updated' },
  'member.invited': { area: 'members', key: 'console.audit.event.member_invited' },
  'member.invitation_revoked': { area: 'members', key: 'console.audit.event.member_invitation_revoked' },
  'member.joined': { area: 'members', key: 'console.audit.event.member_joined' },
  'member.role_changed': { area: 'members', key: 'console.audit.event.member_role_changed' },
  'member.removed': { area: 'members', key: 'console.audit.event.member_removed' },
  'member.signed_in': { area: 'members', key: 'console.audit.event.member_signed_in' },
  'member.sign_in_failed': { area: 'members', key: 'console.audit.event.member_sign_in_failed' },
  'member.two_factor_enabled': { area: 'members', key: 'console.audit.event.member_two_factor_enabled' },
  'member.password_changed': { area: 'members', key: 'console.audit.event.member_password_changed' },
  'member.sessions_ended': { area: 'members', key: 'console.audit.event.member_sessions_ended' },
  'key.created': { area: 'keys', key: 'console.audit.event.key_created' },
  'key.rolled': { area: 'keys', key: 'console.audit.event.key_rolled' },
  'key.revoked': { area: 'keys', key: 'console.audit.event.key_revoked' },
  'team.created': { area: 'teams', key: 'console.audit.event.team_created' },
  'pulses.ingested': { area: 'teams', key: 'console.audit.event.pulses_ingested' },
  'pulses.imported': { area: 'teams', key: 'console.audit.event.pulses_imported' },
  'pulse.moderated': { area: 'teams', key: 'console.audit.event.pulse_moderated' },
  'alert.read': { area: 'alerts', key: 'console.audit.event.alert_read' },
  'alert.unread': { area: 'alerts', key: 'console.audit.event.alert_unread' },
  'action.created': { area: 'alerts', key: 'console.audit.event.action_created' },
  'action.updated': { area: 'alerts', key: 'console.audit.event.action_updated' },
  'comment.hidden': { area: 'comments', key: 'console.audit.event.comment_hidden' },
  'comment.shown': { area: 'comments', key: 'console.audit.event.comment_shown' },
  'respondent.added': { area: 'checkins', key: 'console.audit.event.respondent_added' },
  'respondent.removed': { area: 'checkins', key: 'console.audit.event.respondent_removed' },
  'respondent.moved': { area: 'checkins', key: 'console.audit.event.respondent_moved' },
  'roster.replaced': { area: 'checkins', key: 'console.audit.event.roster_replaced' },
  'checkin_settings.updated': { area: 'checkins', key: 'console.audit.event.checkin_settings_updated' },
  'checkin_links.exported': { area: 'checkins', key: 'console.audit.event.checkin_links_exported' },
  'checkin_link.resent': { area: 'checkins', key: 'console.audit.event.checkin_link_resent' },
  'checkin_round.started': { area: 'checkins', key: 'console.audit.event.checkin_round_started' },
  'checkin_mail.tested': { area: 'checkins', key: 'console.audit.event.checkin_mail_tested' },
  'webhook_endpoint.created': { area: 'webhooks', key: 'console.audit.event.webhook_endpoint_created' },
  'webhook_endpoint.removed': { area: 'webhooks', key: 'console.audit.event.webhook_endpoint_removed' },
  'webhook_endpoint.enabled': { area: 'webhooks', key: 'console.audit.event.webhook_endpoint_enabled' },
  'webhook_endpoint.disabled': { area: 'webhooks', key: 'console.audit.event.webhook_endpoint_disabled' },
  'webhook_endpoint.tested': { area: 'webhooks', key: 'console.audit.event.webhook_endpoint_tested' },
  'webhook_endpoint.secret_rotated': { area: 'webhooks', key: 'console.audit.event.webhook_endpoint_secret_rotated' },
  'webhook_delivery.replayed': { area: 'webhooks', key: 'console.audit.event.webhook_delivery_replayed' },
  'webhook_deliveries.resent': { area: 'webhooks', key: 'console.audit.event.webhook_deliveries_resent' },
  'audit_log.exported': { area: 'audit', key: 'console.audit.event.audit_log_exported' },
  'member.passkey_added': { area: 'members', key: 'console.audit.event.member_passkey_added' },
  'member.passkey_renamed': { area: 'members', key: 'console.audit.event.member_passkey_renamed' },
  'member.passkey_removed': { area: 'members', key: 'console.audit.event.member_passkey_removed' },
  'member.passkey_refused': { area: 'members', key: 'console.audit.event.member_passkey_refused' },
  'organization.passkeys_required': { area: 'organization', key: 'console.audit.event.organization_passkeys_required' },
  'sso.configured': { area: 'members', key: 'console.audit.event.sso_configured' },
  'sso.removed': { area: 'members', key: 'console.audit.event.sso_removed' },
  'sso.required': { area: 'members', key: 'console.audit.event.sso_required' },
  'sso_domain.added': { area: 'members', key: 'console.audit.event.sso_domain_added' },
  'sso_domain.verified': { area: 'members', key: 'console.audit.event.sso_domain_verified' },
  'sso_domain.removed': { area: 'members', key: 'console.audit.event.sso_domain_removed' },
  'scim_token.created': { area: 'checkins', key: 'console.audit.event.scim_token_created' },
  'scim_token.rolled': { area: 'checkins', key: 'console.audit.event.scim_token_rolled' },
  'scim_token.revoked': { area: 'checkins', key: 'console.audit.event.scim_token_revoked' },
  'scim_settings.updated': { area: 'checkins', key: 'console.audit.event.scim_settings_updated' },
  'respondent.readdressed': { area: 'checkins', key: 'console.audit.event.respondent_readdressed' },
  'team.renamed': { area: 'teams', key: 'console.audit.event.team_renamed' },
  'team.removed': { area: 'teams', key: 'console.audit.event.team_removed' },
  'scim_user.inactive': { area: 'checkins', key: 'console.audit.event.scim_user_inactive' },
  'scim_user.deleted': { area: 'checkins', key: 'console.audit.event.scim_user_deleted' },
  'respondent.language_changed': { area: 'checkins', key: 'console.audit.event.respondent_language_changed' },
};

const english = translator(SOURCE_LOCALE);

/** The same, with each code's English words (the catalogue's source), for callers without a reader. */
export const AUDIT_WORDS = Object.fromEntries(Object.entries(AUDIT_EVENTS).map(([code, e]) => [code, { ...e, words: english(e.key) }])) as Record<
  AuditAction,
  { area: AuditArea; key: MessageKey; words: string }
>;

/** An audit code in the words of `t` (English without one); a code this release does not know (an older row) as it is. */
export const auditWords = (code: string, t: Translate = english): string => {
  const e = (AUDIT_EVENTS as Record<string, { key: MessageKey } | undefined>)[code];
  return e ? t(e.key) : code;
};
