/**
 * Every word the service shows people, one ICU MessageFormat catalogue per locale (CONTRACT
 * section 12, *In the respondent's language*). English is the source: `locales/en.json` holds
 * every key, and test/i18n/catalogues.test.ts fails when another locale lacks a key or uses a
 * placeholder the English message does not have. Plurals, selects, numbers and dates go through
 * `Intl` (intl-messageformat), never through string arithmetic.
 *
 * This module is imported by the server and bundled whole into the check-in page's one script, so
 * every catalogue ships with the page and choosing a language never makes a request.
 */
import { IntlMessageFormat } from 'intl-messageformat';
import ar from './locales/ar.json' with { type: 'json' };
import de from './locales/de.json' with { type: 'json' };
import en from './locales/en.json' with { type: 'json' };
import es from './locales/es.json' with { type: 'json' };
import fr from './locales/fr.json' with { type: 'json' };
import ja from './locales/ja.json' with { type: 'json' };
import pl from './locales/pl.json' with { type: 'json' };
import ptBR from './locales/pt-BR.json' with { type: 'json' };
import tr from './locales/tr.json' with { type: 'json' };
import zhCN from './locales/zh-CN.json' with { type: 'json' };

export type MessageKey = keyof typeof en;
export type Catalogue = Record<MessageKey, string>;

/** The source language. */
export const SOURCE_LOCALE = 'en';
/**
 * The pseudo-locale: every English message bracketed and about 40% longer, its letters accented,
 * for layout tests (nothing cut, nothing overlapping). It is offered in the menus like the others.
 */
export const PSEUDO_LOCALE = 'en-XA';

/** The written catalogues, in the order the language menus list them. */
export const CATALOGUES: Readonly<Record<string, Readonly<Record<string, string>>>> = {
  en,
  de,
  fr,
  es,
  'pt-BR': ptBR,
  pl,
  tr,
  ja,
  'zh-CN': zhCN,
  ar,
};

export const LOCALES = [...Object.keys(CATALOGUES), PSEUDO_LOCALE] as const;
export type Locale = string;

const RTL = new Set(['ar']);
/** The writing direction of a locale's pages. */
export const dirOf = (locale: Locale): 'rtl' | 'ltr' => (RTL.has(locale.split('-')[0]) ? 'rtl' : 'ltr');

const byLower = new Map(LOCALES.map((l) => [l.toLowerCase(), l]));

/**
 * The supported locale a language tag names: exactly (case-insensitive), else by its language
 * alone (`pt` → `pt-BR`, `de-AT` → `de`, `zh-Hans-CN` → `zh-CN`), else null.
 */
export function matchLocale(tag: string | null | undefined): Locale | null {
  if (typeof tag !== 'string' || tag.length === 0 || tag.length > 35) return null;
  const lower = tag.trim().toLowerCase().replace(/_/g, '-');
  const exact = byLower.get(lower);
  if (exact) return exact;
  const language = lower.split('-')[0];
  for (const l of LOCALES) if (l !== PSEUDO_LOCALE && l.toLowerCase().split('-')[0] === language) return l;
  return null;
}

/** The first supported locale of an ordered preference list (a browser's `navigator.languages`, or `Accept-Language` parsed), else the fallback. */
export function preferredLocale(tags: readonly string[], fallback: Locale = SOURCE_LOCALE): Locale {
  for (const t of tags) {
    const m = matchLocale(t);
    if (m) return m;
  }
  return fallback;
}

/** The tags of an `Accept-Language` header, best first (weights honoured, `*` and malformed parts ignored). */
export function acceptLanguageTags(header: string | undefined): string[] {
  if (!header) return [];
  return header
    .split(',')
    .slice(0, 20)
    .map((part, i) => {
      const [tag, ...params] = part.trim().split(';');
      const q = params.map((p) => /^\s*q=([01](?:\.\d{0,3})?)\s*$/.exec(p)?.[1]).find((v) => v !== undefined);
      return { tag: tag.trim(), q: q === undefined ? 1 : Number(q), i };
    })
    .filter((t) => t.tag !== '' && t.tag !== '*' && t.q > 0 && /^[A-Za-z]{1,8}(-[A-Za-z0-9]{1,8})*$/.test(t.tag))
    .sort((a, b) => b.q - a.q || a.i - b.i)
    .map((t) => t.tag);
}

// ---- the pseudo-locale -------------------------------------------------------------------------

