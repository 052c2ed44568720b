import { Type, type Static } from 'typebox';
import { Value } from 'typebox/value';

/**
 * The environment, described once. `loadConfig` is the only place that reads
 * `process.env`; everything else receives a `Config`.
 */
/** A decimal with at most two decimals, so alert thresholds compare exactly in integer hundredths. */
const HUNDREDTHS = '^\\d{1,2}(\\.\\d{1,2})?$';

export const EnvSchema = Type.Object({
  PORT: Type.Integer({ minimum: 0, maximum: 65535, default: 3000 }),
  HOST: Type.String({ minLength: 1, default: '127.0.0.1' }),
  DATABASE_URL: Type.Optional(Type.String({ pattern: '^postgres(ql)?://' })),
  DATA_DIR: Type.String({ minLength: 1, default: './data' }),
  REDIS_URL: Type.Optional(Type.String({ pattern: '^rediss?://' })),
  LOG_LEVEL: Type.Union(
    ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'].map((l) => Type.Literal(l)),
    { default: 'info' },
  ),
  BODY_LIMIT_BYTES: Type.Integer({ minimum: 1024, maximum: 10 * 1024 * 1024, default: 64 * 1024 }),
  IDEMPOTENCY_RETENTION_HOURS: Type.Number({ exclusiveMinimum: 0, default: 24 }),
  KEY_CACHE_TTL_MS: Type.Integer({ minimum: 0, maximum: 5000, default: 2000 }),
  AUTH_FAILURES_PER_MINUTE: Type.Integer({ minimum: 1, default: 30 }),
  DB_POOL_MAX: Type.Integer({ minimum: 1, maximum: 500, default: 10 }),
  DB_STATEMENT_TIMEOUT_MS: Type.Integer({ minimum: 100, default: 10_000 }),
  REQUEST_TIMEOUT_MS: Type.Integer({ minimum: 100, default: 30_000 }),
  METRICS_PORT: Type.Optional(Type.Integer({ minimum: 1, maximum: 65535 })),
  WORKERS: Type.Integer({ minimum: 1, maximum: 64, default: 1 }),
  MAX_EVENT_LOOP_DELAY_MS: Type.Integer({ minimum: 0, default: 1000 }),
  COMMENT_CURSOR_SECRET: Type.Optional(Type.String({ minLength: 32 })),
  COMMENTS_RELEASE_DELAY_HOURS: Type.Number({ minimum: 0, maximum: 720, default: 24 }),
  ALERTS_INTERVAL_MINUTES: Type.Integer({ minimum: 0, maximum: 10_080, default: 60 }),
  ALERTS_CLOSE_DELAY_MINUTES: Type.Integer({ minimum: 0, maximum: 10_080, default: 60 }),
  ALERTS_MOOD_DROP: Type.String({ pattern: HUNDREDTHS, default: '0.5' }),
  ALERTS_LOW_MOOD: Type.String({ pattern: HUNDREDTHS, default: '2.5' }),
  ALERTS_PARTICIPATION_DROP: Type.String({ pattern: HUNDREDTHS, default: '0.5' }),
  WEBHOOK_POLL_MS: Type.Integer({ minimum: 10, maximum: 60_000, default: 1000 }),
  WEBHOOK_TIMEOUT_MS: Type.Integer({ minimum: 100, maximum: 60_000, default: 15_000 }),
  // The waits before each retry (the first attempt is immediate): durations like 500ms, 5s, 5m, 2h.
  WEBHOOK_RETRY_SCHEDULE: Type.String({ pattern: '^\\s*\\d+(ms|s|m|h)\\s*(,\\s*\\d+(ms|s|m|h)\\s*)*$', default: '5s,5m,30m,2h,5h,10h,10h' }),
  // Where clients reach the service (https://api.example.com): the OpenAPI document's servers become absolute.
  PUBLIC_BASE_URL: Type.Optional(Type.String({ pattern: '^https?://[^\\s/?#]+(/[^\\s?#]*)?$', maxLength: 2048 })),
});

type Env = Static<typeof EnvSchema>;

