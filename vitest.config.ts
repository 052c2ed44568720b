import { defineConfig } from 'vitest/config';

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
  },
});
