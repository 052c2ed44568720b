import type { DatabaseExecutor } from '../db/executor.js';
import { purgeExpiredRecords, type PurgeReport } from '../domain/retention.js';
import { inSpan } from '../telemetry/spans.js';

/**
 * The retention job in every server process (issue 52, item 4): every RETENTION_EVERY_MS (+-10%
 * jitter), the first time at a random moment within FIRST_RUN_WITHIN_MS of start-up, it deletes
 * what each organization's retention no longer keeps (purgeExpiredRecords: bounded batches). The
 * processes do not coordinate: a row is deleted once whoever gets it, and each process counts only
 * what its own statements deleted. Each run writes one log line of counts, never a row's content.
 */
export const RETENTION_EVERY_MS = 60 * 60_000;
export const FIRST_RUN_WITHIN_MS = 5 * 60_000;

type Log = { info(obj: object, msg: string): void; warn(obj: object, msg: string): void };

export interface RetentionScheduleDeps {
  db: DatabaseExecutor;
  log: Log;
  now?: () => Date;
  intervalMs?: number;
  firstRunWithinMs?: number;
  random?: () => number;
}

/** One run, and its log line: the counts of what was deleted, and how long it took. */
export async function runRetention(deps: Pick<RetentionScheduleDeps, 'db' | 'log' | 'now'>): Promise<PurgeReport> {
  const started = Date.now();
  const report = await inSpan('retention.run', () => purgeExpiredRecords(deps.db, deps.now?.() ?? new Date()));
  deps.log.info({ retention: { ...report, ms: Date.now() - started } }, 'retention purge');
  return report;
}

export interface RetentionSchedule {
  /** Resolves once a run in progress has finished; no run starts afterwards. */
  stop(): Promise<void>;
}

export function startRetentionSchedule(deps: RetentionScheduleDeps): RetentionSchedule {
  const intervalMs = deps.intervalMs ?? RETENTION_EVERY_MS;
  const random = deps.random ?? Math.random;
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> = Promise.resolve();
  const schedule = (ms: number) => {
    if (stopped) return;
    timer = setTimeout(tick, ms);
    timer.unref();
  };
  const tick = () => {
    running = runRetention(deps).then(
      () => undefined,
      (err) => deps.log.warn({ err: { message: (err as Error).message } }, 'retention purge failed'),
    );
    void running.then(() => schedule(intervalMs * (0.9 + 0.2 * random())));
  };
  schedule(Math.min(intervalMs, deps.firstRunWithinMs ?? FIRST_RUN_WITHIN_MS) * random());
  return {
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await running;
    },
  };
}
