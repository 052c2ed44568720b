import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = fileURLToPath(new URL('../../', import.meta.url));
/**
 * The CLI as `npm start` and `npx climate-pulse` run it: the compiled JS, which vitest's global
 * setup (test/helpers/build.ts) rebuilds from src/ whenever a source is newer. Running src/ through
 * tsx instead cost each child process seconds of compiling.
 */
export const CLI = join(ROOT, 'dist/cli/index.js');

export interface ServerProcess {
  child: ChildProcess;
  url: string;
  /** Both streams, as they arrived. */
  output: () => string;
  /** stdout alone: JSON log lines only (docs/decisions.md, "One log stream"). */
  stdout: () => string;
  /** stderr alone: what a person reads (progress, address, the way in). */
  stderr: () => string;
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

/**
 * Runs `climate-pulse serve` (the compiled CLI) as a real process on a free port of 127.0.0.1. It is
 * up when it prints its address and, with ADMIN_PORT, the operator API's too. The start-up bound
 * (default 55 s) stays under vitest's 60 s hook timeout, so a server that does not start is reported
 * with its output; a test that starts a heavier server sets its own bound and hook timeout.
 */
export async function startServerProcess(
  env: Record<string, string>,
  opts: { startTimeoutMs?: number /** The script run instead of the CLI (WORKERS re-run it for each worker). */; entry?: string } = {},
): Promise<ServerProcess> {
  const child = spawn(process.execPath, [opts.entry ?? CLI, 'serve'], {
    cwd: ROOT,
    // A process that just started has a delayed event loop; tests of load shedding set their own value.
    env: { ...process.env, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'warn', MAX_EVENT_LOOP_DELAY_MS: '0', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (d) => {
    out += d;
    stdout += d;
  });
  child.stderr!.on('data', (d) => {
    out += d;
    stderr += d;
  });
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL'); // a server that never said it listens must not outlive the test
      reject(new Error(`server did not start:\n${out}`));
    }, opts.startTimeoutMs ?? 55_000);
    const check = () => {
      const m = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(out);
      if (m && (env.ADMIN_PORT === undefined || /operator API on/.test(out))) {
        clearTimeout(timer);
        resolve(m[1]);
      }
    };
    // The address (and the operator API's) are said on stderr, for people (docs/decisions.md, "One log stream").
    child.stdout!.on('data', check);
    child.stderr!.on('data', check);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`server exited with ${code}:\n${out}`));
    });
  });
  return {
    child,
    url,
    output: () => out,
    stdout: () => stdout,
    stderr: () => stderr,
    async stop(signal: NodeJS.Signals = 'SIGTERM') {
      if (child.exitCode !== null || child.signalCode !== null) return child.exitCode;
      if (signal === 'SIGTERM' || signal === 'SIGINT') releaseIdleConnections();
      const exited = once(child, 'exit');
      child.kill(signal);
      const [code] = await exited;
      return code as number | null;
    },
  };
}

/**
 * The messages of the primary's log lines (WORKERS): JSON lines on stdout with `role: "primary"`
 * (src/cluster.ts). Its start, rolls and exit are at `info`: a test that reads them sets LOG_LEVEL=info.
 */
export function primaryLog(s: Pick<ServerProcess, 'stdout'>): string[] {
  return s
    .stdout()
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as { role?: string; msg: string })
    .filter((line) => line.role === 'primary')
    .map((line) => line.msg);
}

export async function freePort(): Promise<number> {
  const srv = createServer().listen(0, '127.0.0.1');
  await once(srv, 'listening');
  const port = (srv.address() as { port: number }).port;
  srv.close();
  return port;
}

const GLOBAL_DISPATCHER = Symbol.for('undici.globalDispatcher.1');
/**
 * A draining server closes a keep-alive connection only once it has been idle past the 5 s it
 * advertises (docs/deployment.md, "Keep-alive and the drain"), and this process's fetch keeps its
 * idle ones 3 s: each stop waited that long. Before a graceful stop, fetch's pool is handed over
 * to a new one and the old one closed (its requests in flight finish first), as a client that is
 * done would. Tests of the drain itself signal the child directly.
 */
function releaseIdleConnections() {
  const g = globalThis as unknown as Record<symbol, { close?: () => Promise<void>; constructor: new () => unknown } | undefined>;
  const old = g[GLOBAL_DISPATCHER];
  if (!old?.close) return;
  g[GLOBAL_DISPATCHER] = new old.constructor() as (typeof g)[symbol];
  void old.close().catch(() => undefined);
}
