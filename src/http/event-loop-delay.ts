import { monitorEventLoopDelay } from 'node:perf_hooks';

/**
 * The event loop's delay over the last sample interval, in ms. @fastify/under-pressure took the
 * mean of Node's delay histogram, which is NaN when fewer than two ticks fell into an interval
 * (a busy loop with 100-200 ms tasks, as in a cold process's first burst), and read NaN as
 * Infinity: it shed load at delays far below its limit (issue 20, finding 9). Here an interval
 * without histogram samples is measured by the lateness of the sampling timer itself.
 */
export function watchEventLoopDelay(sampleMs = 200, resolutionMs = 10): { delayMs(): number; stop(): void } {
  const histogram = monitorEventLoopDelay({ resolution: resolutionMs });
  histogram.enable();
  let delay = 0;
  let last = performance.now();
  const timer = setInterval(() => {
    const now = performance.now();
    const lateness = Math.max(0, now - last - sampleMs);
    last = now;
    delay = histogram.count > 0 ? Math.max(0, histogram.mean / 1e6 - resolutionMs, lateness) : lateness;
    histogram.reset();
  }, sampleMs);
  timer.unref();
  return {
    delayMs: () => delay,
    stop() {
      clearInterval(timer);
      histogram.disable();
    },
  };
}
