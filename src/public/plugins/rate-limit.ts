import { createHash } from 'node:crypto';
import { createRequire } from 'node:module';
import rateLimit from '@fastify/rate-limit';
import type { FastifyBaseLogger, FastifyInstance } from 'fastify';
import type { Redis } from 'ioredis';
import { ApiError } from '../../contract/errors.js';
import { addressKey } from '../../domain/addresses.js';

const require = createRequire(import.meta.url);
type Callback = (err: Error | null, res?: { current: number; ttl: number }) => void;
interface Store {
  incr(key: string, cb: Callback, timeWindow: number, max: number): void;
  read(key: string, cb: Callback, timeWindow: number, max: number): void;
}
// The library's own stores: its Lua script on Redis, its LRU in memory.
const RedisStore = require('@fastify/rate-limit/store/RedisStore.js') as new (ce: boolean, eb: boolean, redis: Redis, ns: string) => Store;
const LocalStore = require('@fastify/rate-limit/store/LocalStore.js') as new (ce: boolean, eb: boolean, cache: number) => Store;

export const WINDOW_MS = 60_000;

declare module 'ioredis' {
  interface RedisCommander {
    refundLimit(key: string): Promise<number>;
  }
}

/** Decrements a counter that exists and is above zero, atomically. */
const REFUND_LUA = `
  local current = tonumber(redis.call('GET', KEYS[1]) or '0')
  if current > 0 then return redis.call('DECR', KEYS[1]) end
  return 0
`;
const REDIS_RETRY_MS = 5_000;

/**
 * One counter space for the whole process: Redis when configured (shared by every server
 * process), and an in-memory fallback used while Redis cannot be reached, so the service
 * keeps answering with per-process limits (fail open to local limits). The outage and the
 * recovery are each logged once.
 */
export class LimitCounters {
  private readonly local: Store = new LocalStore(false, false, 50_000);
  private readonly shared?: Store;
  private downSince = 0;
  /** When commands began to time out on a connected client (a slow Redis, not a lost one); 0: none now. */
  private slowSince = 0;

  constructor(
    private readonly log: FastifyBaseLogger,
    readonly redis?: Redis,
    private readonly namespace = 'climate-pulse:rl:',
    private readonly timeoutMs = REDIS_TIMEOUT_MS,
  ) {
    if (redis) {
      this.shared = new RedisStore(false, false, redis, namespace);
      if (!redis.refundLimit) redis.defineCommand('refundLimit', { numberOfKeys: 1, lua: REFUND_LUA });
      if (redis.status !== 'ready') {
        // Said once, at start: until Redis answers, each process counts on its own.
        this.log.warn('rate limits: Redis is not reachable at start; limits are per process until it answers');
        this.downSince = Date.now();
      }
    }
  }

  /**
   * Gives back one unit of `key` in the store that counts now (a failed-authentication
   * reservation whose key turned out valid). Never below zero; a lost refund only makes the
   * limit stricter, so errors are ignored.
   */
  async refund(key: string): Promise<void> {
    const store = this.pick();
    if (store === this.shared) {
      await this.redis!.refundLimit(this.namespace + key).catch(() => {});
      return;
    }
    const entry = (this.local as unknown as { lru: { get(k: string): { current: number } | undefined } }).lru.get(key);
    if (entry && entry.current > 0) entry.current--;
  }

  private readonly localMarks = new Map<string, number>(); // key -> expiry (ms); oldest first

  /**
   * Sets `key` for `ttlMs` from now, in this process and, when Redis is up, in Redis. A lost mark
   * only makes the failed-authentication limit stricter, so Redis errors are ignored.
   */
  async mark(key: string, ttlMs: number): Promise<void> {
    this.localMarks.delete(key);
    if (this.localMarks.size >= 50_000) this.localMarks.delete(this.localMarks.keys().next().value!);
    this.localMarks.set(key, Date.now() + ttlMs);
    if (this.pick() === this.shared) await this.redis!.set(this.namespace + key, '1', 'PX', ttlMs).catch(() => {});
  }

  async marked(key: string): Promise<boolean> {
    if (this.pick() === this.shared) {
      const n = await this.redis!.exists(this.namespace + key).catch(() => null);
      if (n !== null) return n > 0;
    }
    const until = this.localMarks.get(key);
    return until !== undefined && until > Date.now();
  }

  async unmark(key: string): Promise<void> {
    this.localMarks.delete(key);
    if (this.shared) await this.redis!.del(this.namespace + key).catch(() => {});
  }

