import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../helpers/process.js';

/** Titles a test file can produce: its string literals, with it.each placeholders as wildcards. */
function titlePatterns(source: string): RegExp[] {
  const literals = source.match(/'(?:[^'\\\n]|\\.)*'|"(?:[^"\\\n]|\\.)*"|`(?:[^`\\]|\\.)*`/g) ?? [];
  return literals.map((lit) => {
    const text = lit.slice(1, -1).replace(/\\(.)/g, '$1');
    const parts = text.split(/%[sidfjo]|\$\{[^}]*\}/);
    return new RegExp(`^${parts.map((p) => p.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('.+')}$`);
  });
}

describe('docs/security.md', () => {
  const doc = readFileSync(join(ROOT, 'docs/security.md'), 'utf8');
  const citations = [...doc.matchAll(/`(test\/[^`]+\.test\.ts)` › "([^"]+)"/g)].map((m) => ({ file: m[1], title: m[2] }));

  it('names tests that exist: every cited file is there and contains the cited test title', () => {
    expect(citations.length).toBeGreaterThan(30);
    for (const { file, title } of citations) {
      expect(existsSync(join(ROOT, file)), file).toBe(true);
      const last = title.split(' › ').at(-1)!;
      const patterns = titlePatterns(readFileSync(join(ROOT, file), 'utf8'));
      const matches = last.endsWith('…')
        ? patterns.some((p) => p.test(last.slice(0, -1).trim()) || p.source.startsWith(`^${last.slice(0, -1).trim().replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`))
        : patterns.some((p) => p.test(last));
      expect(matches, `${file} › "${last}"`).toBe(true);
    }
  });
});
