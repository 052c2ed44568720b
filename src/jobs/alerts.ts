import type { Config } from '../config.js';
import type { DatabaseExecutor } from '../db/executor.js';
import { lastClosedWeek, runAlertEngine, thresholdsFrom, type AlertEngineOptions, type AlertRunReport } from '../domain/alert-engine.js';
import { WEEK_MS } from '../domain/time.js';
import { inSpan } from '../telemetry/spans.js';

/**
 * How many closed weeks each scheduled run evaluates, newest back: two, so a server that was
 * down over a whole week boundary still raises the earlier week when it comes back.
 */
export const SCHEDULED_WEEKS = 2;
/** The first run of a process starts within this long after start-up (random), never all at once. */
export const FIRST_RUN_WITHIN_MS = 60_000;

type Log = { info(obj: object, msg: string): void; warn(obj: object, msg: string): void };

export interface AlertScheduleDeps {
  db: DatabaseExecutor;
  config: Pick<Config, 'alertsIntervalMinutes' | 'alertsCloseDelayMinutes' | 'alertThresholds'>;
  log: Log;
  now?: () => Date;
  random?: () => number;
  firstRunWithinMs?: number;
  onInserted?: AlertEngineOptions['onInserted'];
}

/** One scheduled run: the latest SCHEDULED_WEEKS closed weeks, every organization. */
export function runScheduledAlerts(deps: Omit<AlertScheduleDeps, 'log'>): Promise<AlertRunReport> {
  const now = deps.now?.() ?? new Date();
  const last = lastClosedWeek(now, deps.config.alertsCloseDelayMinutes).getTime();
  return inSpan('alerts.run', async (span) => {
    const report = await runAlertEngine(deps.db, {
      thresholds: thresholdsFrom(deps.config),
      weeks: Array.from({ length: SCHEDULED_WEEKS }, (_, i) => new Date(last - i * WEEK_MS)),
      clock: deps.now ?? (() => new Date()),
      onInserted: deps.onInserted,
    });
    span?.setAttributes({ 'climate_pulse.alerts.organizations': report.organizations, 'climate_pulse.alerts.raised': report.raised.length });
    return report;
  });
}

export interface AlertSchedule {
  /** Resolves once a run in progress has finished; no run starts afterwards. */
  stop(): Promise<void>;
}

/**
 * Runs the engine in this process every ALERTS_INTERVAL_MINUTES (+-10% jitter), the first
 * time at a random moment within a minute of start-up. Every process of every host has its
 * own timer; none coordinates with another, because the unique index makes overlapping runs
 * raise each alert once. Returns null when the interval is 0 (the schedule is off).
 */
export function startAlertSchedule(deps: AlertScheduleDeps): AlertSchedule | null {
  const intervalMs = deps.config.alertsIntervalMinutes * 60_000;
  if (intervalMs === 0) return null;
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
    running = runScheduledAlerts(deps).then(
      (r) => {
        if (r.raised.length > 0) deps.log.info({ raised: r.raised.length, weeks: r.weeks }, 'alert engine raised alerts');
      },
      (err) => deps.log.warn({ err }, 'alert engine run failed'),
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