  private pick(): Store {
    if (!this.shared) return this.local;
    if (this.downSince && Date.now() - this.downSince < REDIS_RETRY_MS) return this.local;
    return this.shared;
  }

  private run(method: 'incr' | 'read', key: string, timeWindow: number, max: number): Promise<{ current: number; ttl: number }> {
    const store = this.pick();
    return new Promise((resolve, reject) => {
      store[method](
        key,
        (err, res) => {
          if (!err) {
            if (store === this.shared && this.downSince) {
              this.log.warn({ outageMs: Date.now() - this.downSince }, 'rate limits: Redis is reachable again; limits are shared again');
              this.downSince = 0;
            }
            if (store === this.shared && this.slowSince) {
              this.log.warn({ slowMs: Date.now() - this.slowSince }, 'rate limits: Redis answers in time again');
              this.slowSince = 0;
            }
            // A copy: the in-memory store hands out its live entry, which later requests change.
            return resolve({ current: res!.current, ttl: res!.ttl });
          }
          if (store !== this.shared) return reject(err);
          if (/timed out/i.test(err.message) && this.redis?.status === 'ready') {
            // One slow command is no outage: this request counts in this process, the next ones try Redis again.
            if (!this.slowSince) {
              this.slowSince = Date.now();
              this.log.warn(
                { err: err.message, timeoutMs: this.timeoutMs },
                'rate limits: Redis is slow (a command took longer than REDIS_TIMEOUT_MS); such requests count per process until it answers in time',
              );
            }
          } else {
            // Once per episode, at warn (the service keeps answering, on per-process limits); its end is logged too.
            if (!this.downSince) this.log.warn({ err: err.message }, 'rate limits: Redis unreachable; using per-process limits until it returns');
            this.downSince = Date.now();
          }
          this.local[method](key, (e, r) => (e ? reject(e) : resolve({ current: r!.current, ttl: r!.ttl })), timeWindow, max);
        },
        timeWindow,
        max,
      );
    });
  }

  incr = (key: string, timeWindow: number, max: number) => this.run('incr', key, timeWindow, max);
  read = (key: string, timeWindow: number, max: number) => this.run('read', key, timeWindow, max);

  /** The store contract of @fastify/rate-limit; `child` returns itself so one key has one limit across all routes. */
  asStore() {
    const store = {
      incr: (key: string, cb: Callback, timeWindow: number, max: number) => this.incr(key, timeWindow, max).then((r) => cb(null, r), cb),
      read: (key: string, cb: Callback, timeWindow: number, max: number) => this.read(key, timeWindow, max).then((r) => cb(null, r), cb),
      child: () => store,
    };
    // The plugin instantiates `store` with `new`; a constructor returning an object yields that object.
    return function SharedStore() {
      return store;
    } as unknown as new () => typeof store;
  }
}

/**
 * The default of REDIS_TIMEOUT_MS. It was a hard-coded 250 ms: during a rolling restart at
 * load 4.5 (issue 54) commands took longer and were logged as an outage while Redis was fine.
 * docs/scaling.md ("Redis") gives the measurement behind this value.
 */
export const REDIS_TIMEOUT_MS = 1_000;

export function connectRedis(url: string, opts: { commandTimeoutMs?: number; keyPrefix?: string } = {}): Redis {
  // Loaded here, when REDIS_URL is set: a server without Redis never loads the client (docs/decisions.md).
  const ioredis = require('ioredis') as typeof import('ioredis');
  return new ioredis.Redis(url, {
    enableOfflineQueue: false, // while disconnected a command fails at once instead of waiting
    maxRetriesPerRequest: 0,
    commandTimeout: opts.commandTimeoutMs ?? REDIS_TIMEOUT_MS,
    // Every key this service writes starts with it (several services, or two deployments, on one Redis).
    ...(opts.keyPrefix ? { keyPrefix: opts.keyPrefix } : {}),
    connectTimeout: 1_000,
    retryStrategy: (times) => Math.min(times * 200, 2_000),
    lazyConnect: false,
  }).on('error', () => {
    /* reported once by LimitCounters when a command fails */
  });
}

/**
 * Resolves once the client has passed its ready check, or after `ms`. Until then every command
 * fails at once (no offline queue), so a request served before would count per process for
 * the next 5 s; with Redis down at start the service starts anyway, on per-process limits.
 */
export function redisReady(redis: Redis, ms = 2_000): Promise<boolean> {
  if (redis.status === 'ready') return Promise.resolve(true);
  return new Promise((resolve) => {
    const onReady = () => {
      clearTimeout(timer);
      resolve(true);
    };
    const timer = setTimeout(() => {
      redis.off('ready', onReady);
      resolve(false);
    }, ms);
    redis.once('ready', onReady);
  });
}

