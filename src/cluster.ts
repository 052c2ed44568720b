import cluster, { type Worker } from 'node:cluster';
import type { Config } from './config.js';
import type { ProcessLog } from './telemetry/log.js';

/** What a worker tells the primary: it serves (after migrations, pool and listeners), or why it could not start. */
export type WorkerMessage = { type: 'climate-pulse:ready' } | { type: 'climate-pulse:failed'; reason: string };

/** A new worker of a rolling restart that is not ready by then is stopped, and the roll with it. */
export const WORKER_READY_TIMEOUT_MS = 60_000;

/** The first restart of a worker that died waits this long; each further exit within the window doubles it. */
export const RESTART_FIRST_MS = 500;
export const RESTART_MAX_MS = 30_000;

const seconds = (ms: number) => `${Number((ms / 1000).toFixed(1))} s`;

/**
 * WORKERS=N in PostgreSQL mode: the primary forks N server processes sharing the port,
 * restarts one that dies (with exponential back-off, and gives up with exit 1 after
 * WORKER_CRASH_LIMIT exits within WORKER_CRASH_WINDOW_MS, so that systemd or Kubernetes sees a
 * crash loop), forwards SIGTERM/SIGINT so each shuts down gracefully, and on SIGHUP replaces them
 * one at a time (a rolling restart) without closing the port. Returns true in the primary (which
 * serves nothing itself).
 *
 * A roll never runs more than WORKERS processes: it stops an old worker (which drains) before it
 * starts that worker's replacement, and the replacement is on trial until it has been ready for
 * ROLL_SETTLE_MS; only then is the next old one stopped. A new worker that does not start or dies
 * within its settle time stops the roll: the old ones not yet replaced serve on, and its place
 * stays empty until the next SIGHUP (the code on disk is the one that failed), which fills it.
 *
 * `log`: JSON lines on stdout (src/telemetry/log.ts), with `role: "primary"` once it is one: its start, each roll
 * (its start, and its end or why it stopped), each worker that died and its restart, its exit.
 */
