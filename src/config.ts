import { isIP } from 'node:net';
import { Type, type Static, type TOptional, type TSchema } from 'typebox';
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

/**
 * One environment variable: its name, its schema (validation, default, `secret`, `description`
 * for error messages) and, when its `Config` field is not the checked value as is, `to`, which
 * turns that value into the field (it runs only when the variable is set or has a default).
 * `group` puts the field inside `Config[group]` instead of at the top.
 */
interface Variable<Env extends string = string, Schema extends TSchema = TSchema, Field = unknown> {
  readonly env: Env;
  readonly schema: Schema;
  to?(value: Static<Schema>, name: Env): Field;
  readonly group?: string;
}

function variable<Env extends string, Schema extends TSchema>(env: Env, schema: Schema): Variable<Env, Schema, Static<Schema>>;
function variable<Env extends string, Schema extends TSchema, Field>(
  env: Env,
  schema: Schema,
  to: (value: Static<Schema>, name: Env) => Field,
): Variable<Env, Schema, Field>;
function variable(env: string, schema: TSchema, to?: (value: unknown, name: string) => unknown): Variable {
  return to ? { env, schema, to } : { env, schema };
}

/** "true" or "false", as written in the environment; the field is a boolean. */
const flag = <Env extends string>(env: Env, fallback: boolean) =>
  variable(
    env,
    Type.Union([Type.Literal('true'), Type.Literal('false')], { default: String(fallback), description: 'true or false' }),
    (value) => value === 'true',
  );

/** A field of `Config.alertThresholds`: a decimal like 0.5 in the environment, in hundredths (50) in the field, between min and max hundredths. */
const alertThreshold = <Env extends string>(env: Env, fallback: string, min: number, max: number) => ({
  ...variable(env, Type.String({ pattern: HUNDREDTHS, default: fallback }), (value, name) => hundredths(name, value, min, max)),
  group: 'alertThresholds' as const,
});

/** A field of `Config.traces`. */
function traces<Env extends string, Schema extends TSchema>(env: Env, schema: Schema): Variable<Env, Schema, Static<Schema>> & { group: 'traces' };
function traces<Env extends string, Schema extends TSchema, Field>(
  env: Env,
  schema: Schema,
  to: (value: Static<Schema>, name: Env) => Field,
): Variable<Env, Schema, Field> & { group: 'traces' };
function traces(env: string, schema: TSchema, to?: (value: unknown, name: string) => unknown) {
  return { ...(to ? variable(env, schema, to) : variable(env, schema)), group: 'traces' as const };
}
const OTLP_URL = '^https?://[^\\s]+$';

/**
 * Every variable, once: the key is its `Config` field, the entry its environment variable
 * (`Config`'s type and `EnvSchema` are both computed from this table). A new variable is one
 * entry here; an optional schema makes an optional field. Exported for
 * test/ops/config-shape.test.ts, which checks that the table and `Config` agree.
 */
