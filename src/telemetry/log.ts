import { pino, type Logger } from 'pino';

/**
 * The log lines of a process that has no app of its own (the primary of WORKERS) or that speaks
 * before its app exists (a server's start and its end): JSON lines on stdout in the shape the
 * apps' request logs have (pino's: `level`, `time`, `pid`, `hostname`, `msg`), at LOG_LEVEL.
 * stdout holds only such lines (docs/decisions.md, "One log stream"); what a person reads while a
 * server starts (its progress, its address, the way in, a key shown once) goes to stderr.
 */
export type ProcessLog = Pick<Logger, 'info' | 'warn' | 'error' | 'child'>;

export function processLog(level: string, bindings: Record<string, string | number> = {}): ProcessLog {
  // pino's own stdout stream, as the apps' loggers have: flushed synchronously on exit, EPIPE ignored.
  return pino({ level }).child(bindings);
}
