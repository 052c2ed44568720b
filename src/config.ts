import { isIP } from 'node:net';
import { Type, type Static } from 'typebox';
import { Value } from 'typebox/value';
import { PlainError } from './contract/errors.js';

/**
 * The environment, described once. `loadConfig` is the only place that reads
 * `process.env`; everything else receives a `Config`.
 */
/** A decimal with at most two decimals, so alert thresholds compare exactly in integer hundredths. */
const HUNDREDTHS = '^\\d{1,2}(\\.\\d{1,2})?$';

/**
 * Marks a variable whose value must never be printed: a configuration error names it and says
 * what is wrong, without the value (a password in a URL, a token, a key). Every new secret
 * variable is declared with it.
 */
const secret = <T extends object>(schema: T): T => Object.assign(schema, { secret: true });

/** "true" or "false", as written in the environment. */
const Flag = (fallback: boolean) =>
  Type.Union([Type.Literal('true'), Type.Literal('false')], { default: String(fallback), description: 'true or false' });

export const EnvSchema = Type.Object({
  PORT: Type.Integer({ minimum: 0, maximum: 65535, default: 3000 }),
  HOST: Type.String({ minLength: 1, default: '127.0.0.1' }),
  DATABASE_URL: Type.Optional(secret(Type.String({ pattern: '^postgres(ql)?://', description: 'a postgres:// URL' }))),
  DATA_DIR: Type.String({ minLength: 1, default: './data' }),
  REDIS_URL: Type.Optional(secret(Type.String({ pattern: '^rediss?://', description: 'a redis:// or rediss:// URL' }))),
  LOG_LEVEL: Type.Union(
    ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'].map((l) => Type.Literal(l)),
    { default: 'info' },
  ),
  BODY_LIMIT_BYTES: Type.Integer({ minimum: 1024, maximum: 10 * 1024 * 1024, default: 64 * 1024 }),
  IDEMPOTENCY_RETENTION_HOURS: Type.Number({ exclusiveMinimum: 0, default: 24 }),
  KEY_CACHE_TTL_MS: Type.Integer({ minimum: 0, maximum: 5000, default: 2000 }),
  AUTH_FAILURES_PER_MINUTE: Type.Integer({ minimum: 1, default: 30 }),
  // The reverse proxies in front of the service: their X-Forwarded-For names the client. Unset: none.
  TRUST_PROXY: Type.Optional(Type.String({ minLength: 1, maxLength: 4096, description: 'a comma-separated list of proxy addresses or CIDRs' })),
  DB_POOL_MAX: Type.Integer({ minimum: 1, maximum: 500, default: 10 }),
  DB_STATEMENT_TIMEOUT_MS: Type.Integer({ minimum: 100, default: 10_000 }),
  REQUEST_TIMEOUT_MS: Type.Integer({ minimum: 100, default: 30_000 }),
  // Open connections of the public listener at once; more are closed as they arrive.
  MAX_CONNECTIONS: Type.Integer({ minimum: 1, maximum: 1_000_000, default: 1024 }),
  METRICS_PORT: Type.Optional(Type.Integer({ minimum: 1, maximum: 65535 })),
  WORKERS: Type.Integer({ minimum: 1, maximum: 64, default: 1 }),
  // The bound on a shutdown, counted from SIGTERM/SIGINT (the delay below included): past it the process exits 1.
  SHUTDOWN_GRACE_MS: Type.Integer({ minimum: 1000, maximum: 600_000, default: 10_000 }),
  // From the signal on /readyz answers 503 while the port still serves this long (load balancers catch up).
  SHUTDOWN_DELAY_MS: Type.Integer({ minimum: 0, maximum: 600_000, default: 0 }),
  MAX_EVENT_LOOP_DELAY_MS: Type.Integer({ minimum: 0, default: 1000 }),
  COMMENT_CURSOR_SECRET: Type.Optional(secret(Type.String({ minLength: 32 }))),
  COMMENTS_RELEASE_DELAY_HOURS: Type.Number({ minimum: 0, maximum: 720, default: 24 }),
  ALERTS_INTERVAL_MINUTES: Type.Integer({ minimum: 0, maximum: 10_080, default: 60 }),
  ALERTS_CLOSE_DELAY_MINUTES: Type.Integer({ minimum: 0, maximum: 10_080, default: 60 }),
  ALERTS_MOOD_DROP: Type.String({ pattern: HUNDREDTHS, default: '0.5' }),
  ALERTS_LOW_MOOD: Type.String({ pattern: HUNDREDTHS, default: '2.5' }),
  ALERTS_PARTICIPATION_DROP: Type.String({ pattern: HUNDREDTHS, default: '0.5' }),
  // The operator API (CONTRACT.md section 10): a TCP listener only with both a port and a token.
  ADMIN_PORT: Type.Optional(Type.Integer({ minimum: 0, maximum: 65535 })),
  ADMIN_HOST: Type.String({ minLength: 1, default: '127.0.0.1' }),
  ADMIN_TOKEN: Type.Optional(secret(Type.String({ minLength: 32, maxLength: 512, pattern: '^[\\x21-\\x7e]+$' }))),
  // Limits of each operator listener (TCP and the Unix socket), docs/security.md: connections at
  // once; the time a request's headers may take; how long a request body may stop arriving.
  ADMIN_MAX_CONNECTIONS: Type.Integer({ minimum: 1, maximum: 100_000, default: 64 }),
  ADMIN_HEADERS_TIMEOUT_MS: Type.Integer({ minimum: 100, maximum: 600_000, default: 10_000 }),
  ADMIN_BODY_IDLE_TIMEOUT_MS: Type.Integer({ minimum: 100, maximum: 3_600_000, default: 30_000 }),
  // A file sent to the operator API's import (its temporary copy), and one NDJSON line or CSV record of any import.
  IMPORT_MAX_BYTES: Type.Integer({ minimum: 1024, maximum: 2 ** 40, default: 2 * 1024 ** 3 }),
  IMPORT_MAX_LINE_BYTES: Type.Integer({ minimum: 1024, maximum: 64 * 1024 ** 2, default: 1024 ** 2 }),
  WEBHOOK_POLL_MS: Type.Integer({ minimum: 10, maximum: 60_000, default: 1000 }),
  WEBHOOK_TIMEOUT_MS: Type.Integer({ minimum: 100, maximum: 60_000, default: 15_000 }),
  // The waits before each retry (the first attempt is immediate): durations like 500ms, 5s, 5m, 2h.
  // Tests only: webhooks to loopback over http and to private addresses. Never in production.
  WEBHOOK_ALLOW_PRIVATE: Flag(false),
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
  /**
   * Addresses and CIDRs (IPv4, IPv6) of the reverse proxies in front of the service, for Fastify's
   * `trustProxy`: `request.ip` is then the client address they report in X-Forwarded-For. Unset: none.
   */
  trustProxy?: string[];
  dbPoolMax: number;
  dbStatementTimeoutMs: number;
  requestTimeoutMs: number;
  /** Open connections of the public listener at once. */
  maxConnections: number;
  metricsPort?: number;
  workers: number;
  /** Upper bound on a shutdown from the signal on; past it the process exits 1. */
  shutdownGraceMs: number;
  /** How long /readyz answers 503 with the port still serving before it closes. */
  shutdownDelayMs: number;
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
  /** The operator API's TCP listener: on adminPort at adminHost, only when adminToken is set too. */
  adminPort?: number;
  adminHost: string;
  adminToken?: string;
  /** Open connections of each operator listener at once; more are closed as they arrive. */
  adminMaxConnections: number;
  /** A request's headers must have arrived within this time on an operator listener, else 408. */
  adminHeadersTimeoutMs: number;
  /** A request body that stops arriving for this long on an operator listener: 408, connection closed. */
  adminBodyIdleTimeoutMs: number;
  /** The largest file the operator API's import accepts (its temporary copy on disk). */
  importMaxBytes: number;
  /** The longest NDJSON line or CSV record of an import; a longer one refuses the whole file. */
  importMaxLineBytes: number;
  webhookPollMs: number;
  webhookTimeoutMs: number;
  /** Webhooks may go to loopback over http and to private addresses (tests only). */
  webhookAllowPrivate: boolean;
  /** Milliseconds to wait before each retry; its length is the number of retries. */
  webhookRetryScheduleMs: number[];
  /** The public address of the service, without `/v1`; unset: the document's servers are relative. */
  publicBaseUrl?: string;
}

export class ConfigError extends PlainError {}

export function loadConfig(env: Record<string, string | undefined> = process.env): Config {
  const known: Record<string, unknown> = {};
  for (const name of Object.keys(EnvSchema.properties)) {
    const raw = env[name];
    if (raw !== undefined && raw !== '') known[name] = raw;
  }
  const withDefaults = Value.Default(EnvSchema, known);
  const converted = Value.Convert(EnvSchema, withDefaults) as Env;
  const first = Value.Errors(EnvSchema, converted)[0];
  if (first) throw new ConfigError(describeError(first.instancePath.replace(/^\//, ''), known, first.message));
  // A URL its client cannot parse would fail later with the URL in the error: refuse it here, by name.
  for (const name of ['DATABASE_URL', 'REDIS_URL'] as const) {
    const value = converted[name];
    if (value !== undefined && !URL.canParse(value)) throw new ConfigError(describeError(name, known, 'is not a valid URL'));
  }
  // The drain needs time after the delay: a delay that fills the grace would end every shutdown in exit 1.
  if (converted.SHUTDOWN_DELAY_MS >= converted.SHUTDOWN_GRACE_MS) {
    throw new ConfigError(describeError('SHUTDOWN_DELAY_MS', known, `must be less than SHUTDOWN_GRACE_MS (${converted.SHUTDOWN_GRACE_MS})`));
  }
  if (converted.TRUST_PROXY !== undefined) {
    const problem = trustedProxyProblem(converted.TRUST_PROXY);
    if (problem) throw new ConfigError(describeError('TRUST_PROXY', known, problem));
  }
  return fromEnv(converted);
}

/** Whether a variable is marked secret in EnvSchema (its value is never printed). */
export function isSecretVariable(name: string): boolean {
  const schema = (EnvSchema.properties as Record<string, { secret?: boolean }>)[name];
  return Boolean(schema?.secret);
}

function describeError(name: string, known: Record<string, unknown>, message: string): string {
  if (!name) return `invalid configuration: ${message}`;
  const schema = (EnvSchema.properties as Record<string, { description?: string }>)[name];
  if (isSecretVariable(name)) {
    // The rule, never the value: a pattern could echo part of it, so only the description is shown.
    const what = message.startsWith('must match pattern') ? (schema?.description ? `must be ${schema.description}` : 'is malformed') : message;
    return `invalid configuration: ${name} ${what} (its value is secret and not shown)`;
  }
  // A union's own message ("must be equal to constant") says less than its description.
  const what = schema?.description && /constant|anyOf/.test(message) ? `must be ${schema.description}` : message;
  return `invalid configuration: ${name}=${JSON.stringify(known[name] ?? '')} ${what}`;
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
    trustProxy: e.TRUST_PROXY?.split(',').map((entry) => entry.trim()),
    dbPoolMax: e.DB_POOL_MAX,
    dbStatementTimeoutMs: e.DB_STATEMENT_TIMEOUT_MS,
    requestTimeoutMs: e.REQUEST_TIMEOUT_MS,
    maxConnections: e.MAX_CONNECTIONS,
    metricsPort: e.METRICS_PORT,
    workers: e.WORKERS,
    shutdownGraceMs: e.SHUTDOWN_GRACE_MS,
    shutdownDelayMs: e.SHUTDOWN_DELAY_MS,
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
    adminPort: e.ADMIN_PORT,
    adminHost: e.ADMIN_HOST,
    adminToken: e.ADMIN_TOKEN,
    adminMaxConnections: e.ADMIN_MAX_CONNECTIONS,
    adminHeadersTimeoutMs: e.ADMIN_HEADERS_TIMEOUT_MS,
    adminBodyIdleTimeoutMs: e.ADMIN_BODY_IDLE_TIMEOUT_MS,
    importMaxBytes: e.IMPORT_MAX_BYTES,
    importMaxLineBytes: e.IMPORT_MAX_LINE_BYTES,
    webhookPollMs: e.WEBHOOK_POLL_MS,
    webhookTimeoutMs: e.WEBHOOK_TIMEOUT_MS,
    webhookAllowPrivate: e.WEBHOOK_ALLOW_PRIVATE === 'true',
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

/**
 * Why a TRUST_PROXY list is refused, or null. Each entry is an address in its standard form or a
 * CIDR with a prefix of 1-32 (IPv4) or 1-128 (IPv6): no legacy forms (`010.0.0.1`, `1.2.3`), netmasks,
 * zones or /0, which Fastify's parser would read in ways the operator did not mean, or refuse later.
 */
export function trustedProxyProblem(text: string): string | null {
  for (const raw of text.split(',')) {
    const entry = raw.trim();
    if (!entry) return 'has an empty entry (a comma-separated list of proxy addresses or CIDRs)';
    const [address, prefix, extra] = entry.split('/');
    const family = extra === undefined && !address.includes('%') ? isIP(address) : 0;
    const max = family === 4 ? 32 : 128;
    const prefixOk = prefix === undefined || (/^[1-9]\d{0,2}$/.test(prefix) && Number(prefix) <= max);
    // An IPv4-mapped IPv6 range is read as its IPv4 range (prefix - 96).
    const mappedOk = prefix === undefined || family !== 6 || !/^::ffff:\d/i.test(address) || Number(prefix) > 96;
    if (!family || !prefixOk || !mappedOk) {
      return `has ${JSON.stringify(entry)}, which is not an IPv4 or IPv6 address or CIDR (such as 10.0.0.7, 10.0.0.0/8 or fd00::/8)`;
    }
  }
  return null;
}
