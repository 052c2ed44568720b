import { readdirSync, readFileSync } from 'node:fs';
import { IntlMessageFormat } from 'intl-messageformat';
import { describe, expect, it } from 'vitest';
import { aboutPage, checkinPage } from '../../src/checkin/page.js';
import { acceptLanguageTags, CATALOGUES, dirOf, format, LOCALES, matchLocale, type MessageKey, PSEUDO_LOCALE, preferredLocale } from '../../src/i18n/index.js';

/**
 * The catalogues (issue 57, item 1): every locale has every English message and no other, with the
 * same placeholders, plural forms its language needs, and formats them; the pseudo-locale brackets
 * and lengthens each; and the check-in pages hold no word that is not from the catalogue.
 */
const DIR = new URL('../../src/i18n/locales/', import.meta.url);
const en = CATALOGUES.en;
const keys = Object.keys(en) as MessageKey[];

type El = { type: number; value?: string; options?: Record<string, { value: El[] }>; children?: El[] };
/** The placeholders of a message (names and their kinds), and its plurals' categories. */
function shape(message: string, locale: string) {
  const names = new Set<string>();
  const plurals: { name: string; categories: string[] }[] = [];
  const walk = (els: El[]) => {
    for (const el of els) {
      if (el.type !== 0 && el.type !== 7 && typeof el.value === 'string') names.add(`${el.value}:${el.type}`);
      if (el.type === 6) plurals.push({ name: el.value!, categories: Object.keys(el.options!) });
      for (const o of Object.values(el.options ?? {})) walk(o.value);
      if (el.children) walk(el.children);
    }
  };
  walk(new IntlMessageFormat(message, locale).getAst() as unknown as El[]);
  return { names: [...names].sort(), plurals };
}

const ASSETS = { css: '/checkin/assets/checkin.css', script: '/checkin/assets/checkin.js' };
const SAMPLE = {
  people: 7,
  joined: 2,
  max: 2000,
  when: Date.UTC(2026, 11, 1),
  name: 'Web',
  org: 'Acme',
  closes: 'Thursday 3 December 2026 at 01:00 (UTC)',
  subject: 'How was your week? (Acme)',
  day: 'Monday 23 November 2026',
};

/**
 * Values for every placeholder of a message: SAMPLE's when it has one, else by the placeholder's
 * kind (a word, a number, a date, a select's `other`, a tag that keeps its text).
 */
function sampleFor(key: MessageKey, base: Record<string, unknown> = SAMPLE): Record<string, never> {
  const values: Record<string, unknown> = {};
  const walk = (els: El[]) => {
    for (const el of els) {
      const name = el.value as string;
      if (el.type === 1) values[name] ??= base[name] ?? 'Acme';
      if (el.type === 2 || el.type === 6) values[name] ??= typeof base[name] === 'number' ? base[name] : 3;
      if (el.type === 3 || el.type === 4) values[name] ??= base[name] ?? Date.UTC(2026, 11, 1);
      if (el.type === 5) values[name] ??= base[name] ?? Object.keys(el.options ?? {}).find((k) => k !== 'other') ?? 'other';
      if (el.type === 8) values[name] ??= (chunks: string[]) => chunks.join('');
      for (const o of Object.values(el.options ?? {})) walk(o.value);
      if (el.children) walk(el.children);
    }
  };
  walk(new IntlMessageFormat(en[key], 'en').getAst() as unknown as El[]);
  return values as Record<string, never>;
}

