import cluster from 'node:cluster';
import type { Config } from './config.js';

/**
 * WORKERS=N in PostgreSQL mode: the primary forks N server processes sharing the port,
 * restarts one that dies, and forwards SIGTERM/SIGINT so each shuts down gracefully.
 * Returns true in the primary (which serves nothing itself).
 */
export function runPrimary(config: Config, log: (line: string) => void): boolean {
  if (config.workers <= 1 || !cluster.isPrimary) return false;
  if (!config.databaseUrl) {
    log(`WORKERS=${config.workers} ignored: the embedded database serves one process; set DATABASE_URL to run several`);
    return false;
  }
  let stopping = false;
  const fork = () => cluster.fork();
  for (let i = 0; i < config.workers; i++) fork();
  cluster.on('exit', (worker, code, signal) => {
    if (stopping) {
      if (Object.keys(cluster.workers ?? {}).length === 0) process.exit(0);
      return;
    }
    log(`worker ${worker.process.pid} exited (${signal ?? code}); starting another`);
    setTimeout(fork, 500);
  });
  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    process.once(signal, () => {
      stopping = true;
      for (const w of Object.values(cluster.workers ?? {})) w?.process.kill('SIGTERM');
    });
  }
  log(`climate-pulse primary ${process.pid} started ${config.workers} workers`);
  return true;
}
