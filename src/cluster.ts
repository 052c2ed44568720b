import cluster, { type Worker } from 'node:cluster';
import type { Config } from './config.js';

/** What a worker tells the primary: it serves (after migrations, pool and listeners), or why it could not start. */
export type WorkerMessage = { type: 'climate-pulse:ready' } | { type: 'climate-pulse:failed'; reason: string };

/** A new worker of a rolling restart that is not ready by then is stopped, and the roll with it. */
export const WORKER_READY_TIMEOUT_MS = 60_000;

/**
 * WORKERS=N in PostgreSQL mode: the primary forks N server processes sharing the port,
 * restarts one that dies, forwards SIGTERM/SIGINT so each shuts down gracefully, and on SIGHUP
 * replaces them one at a time (a rolling restart) without closing the port.
 * Returns true in the primary (which serves nothing itself).
 */
export function runPrimary(config: Config, log: (line: string) => void): boolean {
  if (config.workers <= 1 || !cluster.isPrimary) return false;
  if (!config.databaseUrl) {
    log(`WORKERS=${config.workers} ignored: the embedded database serves one process; set DATABASE_URL to run several`);
    return false;
  }
  let stopping = false;
  let rolling = false;
  let failedStop = false;
  /** Workers the primary stopped on purpose (replaced by a roll) or whose start a roll is watching: not restarted. */
  const managed = new Set<Worker>();

  const fork = () => cluster.fork();
  for (let i = 0; i < config.workers; i++) fork();
  cluster.on('exit', (worker, code, signal) => {
    if (stopping) {
      if (code !== 0) failedStop = true;
      if (Object.keys(cluster.workers ?? {}).length === 0) process.exit(failedStop ? 1 : 0);
      return;
    }
    if (managed.delete(worker)) return;
    log(`worker ${worker.process.pid} exited (${signal ?? code}); starting another`);
    setTimeout(() => stopping || fork(), 500);
  });

  /** Resolves when the worker says it serves; rejects with the reason it did not. */
  const ready = (worker: Worker) =>
    new Promise<void>((resolve, reject) => {
      let reason: string | undefined;
      const timer = setTimeout(() => {
        reason = `was not ready within ${WORKER_READY_TIMEOUT_MS / 1000} s`;
        worker.process.kill('SIGKILL');
      }, WORKER_READY_TIMEOUT_MS);
      const onMessage = (m: WorkerMessage) => {
        if (m?.type === 'climate-pulse:ready') finish();
        else if (m?.type === 'climate-pulse:failed') reason = `could not start: ${m.reason}`;
      };
      const onExit = (code: number | null, signal: string | null) => finish(reason ?? `exited (${signal ?? code}) before it was ready`);
      const finish = (failure?: string) => {
        clearTimeout(timer);
        worker.off('message', onMessage).off('exit', onExit);
        if (failure === undefined) resolve();
        else reject(new Error(failure));
      };
      worker.on('message', onMessage).on('exit', onExit);
    });

  const roll = async () => {
    const old = Object.values(cluster.workers ?? {}).filter((w): w is Worker => w !== undefined);
    log(`rolling restart: replacing ${old.length} workers one at a time`);
    let replaced = 0;
    for (const previous of old) {
      if (stopping) return;
      const fresh = fork();
      managed.add(fresh);
      try {
        await ready(fresh);
      } catch (err) {
        if (stopping) return; // the primary's own SIGTERM ended it
        log(
          `rolling restart stopped: new worker ${fresh.process.pid} ${(err as Error).message}; ` +
            `${old.length - replaced} old workers keep serving (${replaced} replaced)`,
        );
        return;
      }
      managed.delete(fresh); // from now on a worker like any other: restarted if it dies
      if (stopping) return;
      if (previous.isDead()) continue; // died meanwhile (and was restarted as usual)
      managed.add(previous);
      const exited = new Promise((r) => previous.once('exit', r));
      previous.process.kill('SIGTERM');
      await exited;
      replaced++;
    }
    log(`rolling restart done: ${replaced} workers replaced`);
  };

  process.on('SIGHUP', () => {
    if (stopping) return;
    if (rolling) {
      log('SIGHUP ignored: a rolling restart is under way');
      return;
    }
    rolling = true;
    void roll().finally(() => (rolling = false));
  });
  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    process.once(signal, () => {
      stopping = true;
      const workers = Object.values(cluster.workers ?? {});
      if (workers.length === 0) process.exit(0);
      for (const w of workers) w?.process.kill('SIGTERM');
      // Each worker bounds its own shutdown; this bounds the primary's should one hang regardless.
      setTimeout(() => {
        log(`workers still running ${config.shutdownGraceMs + 5_000} ms after ${signal}; killing them`);
        for (const w of Object.values(cluster.workers ?? {})) w?.process.kill('SIGKILL');
        process.exit(1);
      }, config.shutdownGraceMs + 5_000).unref();
    });
  }
  log(`climate-pulse primary ${process.pid} started ${config.workers} workers (SIGHUP: rolling restart)`);
  return true;
}

/** In a worker: tells the primary this one serves, or why it could not start. */
export function tellPrimary(message: WorkerMessage): Promise<void> {
  if (!cluster.isWorker || !process.send) return Promise.resolve();
  return new Promise((resolve) => process.send!(message, undefined, {}, () => resolve()));
}
