import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { format } from 'node:util';
import { CommanderError, type Command } from 'commander';
import { buildApp } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';
import type { DatabaseExecutor } from '../../src/db/executor.js';
import { openDatabase } from '../../src/db/open.js';
import { buildProgram, printCliError } from '../../src/cli/program.js';
import { createTestDatabase, TEST_DATABASE_URL } from './db.js';
import { CLI, ROOT } from './process.js';

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * A database for CLI tests, reachable by child processes: a fresh DATA_DIR for PGlite, or a
 * fresh schema on PostgreSQL.
 */
export async function createCliDatabase() {
  if (TEST_DATABASE_URL) {
    const t = await createTestDatabase();
    await t.db.close(); // the children and the tests open their own connections
    const env = { DATABASE_URL: t.url!, DATA_DIR: '' };
    // Its pool is closed already: only the schema goes (t.close() would end the pool twice, throw, and leave it).
    return { env, kind: 'pg' as const, close: () => t.drop!() };
  }
  const dir = mkdtempSync(join(tmpdir(), 'cp-cli-'));
  return { env: { DATA_DIR: dir, DATABASE_URL: '' }, kind: 'pglite' as const, dir, close: async () => rmSync(dir, { recursive: true, force: true }) };
}

export function runCli(args: string[], env: Record<string, string>): Promise<CliResult> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [CLI, ...args],
      { cwd: ROOT, env: { ...process.env, LOG_LEVEL: 'warn', ...env }, maxBuffer: 16 * 1024 * 1024 },
      (err, stdout, stderr) => resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });
}

/**
 * The CLI run in this process: the same commands (src/cli/program.ts, what `climate-pulse` runs),
 * with `env` over this process's environment for the call, their stdout and stderr captured and
 * the exit code the process would have had (1 after an error, commander's own for its refusals).
 * A child process spends about 3 s of CPU per command booting Node, loading the CLI and compiling
 * PGlite's WebAssembly; here the modules and the compiled WebAssembly are loaded once per test file,
 * and a command costs what opening the database and running it cost (about 0.7 s on PGlite).
 *
 * For tests about what the CLI prints, changes and exits with. What is about the process itself
 * stays with `runCli`: the embedded-database lock between processes, signals, a `serve`, two
 * commands at once, a umask of the child's own. `TEST_CLI_SPAWN=1` runs every call as a process
 * (to compare, or to check that nothing depends on the process).
 *
 * Calls run one at a time (they set process.env). What a command leaves on the process is undone
 * after it: the environment, the umask (the embedded lock narrows it), the exit code, and listeners
 * it added to process events (the lock's release on exit). Refused: a DATA_DIR this process holds
 * open itself (the lock would take it over as its own, and two PGlite instances would write one
 * directory).
 */
export function runCliInProcess(args: string[], env: Record<string, string>): Promise<CliResult> {
  if (process.env.TEST_CLI_SPAWN) return runCli(args, env);
  if (args[0] === 'serve') return Promise.reject(new Error('runCliInProcess: `serve` runs as a process (startServerProcess)'));
  const run = inProcessQueue.then(() => runInProcess(args, env));
  inProcessQueue = run.then(
    () => undefined,
    () => undefined,
  );
  return run;
}

let inProcessQueue: Promise<void> = Promise.resolve();
const PROCESS_EVENTS = ['exit', 'beforeExit', 'SIGINT', 'SIGTERM', 'SIGHUP', 'uncaughtException', 'unhandledRejection', 'warning'] as const;

/** Every command of the program, for settings commander copies only to commands made after them. */
function everyCommand(c: Command): Command[] {
  return [c, ...c.commands.flatMap(everyCommand)];
}

async function runInProcess(args: string[], env: Record<string, string>): Promise<CliResult> {
  const vars: Record<string, string> = { LOG_LEVEL: 'warn', ...env };
  const dataDir = vars.DATA_DIR ?? process.env.DATA_DIR;
  if (dataDir && !(vars.DATABASE_URL ?? process.env.DATABASE_URL)) {
    let holder: number | undefined;
    try {
      holder = (JSON.parse(readFileSync(join(resolve(dataDir), 'climate-pulse.lock'), 'utf8')) as { pid: number }).pid;
    } catch {
      /* no lock: nobody holds it */
    }
    if (holder === process.pid) {
      throw new Error(`runCliInProcess: this process holds ${dataDir} open; close it first, or run the CLI as a process (runCli) to see its lock refused`);
    }
  }
  let stdout = '';
  let stderr = '';
  const saved = {
    env: Object.fromEntries(Object.keys(vars).map((k) => [k, process.env[k]])),
    umask: process.umask(),
    exitCode: process.exitCode,
    console: { log: console.log, info: console.info, debug: console.debug, warn: console.warn, error: console.error },
    stdoutWrite: process.stdout.write,
    stderrWrite: process.stderr.write,
    listeners: Object.fromEntries(PROCESS_EVENTS.map((e) => [e, process.rawListeners(e)])),
  };
  const writer =
    (to: 'out' | 'err') =>
    (chunk: string | Uint8Array, ...rest: unknown[]): boolean => {
      const text = typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8');
      if (to === 'out') stdout += text;
      else stderr += text;
      const cb = rest.find((r) => typeof r === 'function') as (() => void) | undefined;
      cb?.();
      return true;
    };
  const toOut = (...a: unknown[]) => void (stdout += `${format(...a)}\n`);
  const toErr = (...a: unknown[]) => void (stderr += `${format(...a)}\n`);
  Object.assign(process.env, vars);
  process.exitCode = undefined;
  Object.assign(console, { log: toOut, info: toOut, debug: toOut, warn: toErr, error: toErr });
  process.stdout.write = writer('out') as typeof process.stdout.write;
  process.stderr.write = writer('err') as typeof process.stderr.write;
  let code = 0;
  try {
    const program = buildProgram();
    for (const c of everyCommand(program)) {
      c.exitOverride();
      c.configureOutput({ writeOut: (s) => void (stdout += s), writeErr: (s) => void (stderr += s) });
    }
    try {
      await program.parseAsync(['node', 'climate-pulse', ...args]);
    } catch (err) {
      if (err instanceof CommanderError) code = err.exitCode;
      else {
        printCliError(err, toErr);
        code = 1;
      }
    }
    const exitCode = process.exitCode as number | string | undefined;
    if (code === 0 && exitCode !== undefined && Number(exitCode) !== 0) code = Number(exitCode);
  } finally {
    Object.assign(console, saved.console);
    process.stdout.write = saved.stdoutWrite;
    process.stderr.write = saved.stderrWrite;
    for (const [k, v] of Object.entries(saved.env)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
    process.umask(saved.umask);
    process.exitCode = saved.exitCode;
    for (const e of PROCESS_EVENTS) {
      for (const l of process.rawListeners(e)) if (!saved.listeners[e].includes(l)) process.removeListener(e, l as (...a: unknown[]) => void);
    }
  }
  return { code, stdout, stderr };
}

/** Opens the CLI test database in this process (taking the embedded lock), with the app on it. */
export async function openApp(env: Record<string, string>, extra: Record<string, string> = {}) {
  const config = loadConfig({ LOG_LEVEL: 'silent', ...env, ...extra });
  const db: DatabaseExecutor = await openDatabase(config);
  const app = await buildApp(config, { db });
  return {
    app,
    db,
    async close() {
      await app.close();
      await db.close();
    },
  };
}