export const VARIABLES = {
  port: variable('PORT', Type.Integer({ minimum: 0, maximum: 65535, default: 3000 })),
  host: variable('HOST', Type.String({ minLength: 1, default: '127.0.0.1' })),
  databaseUrl: variable('DATABASE_URL', Type.Optional(secret(Type.String({ pattern: '^postgres(ql)?://', description: 'a postgres:// URL' })))),
  dataDir: variable('DATA_DIR', Type.String({ minLength: 1, default: './data' })),
  redisUrl: variable('REDIS_URL', Type.Optional(secret(Type.String({ pattern: '^rediss?://', description: 'a redis:// or rediss:// URL' })))),
  /** Each Redis command's bound (issue 54's name; REDIS_COMMAND_TIMEOUT_MS, its first name, is read too: ALIASES). */
  redisTimeoutMs: variable('REDIS_TIMEOUT_MS', Type.Integer({ minimum: 50, maximum: 60_000, default: 1_000 })),
  redisKeyPrefix: variable(
    'REDIS_KEY_PREFIX',
    Type.Optional(Type.String({ pattern: '^[\\x21-\\x7e]{1,64}$', description: '1-64 printable characters without spaces, like myapp:' })),
  ),
  logLevel: variable(
    'LOG_LEVEL',
    Type.Union(
      ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'].map((l) => Type.Literal(l)),
      { default: 'info' },
    ),
    // TypeBox types a union built from an array as `never`: the field is a string.
    (level): string => level,
  ),
  bodyLimitBytes: variable('BODY_LIMIT_BYTES', Type.Integer({ minimum: 1024, maximum: 10 * 1024 * 1024, default: 64 * 1024 })),
  idempotencyRetentionHours: variable('IDEMPOTENCY_RETENTION_HOURS', Type.Number({ exclusiveMinimum: 0, default: 24 })),
  keyCacheTtlMs: variable('KEY_CACHE_TTL_MS', Type.Integer({ minimum: 0, maximum: 5000, default: 2000 })),
  authFailuresPerMinute: variable('AUTH_FAILURES_PER_MINUTE', Type.Integer({ minimum: 1, default: 30 })),
  /**
   * Addresses and CIDRs (IPv4, IPv6) of the reverse proxies in front of the service, for Fastify's
   * `trustProxy`: `request.ip` is then the client address they report in X-Forwarded-For. Unset: none.
   */
  trustProxy: variable(
    'TRUST_PROXY',
    Type.Optional(Type.String({ minLength: 1, maxLength: 4096, description: 'a comma-separated list of proxy addresses or CIDRs' })),
    (list) => list.split(',').map((entry) => entry.trim()),
  ),
  dbPoolMax: variable('DB_POOL_MAX', Type.Integer({ minimum: 1, maximum: 500, default: 10 })),
  dbStatementTimeoutMs: variable('DB_STATEMENT_TIMEOUT_MS', Type.Integer({ minimum: 100, default: 10_000 })),
  requestTimeoutMs: variable('REQUEST_TIMEOUT_MS', Type.Integer({ minimum: 100, default: 30_000 })),
  /** A request's headers must have arrived within this time on the public listener, else 408 (at most REQUEST_TIMEOUT_MS). */
  headersTimeoutMs: variable('HEADERS_TIMEOUT_MS', Type.Integer({ minimum: 100, maximum: 600_000, default: 5_000 })),
  /** Open connections of the public listener at once; more are closed as they arrive. */
  maxConnections: variable('MAX_CONNECTIONS', Type.Integer({ minimum: 1, maximum: 1_000_000, default: 1024 })),
  /** Open connections of the public listener from one remote address (a TRUST_PROXY proxy's are not counted); more from it are closed. */
  maxConnectionsPerAddress: variable('MAX_CONNECTIONS_PER_ADDRESS', Type.Integer({ minimum: 1, maximum: 1_000_000, default: 128 })),
  metricsPort: variable('METRICS_PORT', Type.Optional(Type.Integer({ minimum: 1, maximum: 65535 }))),
  workers: variable('WORKERS', Type.Integer({ minimum: 1, maximum: 64, default: 1 })),
  /** A new worker of a rolling restart must stay up this long after it is ready before the next old one is replaced. */
  rollSettleMs: variable('ROLL_SETTLE_MS', Type.Integer({ minimum: 0, maximum: 600_000, default: 10_000 })),
  /** With WORKERS: this many worker exits within WORKER_CRASH_WINDOW_MS make the primary stop and exit 1. */
  workerCrashLimit: variable('WORKER_CRASH_LIMIT', Type.Integer({ minimum: 1, maximum: 1000, default: 5 })),
  workerCrashWindowMs: variable('WORKER_CRASH_WINDOW_MS', Type.Integer({ minimum: 1000, maximum: 3_600_000, default: 60_000 })),
  /** Upper bound on a shutdown, counted from SIGTERM/SIGINT (shutdownDelayMs included): past it the process exits 1. */
  shutdownGraceMs: variable('SHUTDOWN_GRACE_MS', Type.Integer({ minimum: 1000, maximum: 600_000, default: 10_000 })),
  /** From the signal on, /readyz answers 503 while the port still serves this long (load balancers catch up), then it closes. */
  shutdownDelayMs: variable('SHUTDOWN_DELAY_MS', Type.Integer({ minimum: 0, maximum: 600_000, default: 0 })),
  maxEventLoopDelayMs: variable('MAX_EVENT_LOOP_DELAY_MS', Type.Integer({ minimum: 0, default: 1000 })),
  commentCursorSecret: variable('COMMENT_CURSOR_SECRET', Type.Optional(secret(Type.String({ minLength: 32 })))),
  /** Hours after a week ends before its comments are released (late syncs still join it). */
  commentsReleaseDelayHours: variable('COMMENTS_RELEASE_DELAY_HOURS', Type.Number({ minimum: 0, maximum: 720, default: 24 })),
  /**
   * Requests to the check-in page's three endpoints (open, issue, answer) per client address and
   * minute, counted in each process's memory (CONTRACT.md section 12): an office behind one NAT
   * address opens its links at the round's hour.
   */
  checkinRequestsPerMinute: variable('CHECKIN_REQUESTS_PER_MINUTE', Type.Integer({ minimum: 1, maximum: 1_000_000, default: 600 })),
  /** Requests to /scim/v2 per SCIM token and minute, counted in each process's memory (issue 56). */
  scimRequestsPerMinute: variable('SCIM_REQUESTS_PER_MINUTE', Type.Integer({ minimum: 1, maximum: 1_000_000, default: 1200 })),
  /** Minutes between alert engine runs in each server process; 0 turns the schedule off. */
  alertsIntervalMinutes: variable('ALERTS_INTERVAL_MINUTES', Type.Integer({ minimum: 0, maximum: 10_080, default: 60 })),
  /** A week is closed (evaluated) this many minutes after the next Monday 00:00 UTC. */
  alertsCloseDelayMinutes: variable('ALERTS_CLOSE_DELAY_MINUTES', Type.Integer({ minimum: 0, maximum: 10_080, default: 60 })),
  /** Alert thresholds, `Config.alertThresholds`, in hundredths (0.5 -> 50), compared exactly. */
  moodDrop: alertThreshold('ALERTS_MOOD_DROP', '0.5', 1, 400),
  lowMood: alertThreshold('ALERTS_LOW_MOOD', '2.5', 100, 500),
  participationDrop: alertThreshold('ALERTS_PARTICIPATION_DROP', '0.5', 1, 100),
  /** The operator API's TCP listener (CONTRACT.md section 10): on adminPort at adminHost, only when adminToken is set too. */
  adminPort: variable('ADMIN_PORT', Type.Optional(Type.Integer({ minimum: 0, maximum: 65535 }))),
  adminHost: variable('ADMIN_HOST', Type.String({ minLength: 1, default: '127.0.0.1' })),
  adminToken: variable('ADMIN_TOKEN', Type.Optional(secret(Type.String({ minLength: 32, maxLength: 512, pattern: '^[\\x21-\\x7e]+$' })))),
  /** Open connections of each operator listener (TCP and the Unix socket, docs/security.md) at once; more are closed as they arrive. */
  adminMaxConnections: variable('ADMIN_MAX_CONNECTIONS', Type.Integer({ minimum: 1, maximum: 100_000, default: 64 })),
  /** A request's headers must have arrived within this time on an operator listener, else 408. */
  adminHeadersTimeoutMs: variable('ADMIN_HEADERS_TIMEOUT_MS', Type.Integer({ minimum: 100, maximum: 600_000, default: 10_000 })),
  /** A request body that stops arriving for this long on an operator listener: 408, connection closed. */
  adminBodyIdleTimeoutMs: variable('ADMIN_BODY_IDLE_TIMEOUT_MS', Type.Integer({ minimum: 100, maximum: 3_600_000, default: 30_000 })),
  /** The largest file the operator API's import accepts (its temporary copy on disk). */
  importMaxBytes: variable('IMPORT_MAX_BYTES', Type.Integer({ minimum: 1024, maximum: 2 ** 40, default: 2 * 1024 ** 3 })),
  /** The longest NDJSON line or CSV record of any import; a longer one refuses the whole file. */
  importMaxLineBytes: variable('IMPORT_MAX_LINE_BYTES', Type.Integer({ minimum: 1024, maximum: 64 * 1024 ** 2, default: 1024 ** 2 })),
  webhookPollMs: variable('WEBHOOK_POLL_MS', Type.Integer({ minimum: 10, maximum: 60_000, default: 1000 })),
  webhookTimeoutMs: variable('WEBHOOK_TIMEOUT_MS', Type.Integer({ minimum: 100, maximum: 60_000, default: 15_000 })),
  /** Webhooks may go to http:// receivers and to loopback and private addresses: local development only (a warning at start). */
  webhookAllowPrivate: flag('WEBHOOK_ALLOW_PRIVATE', false),
  /**
   * The waits before each retry (the first attempt is immediate), durations like 500ms, 5s, 5m, 2h,
   * in milliseconds; its length is the number of retries.
   */
  webhookRetryScheduleMs: variable(
    'WEBHOOK_RETRY_SCHEDULE',
    Type.String({ pattern: '^\\s*\\d+(ms|s|m|h)\\s*(,\\s*\\d+(ms|s|m|h)\\s*)*$', default: '5s,5m,30m,2h,5h,10h,10h' }),
    parseDurations,
  ),
  /**
   * Where clients reach the service (https://api.example.com), without `/v1`: the OpenAPI document's
   * servers become absolute. Unset: they are relative.
   */
  publicBaseUrl: variable('PUBLIC_BASE_URL', Type.Optional(Type.String({ pattern: '^https?://[^\\s/?#]+(/[^\\s?#]*)?$', maxLength: 2048 }))),
  /** The mail relay (smtp:// or smtps://, credentials in the URL): console invitations go by email, their link shown to nobody. */
  smtpUrl: variable('SMTP_URL', Type.Optional(Type.String({ pattern: '^smtps?://[^\\s]+$', maxLength: 2048 }))),
  /** The sender of the service's mail (required with SMTP_URL), e.g. "Climate Pulse <console@example.com>". */
  mailFrom: variable('MAIL_FROM', Type.Optional(Type.String({ minLength: 3, maxLength: 320 }))),
  /**
   * OpenTelemetry traces (docs/deployment.md, "Traces"), `Config.traces`: on when an OTLP endpoint is
   * set or OTEL_TRACES_EXPORTER is `otlp`, off (no SDK loaded) otherwise; the standard names, fewer values.
   */
  otlpEndpoint: traces(
    'OTEL_EXPORTER_OTLP_ENDPOINT',
    Type.Optional(Type.String({ pattern: OTLP_URL, maxLength: 2048, description: 'an http:// or https:// URL' })),
  ),
  otlpTracesEndpoint: traces(
    'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT',
    Type.Optional(Type.String({ pattern: OTLP_URL, maxLength: 2048, description: 'an http:// or https:// URL' })),
  ),
  tracesExporter: traces('OTEL_TRACES_EXPORTER', Type.Optional(Type.Union([Type.Literal('otlp'), Type.Literal('none')], { description: 'otlp or none' }))),
  otlpProtocol: traces(
    'OTEL_EXPORTER_OTLP_PROTOCOL',
    Type.Union([Type.Literal('http/protobuf'), Type.Literal('http/json')], { default: 'http/protobuf', description: 'http/protobuf or http/json (not grpc)' }),
  ),
  /** Headers of every export (a vendor's API key): `key=value,key2=value2`, values percent-encoded. */
  otlpHeaders: traces(
    'OTEL_EXPORTER_OTLP_HEADERS',
    Type.Optional(
      secret(
        Type.String({ pattern: '^\\s*[^\\s=,]+\\s*=[^,]*(,\\s*[^\\s=,]+\\s*=[^,]*)*$', maxLength: 8192, description: 'a comma-separated list of key=value' }),
      ),
    ),
    parseOtlpHeaders,
  ),
  serviceName: traces('OTEL_SERVICE_NAME', Type.String({ minLength: 1, maxLength: 255, default: 'climate-pulse' })),
  /** Whether a trace is kept is drawn from its random trace id, never from the request (no incoming trace context is read). */
  sampler: traces(
    'OTEL_TRACES_SAMPLER',
    Type.Union([Type.Literal('parentbased_always_on'), Type.Literal('parentbased_traceidratio')], {
      default: 'parentbased_always_on',
      description: 'parentbased_always_on or parentbased_traceidratio',
    }),
  ),
  samplerRatio: traces('OTEL_TRACES_SAMPLER_ARG', Type.Number({ minimum: 0, maximum: 1, default: 1 })),
};