const ACCENTS: Record<string, string> = {
  a: 'á',
  e: 'é',
  i: 'í',
  o: 'ó',
  u: 'ú',
  y: 'ý',
  c: 'ç',
  n: 'ñ',
  s: 'š',
  z: 'ž',
  A: 'Á',
  E: 'É',
  I: 'Í',
  O: 'Ó',
  U: 'Ú',
  Y: 'Ý',
  C: 'Ç',
  N: 'Ñ',
  S: 'Š',
  Z: 'Ž',
};
/** A word made about 40% longer by repeating its vowels, so that lines still break between words. */
function lengthen(word: string): string {
  const extra = Math.ceil(word.length * 0.6);
  if (extra === 0) return word;
  let out = '';
  let left = extra;
  const vowels = [...word].filter((ch) => /[aeiouyAEIOUY]/.test(ch)).length || 1;
  for (const ch of word) {
    out += ACCENTS[ch] ?? ch;
    if (left > 0 && (/[aeiouyAEIOUY]/.test(ch) || !/[aeiouyAEIOUY]/.test(word))) {
      const n = Math.ceil(extra / vowels);
      const add = Math.min(n, left);
      out += (ACCENTS[ch] ?? ch).repeat(add);
      left -= add;
    }
  }
  return out;
}
const pseudoText = (s: string) => s.replace(/\p{L}+/gu, lengthen);

// The parsed message's elements (intl-messageformat's AST): literals are type 0; plurals (6) and
// selects (5) hold sub-messages; a tag (8) holds children. Everything else is a placeholder, kept.
type El = { type: number; value?: string; options?: Record<string, { value: El[] }>; children?: El[] };
function pseudoAst(els: El[]): El[] {
  return els.map((el) => {
    if (el.type === 0 && typeof el.value === 'string') return { ...el, value: pseudoText(el.value) };
    if (el.options) {
      const options: Record<string, { value: El[] }> = {};
      for (const [k, o] of Object.entries(el.options)) options[k] = { ...o, value: pseudoAst(o.value) };
      return { ...el, options };
    }
    if (el.children) return { ...el, children: pseudoAst(el.children) };
    return el;
  });
}

// ---- formatting --------------------------------------------------------------------------------

type Values = Record<string, string | number | Date>;
const formats = new Map<string, IntlMessageFormat>();

/** The formatter of one message in one locale, made once. An unknown locale falls back to English. */
function formatter(locale: Locale, key: MessageKey): IntlMessageFormat {
  const id = `${locale}\u0000${key}`;
  let f = formats.get(id);
  if (f) return f;
  if (locale === PSEUDO_LOCALE) {
    const source = new IntlMessageFormat(en[key], SOURCE_LOCALE);
    const ast = [{ type: 0, value: '[' }, ...pseudoAst(source.getAst() as unknown as El[]), { type: 0, value: ']' }];
    f = new IntlMessageFormat(ast as unknown as ReturnType<IntlMessageFormat['getAst']>, SOURCE_LOCALE);
  } else {
    const catalogue = CATALOGUES[locale] ?? en;
    f = new IntlMessageFormat(catalogue[key] ?? en[key], CATALOGUES[locale] ? locale : SOURCE_LOCALE);
  }
  formats.set(id, f);
  return f;
}

/**
 * Messages already formatted, by locale, key and values: a page of 50 teams over a year asks for
 * the same few hundred sentences and figures on every view, and formatting one costs about 100
 * times the lookup. A message is a pure function of these three; the map starts over when full.
 */
const formatted = new Map<string, string>();
const FORMATTED_MAX = 20_000;

/** One message, formatted. */
export function format(locale: Locale, key: MessageKey, values?: Values): string {
  if (values === undefined) return String(formatter(locale, key).format());
  const id = `${locale}\u0000${key}\u0000${JSON.stringify(values)}`;
  let text = formatted.get(id);
  if (text === undefined) {
    text = String(formatter(locale, key).format(values));
    if (formatted.size >= FORMATTED_MAX) formatted.clear();
    formatted.set(id, text);
  }
  return text;
}

/**
 * One message with rich values (tag functions, objects kept as they are): the list of its parts,
 * or its text. The console's pages join them as markup (src/console/words.ts, `rich`).
 */
export function formatParts(locale: Locale, key: MessageKey, values?: Record<string, unknown>): unknown {
  return formatter(locale, key).format(values as Values);
}

/** A function that formats the messages of one locale: `t('checkin.title')`. */
export function translator(locale: Locale) {
  return (key: MessageKey, values?: Values) => format(locale, key, values);
}
export type Translate = ReturnType<typeof translator>;

/** The name of each offered language, written in that language (its catalogue's `meta.name`). */
export function languageNames(): { locale: Locale; name: string }[] {
  return LOCALES.map((locale) => ({ locale, name: format(locale, 'meta.name') }));
}