const retryAfter = (ttlMs: number) => String(Math.max(1, Math.ceil(ttlMs / 1000)));

/** Per-key limit from the key's plan, after authentication and before validation (CONTRACT 2 and 7). */
export async function registerKeyRateLimit(scope: FastifyInstance, counters: LimitCounters) {
  await scope.register(rateLimit, {
    global: true,
    hook: 'onRequest',
    timeWindow: WINDOW_MS,
    max: (request) => request.principal.rateLimitPerMinute,
    keyGenerator: (request) => `key:${request.principal.orgId}:${request.principal.keyId}`,
    store: counters.asStore(),
    enableDraftSpec: true, // RateLimit-Limit, RateLimit-Remaining, RateLimit-Reset
    errorResponseBuilder: (_request, ctx) =>
      new ApiError('rate_limited', `Rate limit of ${ctx.max} requests a minute exceeded for this API key.`, {
        'retry-after': retryAfter(ctx.ttl),
      }),
  });
}

/** How long a key that authenticated from an address stays proven for it, and how often a process renews that. */
const PROVEN_MS = 24 * 3_600_000;
const RENEW_PROVEN_MS = 3_600_000;

/**
 * Failed authentications counted per client address, an IPv6 address by its /64 and an
 * IPv4-mapped one by its IPv4 address (addressKey, as the console's sign-in limits count them);
 * past the limit the address gets 429.
 * A request that will look a key up reserves its failure first (one atomic increment, in memory
 * or in Redis) and gives it back when the key is valid: however many requests arrive at once,
 * at most `perMinute` lookups start in a window (CONTRACT section 7).
 *
 * Past the limit, the address is still served with a key it has proven: one that authenticated
 * from this very address in the last 24 hours (docs/decisions.md, issue 26). Any other key is
 * refused without a lookup, so the limit still bounds guessing; a client behind the same address
 * as a guesser keeps working with the key it was using.
 */
export class AuthFailureLimiter {
  private readonly renewed = new Map<string, number>(); // proof -> when this process last marked it

  constructor(
    private readonly counters: LimitCounters,
    private readonly perMinute: number,
  ) {}

  refuse(ttl: number): never {
    throw new ApiError('rate_limited', 'Too many failed authentications from this address; wait before retrying.', {
      'retry-after': retryAfter(ttl),
    });
  }

  /** The time left (ms) when the address is at the limit, else null. */
  async overLimit(ip: string): Promise<number | null> {
    const { current, ttl } = await this.counters.read(`authfail:${addressKey(ip)}`, WINDOW_MS, this.perMinute);
    return current >= this.perMinute ? ttl : null;
  }

  /** Counts one failure now; 429 when it is past the limit (else the caller answers 401). */
  async failed(ip: string) {
    const { current, ttl } = await this.counters.incr(`authfail:${addressKey(ip)}`, WINDOW_MS, this.perMinute);
    if (current > this.perMinute) this.refuse(ttl);
  }

  /** Reserves a failure before a lookup: the same as `failed`, undone by `refund` if the key is valid. */
  reserve(ip: string) {
    return this.failed(ip);
  }

  refund(ip: string) {
    return this.counters.refund(`authfail:${addressKey(ip)}`);
  }

  /**
   * The mark of (address, key): a digest of both, so the counter store holds neither the key nor
   * the hash the database keeps of it.
   */
  private proof(ip: string, secret: string): string {
    return `authok:${createHash('sha256').update(`${ip}\n${secret}`, 'utf8').digest('base64url').slice(0, 22)}`;
  }

  /** Whether `secret` authenticated from `ip` in the last 24 hours. */
  proven(ip: string, secret: string): Promise<boolean> {
    return this.counters.marked(this.proof(ip, secret));
  }

  /** Records that `secret` authenticated from `ip`: renewed at most once an hour per process, so a busy key costs nothing more. */
  async prove(ip: string, secret: string): Promise<void> {
    const key = this.proof(ip, secret);
    const now = Date.now();
    const last = this.renewed.get(key);
    if (last !== undefined && now - last < RENEW_PROVEN_MS) return;
    if (this.renewed.size >= 10_000) this.renewed.clear();
    this.renewed.set(key, now);
    await this.counters.mark(key, PROVEN_MS);
  }

  /** A proven key that is no longer valid (revoked, expired) proves nothing any more. */
  forget(ip: string, secret: string): Promise<void> {
    const key = this.proof(ip, secret);
    this.renewed.delete(key);
    return this.counters.unmark(key);
  }
}
