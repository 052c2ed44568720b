import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
// @ts-expect-error: a plain script of the package (scripts/), without type declarations
import { staleReason } from '../../scripts/build-if-stale.mjs';

/**
 * Issue 29: every `npm start` ran two full TypeScript builds first (58-104 s before the first
 * answer). Its prestart now compiles only what changed: after the tests' own setup (the same
 * script) dist/ is fresh, and the prestart command finds nothing to do.
 */
describe("npm start's prestart", () => {
  it('finds dist/ fresh after a build and compiles nothing', () => {
    expect(staleReason()).toBeNull();
    const run = spawnSync(process.execPath, ['scripts/build-if-stale.mjs'], { encoding: 'utf8' });
    // A build would say why on stderr ("build: src/... is newer than its compiled file; compiling ...").
    expect([run.status, run.stdout, run.stderr]).toEqual([0, '', '']);
  });
});