type Variables = typeof VARIABLES;

/** The environment's schema, computed from the table: each variable's name and schema, in the table's order. */
export const EnvSchema = Type.Object(envProperties(VARIABLES));

type EnvProperties<V extends Record<string, Variable>> = { [K in keyof V as V[K]['env']]: V[K]['schema'] };

function envProperties<V extends Record<string, Variable>>(table: V): EnvProperties<V> {
  return Object.fromEntries(Object.values(table).map((v) => [v.env, v.schema])) as EnvProperties<V>;
}

type Env = Static<typeof EnvSchema>;

// The type of `Config`, computed from the table: a field's type is what `to` returns (else the
// schema's), optional when its schema is; the fields of a group are gathered into that group.
type FieldType<V> = V extends Variable<string, TSchema, infer Field> ? Field : never;
type IsOptional<V> = V extends { readonly schema: TOptional<TSchema> } ? true : false;
type GroupOf<V> = V extends { readonly group: infer Group extends string } ? Group : never;
type Ungrouped<V> = { [K in keyof V as V[K] extends { readonly group: string } ? never : K]: V[K] };
type Grouped<V, Group> = { [K in keyof V as V[K] extends { readonly group: Group } ? K : never]: V[K] };
type Fields<V> = { -readonly [K in keyof V as IsOptional<V[K]> extends true ? never : K]: FieldType<V[K]> } & {
  -readonly [K in keyof V as IsOptional<V[K]> extends true ? K : never]?: FieldType<V[K]>;
};
type Flatten<T> = { [K in keyof T]: T[K] };
type ConfigOf<V> = Flatten<Fields<Ungrouped<V>> & { -readonly [Group in GroupOf<V[keyof V]>]: Flatten<Fields<Grouped<V, Group>>> }>;

