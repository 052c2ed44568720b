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
    // The two workers live for the whole run and keep the modules they loaded between files: each
    // file in a process of its own spent about 2 s of CPU starting Node and loading Fastify, the
    // schemas and PGlite again (the PGlite pass: 711 s isolated, 447 s shared, all files passing).
    // Every file still gets its own database and app; no file may leave global state behind it
    // (process.env, timers, listeners), which the suite's helpers restore.
    isolate: false,
  },
});