export interface Config {
  port: number;
  host: string;
  databaseUrl?: string;
  dataDir: string;
  redisUrl?: string;
  logLevel: string;
  bodyLimitBytes: number;
  idempotencyRetentionHours: number;
  keyCacheTtlMs: number;
  authFailuresPerMinute: number;
  dbPoolMax: number;
  dbStatementTimeoutMs: number;
  requestTimeoutMs: number;
  metricsPort?: number;
  workers: number;
  maxEventLoopDelayMs: number;
  commentCursorSecret?: string;
  /** Hours after a week ends before its comments are released (late syncs still join it). */
  commentsReleaseDelayHours: number;
  /** Minutes between alert engine runs in each server process; 0 turns the schedule off. */
  alertsIntervalMinutes: number;
  /** A week is closed (evaluated) this many minutes after the next Monday 00:00 UTC. */
  alertsCloseDelayMinutes: number;
  /** Alert thresholds in hundredths (0.5 -> 50), compared exactly. */
  alertThresholds: { moodDrop: number; lowMood: number; participationDrop: number };
  webhookPollMs: number;
  webhookTimeoutMs: number;
  /** Milliseconds to wait before each retry; its length is the number of retries. */
  webhookRetryScheduleMs: number[];
  /** The public address of the service, without `/v1`; unset: the document's servers are relative. */
  publicBaseUrl?: string;
}

export class ConfigError extends Error {}

export function loadConfig(env: Record<string, string | undefined> = process.env): Config {
  const known: Record<string, unknown> = {};
  for (const name of Object.keys(EnvSchema.properties)) {
    const raw = env[name];
    if (raw !== undefined && raw !== '') known[name] = raw;
  }
  const withDefaults = Value.Default(EnvSchema, known);
  const converted = Value.Convert(EnvSchema, withDefaults) as Env;
  const first = Value.Errors(EnvSchema, converted)[0];
  if (first) {
    const name = first.instancePath.replace(/^\//, '') || 'environment';
    throw new ConfigError(`invalid configuration: ${name}=${JSON.stringify(known[name] ?? '')} ${first.message}`);
  }
  return fromEnv(converted);
}

function fromEnv(e: Env): Config {
  return {
    port: e.PORT,
    host: e.HOST,
    databaseUrl: e.DATABASE_URL,
    dataDir: e.DATA_DIR,
    redisUrl: e.REDIS_URL,
    logLevel: e.LOG_LEVEL,
    bodyLimitBytes: e.BODY_LIMIT_BYTES,
    idempotencyRetentionHours: e.IDEMPOTENCY_RETENTION_HOURS,
    keyCacheTtlMs: e.KEY_CACHE_TTL_MS,
    authFailuresPerMinute: e.AUTH_FAILURES_PER_MINUTE,
    dbPoolMax: e.DB_POOL_MAX,
    dbStatementTimeoutMs: e.DB_STATEMENT_TIMEOUT_MS,
    requestTimeoutMs: e.REQUEST_TIMEOUT_MS,
    metricsPort: e.METRICS_PORT,
    workers: e.WORKERS,
    maxEventLoopDelayMs: e.MAX_EVENT_LOOP_DELAY_MS,
    commentCursorSecret: e.COMMENT_CURSOR_SECRET,
    commentsReleaseDelayHours: e.COMMENTS_RELEASE_DELAY_HOURS,
    alertsIntervalMinutes: e.ALERTS_INTERVAL_MINUTES,
    alertsCloseDelayMinutes: e.ALERTS_CLOSE_DELAY_MINUTES,
    alertThresholds: {
      moodDrop: hundredths('ALERTS_MOOD_DROP', e.ALERTS_MOOD_DROP, 1, 400),
      lowMood: hundredths('ALERTS_LOW_MOOD', e.ALERTS_LOW_MOOD, 100, 500),
      participationDrop: hundredths('ALERTS_PARTICIPATION_DROP', e.ALERTS_PARTICIPATION_DROP, 1, 100),
    },
    webhookPollMs: e.WEBHOOK_POLL_MS,
    webhookTimeoutMs: e.WEBHOOK_TIMEOUT_MS,
    webhookRetryScheduleMs: parseDurations(e.WEBHOOK_RETRY_SCHEDULE),
    publicBaseUrl: e.PUBLIC_BASE_URL,
  };
}

function hundredths(name: string, value: string, min: number, max: number): number {
  const [whole, frac = ''] = value.split('.');
  const n = Number(whole) * 100 + Number(frac.padEnd(2, '0'));
  if (n < min || n > max) throw new ConfigError(`invalid configuration: ${name}=${JSON.stringify(value)} must be between ${min / 100} and ${max / 100}`);
  return n;
}

const UNIT_MS = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 } as const;

/** '5s,5m,2h' -> [5000, 300000, 7200000] (the pattern in EnvSchema has already checked the form). */
export function parseDurations(text: string): number[] {
  return text.split(',').map((part) => {
    const [, n, unit] = /^\s*(\d+)(ms|s|m|h)\s*$/.exec(part)!;
    return Number(n) * UNIT_MS[unit as keyof typeof UNIT_MS];
  });
}
