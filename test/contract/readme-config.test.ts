import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { VARIABLES } from '../../src/config.js';

/**
 * Issue 29: ADMIN_PORT, ADMIN_HOST, ADMIN_TOKEN, MAX_CONNECTIONS and WEBHOOK_ALLOW_PRIVATE were
 * read by the server but missing from the README's configuration table. Every variable of
 * src/config.ts has its row there, and the table names no variable the server does not read.
 */
describe("the README's configuration table", () => {
  const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');
  const section = readme.slice(readme.indexOf('## Configuration'), readme.indexOf('\n## ', readme.indexOf('## Configuration') + 5));
  const rows = [...section.matchAll(/^\| `([A-Z0-9_]+)` \|/gm)].map((m) => m[1]);

  it('has a row for every variable the server reads, and only those', () => {
    const variables: string[] = Object.values(VARIABLES).map((v) => v.env);
    expect(variables.filter((v) => !rows.includes(v))).toEqual([]);
    expect(rows.filter((r) => !variables.includes(r))).toEqual([]);
    expect(new Set(rows).size).toBe(rows.length);
  });
});
