import { defineConfig } from 'vitest/config';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

/**
 * Files that start first, the longest of either pass first (measured 2026-11-28, .ci/run's lists of
 * slowest files). vitest orders files by the durations of the previous run: CI's PostgreSQL pass
 * read the PGlite pass's, in which the rolling restarts are skipped (0 s), so those two files,
 * the longest of the pass (54 and 26 s, mostly waiting on restarts), started last and ran alone
 * at its end. Started first, their waits leave the CPU to the other worker.
 */
const START_FIRST = [
  'faults/rolling-restart-bad-build',
  'faults/drain-resets',
  'security/review3',
  'faults/rolling-restart',
  'cli/import-demo-lock',
  'admin/listener-limits',
  'security/review',
  'docs/readme',
  'webhooks/processes',
  'http/docs-try-it-out',
  'faults/connection-flood',
  'cli/backup',
  'checkin/two-processes',
  'console/password-limits',
  'admin/erase',
].map((name) => `/test/${name}.test.ts`);

class LongestFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const rank = (f: TestSpecification) => {
      const i = START_FIRST.findIndex((name) => f.moduleId.endsWith(name));
      return i < 0 ? START_FIRST.length : i;
    };
    return (await super.sort(files)).sort((a, b) => rank(a) - rank(b));
  }
}

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // Tests run the CLI and the server from dist/: rebuilt here when any source is newer.
    globalSetup: ['test/helpers/build.ts'],
    pool: 'forks',
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // Each file gets its own database (PGlite in memory, or a fresh PostgreSQL schema).
    fileParallelism: true,
    maxWorkers: 2,
    // The two workers live for the whole run and keep the modules they loaded between files: each
    // file in a process of its own spent about 2 s of CPU starting Node and loading Fastify, the
    // schemas and PGlite again (the PGlite pass: 711 s isolated, 447 s shared, all files passing).
    // Every file still gets its own database and app; no file may leave global state behind it
    // (process.env, timers, listeners), which the suite's helpers restore.
    isolate: false,
    sequence: { sequencer: LongestFirst },
  },
});