/** What the rest of the service receives: one field per entry of the table above. */
export interface Config extends ConfigOf<Variables> {}

export class ConfigError extends PlainError {}

/**
 * Former names still read, each for the variable it became: set alone, it is that variable; set
 * beside it with another value, the start is refused rather than one of them silently ignored.
 */
export const ALIASES: Readonly<Record<string, string>> = { REDIS_COMMAND_TIMEOUT_MS: 'REDIS_TIMEOUT_MS' };

export function loadConfig(env: Record<string, string | undefined> = process.env): Config {
  const known: Record<string, unknown> = {};
  for (const name of Object.keys(EnvSchema.properties)) {
    const raw = env[name];
    if (raw !== undefined && raw !== '') known[name] = raw;
  }
  const asFormerName: Record<string, string> = {};
  for (const [old, name] of Object.entries(ALIASES)) {
    const raw = env[old];
    if (raw === undefined || raw === '') continue;
    if (known[name] !== undefined && known[name] !== raw) {
      throw new ConfigError(`invalid configuration: ${old} (the former name of ${name}) and ${name} are both set, to different values; set ${name} only`);
    }
    if (known[name] === undefined) asFormerName[name] = old;
    known[name] = raw;
  }
  const withDefaults = Value.Default(EnvSchema, known);
  const converted = Value.Convert(EnvSchema, withDefaults) as Env;
  const first = Value.Errors(EnvSchema, converted)[0];
  if (first) {
    const name = first.instancePath.replace(/^\//, '');
    const former = asFormerName[name] ? ` (set as ${asFormerName[name]}, its former name)` : '';
    throw new ConfigError(describeError(name, known, first.message) + former);
  }
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

/**
 * Where invitation links point: the public address (PUBLIC_BASE_URL), else the public listener's
 * own HOST and PORT, which is what `npm start` serves. Read by the faces (invitation and check-in
 * links, the console's curl line) and the jobs (the round's mails) alike, so it lives with the
 * configuration, below both.
 */
export function consoleBaseUrl(config: Pick<Config, 'publicBaseUrl' | 'host' | 'port'>): string {
  if (config.publicBaseUrl) return config.publicBaseUrl.replace(/\/+$/, '');
  const host = config.host.includes(':') ? `[${config.host}]` : config.host === '0.0.0.0' ? '127.0.0.1' : config.host;
  return `http://${host}:${config.port}`;
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

/** The checked environment as a `Config`: each entry of the table gives its field, through `to` when it has one. */
function fromEnv(env: Env): Config {
  const values: Record<string, unknown> = env;
  const table: Record<string, Variable> = VARIABLES;
  const config: Record<string, unknown> = {};
  const groups: Record<string, Record<string, unknown>> = {};
  for (const [field, { env: name, to, group }] of Object.entries(table)) {
    const value = values[name] !== undefined && to ? to(values[name], name) : values[name];
    if (group === undefined) {
      config[field] = value;
    } else {
      config[group] = groups[group] ??= {};
      groups[group][field] = value;
    }
  }
  // The shape is ConfigOf<Variables> by construction; test/ops/config-shape.test.ts checks it.
  return config as Config;
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

/** OTEL_EXPORTER_OTLP_HEADERS (its pattern checked): `a=1,b=x%20y` -> { a: '1', b: 'x y' }. */
export function parseOtlpHeaders(text: string): Record<string, string> {
  return Object.fromEntries(
    text.split(',').map((pair) => {
      const i = pair.indexOf('=');
      const value = pair.slice(i + 1).trim();
      let decoded = value;
      try {
        decoded = decodeURIComponent(value);
      } catch {
        /* not percent-encoded: taken as written */
      }
      return [pair.slice(0, i).trim(), decoded];
    }),
  );
}
