import { describe, expect, it } from 'vitest';
import { AUDIT_ACTIONS } from '../../src/contract/schemas/admin-audit.js';
import { AUDIT_AREAS, AUDIT_WORDS, auditWords, localeOf, speakerFor } from '../../src/console/words.js';

/** Issue 53, *Words for people*: audit events in words, dates in the reader's locale and zone, plurals that read right. */
describe("the console's words", () => {
  it('names every audit code in words, in a known area, no two codes alike', () => {
    for (const code of AUDIT_ACTIONS) {
      expect(AUDIT_WORDS[code], code).toBeDefined();
      expect(AUDIT_AREAS).toContain(AUDIT_WORDS[code].area);
      expect(AUDIT_WORDS[code].words, code).not.toMatch(/[._]/);
    }
    expect(Object.keys(AUDIT_WORDS).sort()).toEqual([...AUDIT_ACTIONS].sort());
    expect(new Set(Object.values(AUDIT_WORDS).map((w) => w.words)).size).toBe(AUDIT_ACTIONS.length);
    expect(auditWords('member.invited')).toBe('Member invited');
    expect(auditWords('some.future_code')).toBe('some.future_code');
  });

  it('says "1 person" and "2 people", in the locale\'s digits', () => {
    const en = speakerFor('en-US');
    expect(en.t('console.sessions.endOthersHelp', { others: 1 })).toBe('Ends the other session; you stay signed in here.');
    expect(en.t('console.sessions.endOthersHelp', { others: 1500 })).toBe('Ends the 1,500 other sessions; you stay signed in here.');
    expect(speakerFor('fr-FR').t('console.sessions.endOthersHelp', { others: 1500 })).toBe(
      'Met fin aux 1\u202f500 autres sessions ; vous restez connecté ici.',
    );
    expect(speakerFor('pl').t('console.sessions.endOthersHelp', { others: 5 })).toBe('Kończy 5 pozostałych sesji; tutaj pozostajesz zalogowany.');
  });

  it('writes an instant in the locale and the zone asked, never as mm/dd/yyyy', () => {
    const at = '2026-11-19T08:30:00.000Z';
    expect(speakerFor(undefined).when(at)).toBe('19 Nov 2026, 08:30 UTC');
    expect(speakerFor('en-US,en;q=0.9', 'Europe/Paris').when(at)).toBe('Nov 19, 2026, 09:30 AM GMT+1');
    expect(speakerFor('de-DE', 'Europe/Paris').when(at, 'never', 'second')).toBe('19. Nov. 2026, 09:30:00 MEZ');
    expect(speakerFor('en-US').when(null, 'never')).toBe('never');
    // A calendar day stays the day it names, whatever the zone.
    expect(speakerFor('en-US', 'Pacific/Honolulu').day('2026-11-19')).toBe('Nov 19, 2026');
    expect(speakerFor('en-US').when(at)).not.toMatch(/\d\d\/\d\d\/\d{4}/);
  });

  it('takes the first language Intl knows, by weight, and falls back to en-GB and UTC', () => {
    expect(localeOf('fr-CH, fr;q=0.9, en;q=0.8')).toBe('fr-CH');
    expect(localeOf('en;q=0.5, de;q=0.9')).toBe('de');
    expect(localeOf('*')).toBe('en-GB');
    expect(localeOf('<script>, x-!!')).toBe('en-GB');
    expect(localeOf(undefined)).toBe('en-GB');
    expect(speakerFor('en', 'Paris').timeZone).toBe('UTC');
  });
});
