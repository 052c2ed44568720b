import { languageNames, PSEUDO_LOCALE } from '../../src/i18n/index.js';
import { createDemo } from '../../src/domain/demo.js';
import { createTestApp, type TestApp } from './app.js';
import { joinConsole, type ConsoleClient } from './console-client.js';
import type { MemberRole } from '../../src/domain/members.js';

/**
 * Issue 57's proof that no English is left in the console's templates: a page rendered in the
 * pseudo-locale (every catalogue message bracketed, its letters accented and lengthened) shows no
 * word written in plain ASCII letters but the organization's own data (team names, comments,
 * emails, reasons, the names of keys and actions), the names of languages in the menu, time zone
 * names, and what Intl writes for dates. A word of English left in a template shows up as such a
 * word, with the text around it.
 */

const DECODE: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', '#39': "'", '#96': '`', nbsp: ' ' };
const decode = (s: string) =>
  s.replace(/&(#x[0-9a-f]+|#\d+|[a-z]+\d*);/gi, (m, e: string) => {
    if (DECODE[e] !== undefined) return DECODE[e];
    if (e.startsWith('#x') || e.startsWith('#X')) return String.fromCodePoint(Number.parseInt(e.slice(2), 16));
    if (e.startsWith('#')) return String.fromCodePoint(Number(e.slice(1)));
    return m;
  });

/** Attributes whose values people read (or hear). */
const READ_ATTRIBUTES = [
  'aria-label',
  'title',
  'placeholder',
  'alt',
  'data-confirm',
  'aria-description',
  'data-copied',
  'data-selected',
  'data-failed',
  'data-unsupported',
  'data-label',
];

/** The texts of a page a reader sees or hears: text nodes (code and scripts aside) and read attributes. */
export function readTexts(body: string): string[] {
  const attrs: string[] = [];
  for (const name of READ_ATTRIBUTES) {
    for (const m of body.matchAll(new RegExp(`\\s${name}="([^"]*)"`, 'g'))) attrs.push(decode(m[1]));
  }
  const text = body
    .replace(/<!--[\s\S]*?-->/g, ' ')
    .replace(/<(script|style|code|pre|kbd|samp)\b[^>]*>[\s\S]*?<\/\1>/gi, ' ')
    .replace(/<[^>]*>/g, '\n');
  return [...text.split('\n').map((s) => decode(s).trim()), ...attrs].filter((s) => s.length > 0);
}

const MONTHS_AND_DAYS = new Set(
  [
    ...Array.from({ length: 12 }, (_, m) => [
      new Date(Date.UTC(2026, m, 1)).toLocaleString('en', { month: 'short', timeZone: 'UTC' }),
      new Date(Date.UTC(2026, m, 1)).toLocaleString('en', { month: 'long', timeZone: 'UTC' }),
    ]).flat(),
    ...Array.from({ length: 7 }, (_, d) => [
      new Date(Date.UTC(2026, 10, 2 + d)).toLocaleString('en', { weekday: 'short', timeZone: 'UTC' }),
      new Date(Date.UTC(2026, 10, 2 + d)).toLocaleString('en', { weekday: 'long', timeZone: 'UTC' }),
    ]).flat(),
    'AM',
    'PM',
    'UTC',
    'GMT',
  ].map((w) => w.replace(/\.$/, '')),
);

/** Words every page may show as they are: dates' words, zone names and abbreviations, the language menu's names. */
export function baseAllowedWords(): Set<string> {
  const words = new Set<string>(MONTHS_AND_DAYS);
  for (const zone of Intl.supportedValuesOf('timeZone')) for (const w of zone.split(/[^A-Za-z]+/)) if (w) words.add(w);
  for (const { name } of languageNames()) for (const w of name.split(/[^\p{L}]+/u)) if (w) words.add(w);
  // Zone abbreviations Intl writes after a time (CET, EST, GMT+1).
  for (const w of ['CET', 'CEST', 'EST', 'EDT', 'PST', 'PDT', 'BST', 'IST', 'JST', 'MSK', 'AEST', 'AEDT']) words.add(w);
  return words;
}

/** Adds the words of `texts` (the organization's own data) to `words`. */
export function allowWordsOf(words: Set<string>, texts: Iterable<string | null | undefined>) {
  for (const t of texts) if (t) for (const w of t.split(/[^\p{L}]+/u)) if (w) words.add(w);
}

/**
 * The plain-English words of a page rendered in the pseudo-locale, each with its text: none when
 * every word came from the catalogue (or is allowed data). Words of two or more ASCII letters only:
 * the pseudo-locale accents every vowel, so no message of the catalogue produces one.
 */
export function englishLeft(body: string, allowed: Set<string>): string[] {
  const found: string[] = [];
  for (const text of readTexts(body)) {
    const words = text.match(/\p{L}+/gu) ?? [];
    const plain = words.filter((w) => w.length >= 2 && /^[A-Za-z]+$/.test(w) && !allowed.has(w));
    if (plain.length > 0) found.push(`${plain.join(' ')}  ←  ${text.slice(0, 160)}`);
  }
  return [...new Set(found)];
}

export interface PseudoConsole {
  t: TestApp;
  orgId: string;
  /** A signed-in member of the demo organization whose browser asks for the pseudo-locale. */
  member(role: MemberRole, email?: string): Promise<ConsoleClient>;
  /** The organization's data words, plus baseAllowedWords. */
  allowed: Set<string>;
}

/**
 * The demo organization of `npm start` (a roster, last week's round, a year of pulses, alerts,
 * actions and comments) on a test app, with members whose browsers send Accept-Language: en-XA.
 */
export async function pseudoConsole(now = new Date('2026-11-20T12:00:00.000Z')): Promise<PseudoConsole> {
  const t = await createTestApp({ now });
  const demo = await createDemo(t.db, now);
  const allowed = baseAllowedWords();
  let named = 0;
  const q = async (text: string) => {
    const rows = await t.db.query<Record<string, unknown>>({ name: `test.pseudo.${++named}`, text }, [demo.orgId]);
    return rows.flatMap((r) => Object.values(r).flatMap((v) => (Array.isArray(v) ? v.map(String) : v == null ? [] : [String(v)])));
  };
  allowWordsOf(allowed, await q('SELECT name FROM organizations WHERE id = $1'));
  allowWordsOf(allowed, await q('SELECT name FROM teams WHERE org_id = $1'));
  allowWordsOf(allowed, await q('SELECT comment FROM pulses WHERE org_id = $1 AND comment IS NOT NULL'));
  allowWordsOf(allowed, await q('SELECT title, description FROM actions WHERE org_id = $1'));
  allowWordsOf(allowed, await q('SELECT email FROM respondents WHERE org_id = $1'));
  allowWordsOf(allowed, await q('SELECT reasons FROM checkin_settings WHERE org_id = $1'));
  allowWordsOf(allowed, await q('SELECT name FROM api_keys WHERE org_id = $1'));
  let n = 0;
  return {
    t,
    orgId: demo.orgId,
    allowed,
    async member(role, email = `pseudo${++n}@members.example.com`) {
      allowWordsOf(allowed, [email]);
      const c = await joinConsole(t, demo.orgId, email, role, now);
      c.headers['accept-language'] = PSEUDO_LOCALE;
      return c;
    },
  };
}
