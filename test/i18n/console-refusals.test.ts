import { describe, expect, it } from 'vitest';
import { ApiError } from '../../src/contract/errors.js';
import { refusalWords } from '../../src/console/plugins/errors.js';
import { speakerFor } from '../../src/console/words.js';
import { translator } from '../../src/i18n/index.js';

/**
 * Issue 57: a refusal the console has no words for (a new one, or an identity provider's own
 * detail) is not shown bare in English to a reader of another language: the reader's language
 * says it was not accepted and that the explanation that follows is the service's, in English.
 */
const DETAIL = 'The IdP metadata names no signing certificate.';
const LANGS = ['de', 'fr', 'es', 'pt-BR', 'pl', 'tr', 'ja', 'zh-CN', 'ar'] as const;

describe('refusals without words of their own', () => {
  it('an English reader reads the message as it is', () => {
    expect(refusalWords(speakerFor('en-GB'), new ApiError('invalid_request', DETAIL))).toBe(DETAIL);
  });

  it.each(LANGS)('%s: introduced in the reader language, the detail kept as it came', (lang) => {
    const said = refusalWords(speakerFor(lang), new ApiError('invalid_request', DETAIL));
    expect(said).toBe(translator(lang)('console.errors.refusedInEnglish', { detail: DETAIL }));
    expect(said.endsWith(DETAIL)).toBe(true);
    expect(said.length).toBeGreaterThan(DETAIL.length + 10);
  });

  it('German, exactly; and a refusal the console knows is in German alone', () => {
    expect(refusalWords(speakerFor('de-DE'), new ApiError('invalid_request', DETAIL))).toBe(
      `Nicht angenommen. Die Erklärung des Dienstes, auf Englisch: ${DETAIL}`,
    );
    const known = refusalWords(speakerFor('de-DE'), new ApiError('invalid_request', 'An organization has at most 50 domains.'));
    expect(known).toBe(translator('de')('console.refusal.domainsMax'));
    expect(known).not.toContain('Englisch');
  });
});