describe('the catalogues', () => {
  it('are one file per locale, English the source, each named in its own language', () => {
    const files = readdirSync(DIR)
      .filter((f) => f.endsWith('.json'))
      .map((f) => f.replace(/\.json$/, ''))
      .sort();
    expect(files).toEqual(Object.keys(CATALOGUES).sort());
    expect(files).toEqual(['ar', 'de', 'en', 'es', 'fr', 'ja', 'pl', 'pt-BR', 'tr', 'zh-CN']);
    expect(LOCALES).toContain(PSEUDO_LOCALE);
    const names = LOCALES.map((l) => format(l, 'meta.name'));
    expect(new Set(names).size).toBe(LOCALES.length);
    for (const f of files) expect(JSON.parse(readFileSync(new URL(`${f}.json`, DIR), 'utf8'))).toEqual(CATALOGUES[f]);
  });

  for (const locale of Object.keys(CATALOGUES).filter((l) => l !== 'en')) {
    it(`${locale} has every English message, no other, with the English placeholders and its plural forms`, () => {
      const c = CATALOGUES[locale];
      expect(Object.keys(c).sort()).toEqual([...keys].sort());
      // The categories the counts we show can take (people, answers: whole numbers up to 10,000);
      // French, Spanish and Portuguese 'many' is for millions only.
      const rules = new Intl.PluralRules(locale);
      const needed = [...new Set(Array.from({ length: 10_001 }, (_, n) => rules.select(n)))];
      const allowed = rules.resolvedOptions().pluralCategories;
      for (const key of keys) {
        expect(c[key].trim(), `${locale} ${key}`).not.toBe('');
        const mine = shape(c[key], locale);
        expect(mine.names, `${locale} ${key}`).toEqual(shape(en[key], 'en').names);
        for (const p of mine.plurals) {
          expect(p.categories, `${locale} ${key} ${p.name}`).toContain('other');
          for (const c2 of p.categories.filter((k) => !k.startsWith('='))) expect(allowed, `${locale} ${key}: '${c2}'`).toContain(c2);
          // Every category the language needs is written, unless an exact =N covers the only number it takes.
          for (const n of needed) {
            if (!p.categories.includes(n) && !(n === 'zero' && p.categories.includes('=0')))
              expect.fail(`${locale} ${key}: the plural of ${p.name} lacks '${n}'`);
          }
        }
        if (locale !== 'en' && key !== 'checkin.team' && key !== 'meta.name' && en[key].split(/\s+/).length > 2) {
          // A translated message is not the English one left in place (a label of one or two words
          // may be the word the language borrowed: Webhooks, Check-ins, Console).
          expect(c[key], `${locale} ${key}`).not.toBe(en[key]);
        }
      }
    });
  }

  it('every message formats in every locale', () => {
    for (const locale of LOCALES) {
      for (const key of keys) {
        const out = format(locale, key, sampleFor(key));
        expect(out, `${locale} ${key}`).not.toMatch(/[{}]/);
        expect(out.length, `${locale} ${key}`).toBeGreaterThan(0);
      }
    }
  });

  it('the pseudo-locale brackets every message and makes it at least 40% longer', () => {
    for (const key of keys) {
      // Short values: the message's own words are what is lengthened, not a date or a name put in it.
      const short = { ...SAMPLE, org: 'A', closes: 'X', subject: 'S', day: 'D' };
      const plain = format('en', key, sampleFor(key, short));
      const pseudo = format(PSEUDO_LOCALE, key, sampleFor(key, short));
      expect(pseudo.startsWith('[') && pseudo.endsWith(']'), key).toBe(true);
      expect(pseudo.length / plain.length, key).toBeGreaterThanOrEqual(1.4);
    }
  });

  it('plurals read right', () => {
    expect(format('en', 'checkin.teamSize', { people: 1, joined: 0 })).toBe("Your team has 1 person on this week's check-in.");
    expect(format('en', 'checkin.teamSize', { people: 6, joined: 1 })).toBe(
      "Your team has 6 people on this week's check-in; one of them joined it in the last four weeks.",
    );
    expect(format('pl', 'checkin.teamSize', { people: 3, joined: 0 })).toBe('Twój zespół ma 3 osoby w tegotygodniowej ankiecie.');
    expect(format('pl', 'checkin.teamSize', { people: 5, joined: 0 })).toBe('Twój zespół ma 5 osób w tegotygodniowej ankiecie.');
    expect(format('pl', 'checkin.teamSize', { people: 22, joined: 0 })).toBe('Twój zespół ma 22 osoby w tegotygodniowej ankiecie.');
    expect(format('ar', 'checkin.teamSize', { people: 2, joined: 0 })).toBe('في فريقك شخصان في استطلاع هذا الأسبوع.');
    expect(format('ar', 'checkin.teamSize', { people: 11, joined: 0 })).toBe('في فريقك 11 شخصًا في استطلاع هذا الأسبوع.');
  });

  it('languages are matched from tags, Accept-Language and browser lists', () => {
    expect(matchLocale('pt')).toBe('pt-BR');
    expect(matchLocale('de-AT')).toBe('de');
    expect(matchLocale('ZH-cn')).toBe('zh-CN');
    expect(matchLocale('zh-Hans-CN')).toBe('zh-CN');
    expect(matchLocale('en-XA')).toBe('en-XA');
    expect(matchLocale('xx')).toBeNull();
    expect(matchLocale('')).toBeNull();
    expect(acceptLanguageTags('fr-CH, fr;q=0.9, en;q=0.8, de;q=0.7, *;q=0.5')).toEqual(['fr-CH', 'fr', 'en', 'de']);
    expect(acceptLanguageTags('en;q=0.1, tr')).toEqual(['tr', 'en']);
    expect(acceptLanguageTags('<script>, ;q=1')).toEqual([]);
    expect(preferredLocale(['sv-SE', 'de-CH'])).toBe('de');
    expect(preferredLocale(['sv-SE'])).toBe('en');
    expect(dirOf('ar')).toBe('rtl');
    expect(dirOf('tr')).toBe('ltr');
  });

  it('the check-in pages hold no word that is not from the catalogue', () => {
    for (const html of [checkinPage(ASSETS, PSEUDO_LOCALE), aboutPage(ASSETS, PSEUDO_LOCALE)]) {
      // In the pseudo-locale every word of the catalogue is accented and bracketed: plain English
      // left in a template would show as itself.
      const text = html
        .replace(/<title[^>]*>[^<]*<\/title>/g, '')
        .replace(/<option[^>]*>[^<]*<\/option>/g, '')
        .replace(/<[^>]+>/g, '\n')
        .split('\n')
        .map((s) => s.trim())
        .filter((s) => /\p{L}{2,}/u.test(s));
      for (const s of text) expect(s, s).toMatch(/^\[.*\]$/s);
    }
  });
});

describe('the layer of the words', () => {
  it('src/i18n imports only intl-messageformat and its own catalogues, so every face, job and mail can use it', () => {
    const source = readFileSync(new URL('../../src/i18n/index.ts', import.meta.url), 'utf8');
    const imports = [...source.matchAll(/^import[^'"]*['"]([^'"]+)['"]/gm)].map((m) => m[1]);
    expect(imports.filter((i) => !/^\.\/locales\/[a-zA-Z-]+\.json$/.test(i))).toEqual(['intl-messageformat']);
    expect(readdirSync(new URL('../../src/i18n/', import.meta.url)).sort()).toEqual(['index.ts', 'locales']);
  });
});