export function runPrimary(config: Config, log: ProcessLog): boolean {
  if (config.workers <= 1 || !cluster.isPrimary) return false;
  if (!config.databaseUrl) {
    log.warn({ workers: config.workers }, `WORKERS=${config.workers} ignored: the embedded database serves one process; set DATABASE_URL to run several`);
    return false;
  }
  log = log.child({ role: 'primary' });
  let stopping = false;
  let rolling = false;
  let failedStop = false;
  /** Workers a roll stopped on purpose: their exit is no crash. */
  const retiring = new Set<Worker>();
  /** The new worker a roll is trying (started, not through its settle time yet): not restarted if it dies. */
  let onTrial: Worker | undefined;
  /** The roll's old workers not replaced yet: one that dies is replaced by the roll, never also restarted. */
  const toReplace = new Set<Worker>();
  /** Those of them that died: the roll's next new worker takes the place of one. */
  const diedInRoll = new Set<Worker>();
  /** Workers a roll started and kept: one that dies stops the roll (the new build fails after its settle time). */
  const newBuild = new Set<Worker>();
  let rollStop: string | undefined;
  const restartTimers = new Set<NodeJS.Timeout>();
  /** When workers died unplanned, within the crash window. */
  const exits: number[] = [];

  /** The primary's last line (issue 54, item 5): why it stops, and its exit code. */
  let stopReason = '';
  const exit = (code: number): never => {
    const line = `climate-pulse primary ${process.pid} exiting ${code}${stopReason ? ` after ${stopReason}` : ''}: every worker has stopped`;
    log[code === 0 ? 'info' : 'error']({ exitCode: code, reason: stopReason || undefined }, line);
    process.exit(code);
  };
  const fork = () => cluster.fork();
  const restartAfter = (ms: number) => {
    const timer = setTimeout(() => {
      restartTimers.delete(timer);
      if (!stopping) fork();
    }, ms);
    restartTimers.add(timer);
  };
  const stopAll = (why: string | undefined, exitCode: number) => {
    if (stopping) return;
    stopping = true;
    stopReason = why ?? '';
    if (exitCode !== 0) failedStop = true;
    for (const timer of restartTimers) clearTimeout(timer);
    restartTimers.clear();
    const workers = Object.values(cluster.workers ?? {});
    if (workers.length === 0) exit(exitCode);
    for (const w of workers) w?.process.kill('SIGTERM');
    // Each worker bounds its own shutdown; this bounds the primary's should one hang regardless.
    setTimeout(() => {
      log.error({}, `workers still running ${config.shutdownGraceMs + 5_000} ms after ${why}; killing them`);
      for (const w of Object.values(cluster.workers ?? {})) w?.process.kill('SIGKILL');
      exit(1);
    }, config.shutdownGraceMs + 5_000).unref();
  };

  for (let i = 0; i < config.workers; i++) fork();
  cluster.on('exit', (worker, code, signal) => {
    if (stopping) {
      if (code !== 0) failedStop = true;
      if (Object.keys(cluster.workers ?? {}).length === 0) exit(failedStop ? 1 : 0);
      return;
    }
    if (retiring.delete(worker)) return;
    if (worker === onTrial) return; // the roll hears it, and stops
    const how = `${worker.process.pid} exited (${signal ?? code})`;
    const now = Date.now();
    exits.push(now);
    while (exits[0] <= now - config.workerCrashWindowMs) exits.shift();
    if (exits.length >= config.workerCrashLimit) {
      log.error(
        { worker: worker.process.pid, exits: exits.length },
        `worker ${how}: ${exits.length} worker exits within ${seconds(config.workerCrashWindowMs)} (WORKER_CRASH_LIMIT); ` +
          'stopping every worker, the primary exits 1',
      );
      stopAll('the crash limit', 1);
      return;
    }
    if (toReplace.delete(worker)) {
      diedInRoll.add(worker);
      log.warn({ worker: worker.process.pid }, `old worker ${how} during the rolling restart; the roll replaces it`);
      return;
    }
    if (newBuild.has(worker) && rolling) rollStop ??= `new worker ${how} after its settle time`;
    newBuild.delete(worker);
    const delay = Math.min(RESTART_FIRST_MS * 2 ** (exits.length - 1), RESTART_MAX_MS);
    log.warn(
      { worker: worker.process.pid, restartInMs: delay, exits: exits.length },
      `worker ${how}; starting another in ${seconds(delay)} ` +
        `(${exits.length} ${exits.length === 1 ? 'exit' : 'exits'} within ${seconds(config.workerCrashWindowMs)}; at ${config.workerCrashLimit} the primary stops)`,
    );
    restartAfter(delay);
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

  /** Resolves once the worker has stayed up for ROLL_SETTLE_MS; rejects if it exits before. */
  const settled = (worker: Worker) =>
    new Promise<void>((resolve, reject) => {
      const readyAt = Date.now();
      const onExit = (code: number | null, signal: string | null) => {
        clearTimeout(timer);
        reject(new Error(`exited (${signal ?? code}) ${seconds(Date.now() - readyAt)} after it was ready, within ROLL_SETTLE_MS (${config.rollSettleMs} ms)`));
      };
      const timer = setTimeout(() => {
        worker.off('exit', onExit);
        resolve();
      }, config.rollSettleMs);
      worker.once('exit', onExit);
    });

  const roll = async () => {
    const old = Object.values(cluster.workers ?? {}).filter((w): w is Worker => w !== undefined && !w.isDead());
    for (const w of old) toReplace.add(w);
    newBuild.clear();
    rollStop = undefined;
    // Places empty now (a new worker of an earlier roll that failed its trial): filled first, stopping nobody.
    const empty = Math.max(0, config.workers - old.length - restartTimers.size);
    const places: (Worker | undefined)[] = [...Array<undefined>(empty).fill(undefined), ...old];
    log.info(
      { workers: old.length, emptyPlaces: empty },
      `rolling restart: replacing ${old.length} ${old.length === 1 ? 'worker' : 'workers'} one at a time${empty > 0 ? `, after starting ${empty} in ${empty === 1 ? 'an empty place' : 'empty places'}` : ''}`,
    );
    let replaced = 0;
    const serving = () => old.filter((w) => toReplace.has(w) && !w.isDead()).length;
    const stoppedBecause = (why: string) => {
      const left = serving();
      log.warn(
        { replaced, oldServing: left },
        `rolling restart stopped: ${why}; ${left} old ${left === 1 ? 'worker keeps' : 'workers keep'} serving (${replaced} replaced), ` +
          'the failed place stays empty until the next SIGHUP',
      );
    };
    try {
      for (const previous of places) {
        if (stopping) return;
        if (rollStop) return stoppedBecause(rollStop);
        // Stopped (and drained) before its replacement starts: never more than WORKERS processes.
        if (previous !== undefined && toReplace.delete(previous)) {
          retiring.add(previous);
          const exited = new Promise((r) => previous.once('exit', r));
          previous.process.kill('SIGTERM');
          await exited;
          if (stopping) return;
        } else if (previous !== undefined) {
          diedInRoll.delete(previous); // died during the roll (and was not restarted): its place is free
        }
        const fresh = fork();
        onTrial = fresh;
        try {
          await ready(fresh);
          await settled(fresh);
        } catch (err) {
          if (stopping) return; // the primary's own SIGTERM ended it
          return stoppedBecause(`new worker ${fresh.process.pid} ${(err as Error).message}`);
        } finally {
          onTrial = undefined;
        }
        newBuild.add(fresh); // from now on a worker like any other: restarted if it dies
        replaced++;
      }
      log.info({ replaced }, `rolling restart done: ${replaced} workers replaced`);
    } finally {
      // Old workers that died during a roll that stopped before replacing them: restarted now, as any worker that dies.
      for (let n = diedInRoll.size; n > 0 && !stopping; n--) restartAfter(RESTART_FIRST_MS);
      diedInRoll.clear();
      toReplace.clear();
    }
  };

  process.on('SIGHUP', () => {
    if (stopping) return;
    if (rolling) {
      log.warn({}, 'SIGHUP ignored: a rolling restart is under way');
      return;
    }
    rolling = true;
    void roll().finally(() => (rolling = false));
  });
  for (const signal of ['SIGTERM', 'SIGINT'] as const) process.once(signal, () => stopAll(signal, 0));
  log.info({ workers: config.workers }, `climate-pulse primary ${process.pid} started ${config.workers} workers (SIGHUP: rolling restart)`);
  return true;
}

/** In a worker: tells the primary this one serves, or why it could not start. */
export function tellPrimary(message: WorkerMessage): Promise<void> {
  if (!cluster.isWorker || !process.send) return Promise.resolve();
  return new Promise((resolve) => process.send!(message, undefined, {}, () => resolve()));
}
