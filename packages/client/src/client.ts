import createClient, { type Client } from 'openapi-fetch';
import { EtagCache, type EtagCacheOptions } from './cache.js';
import { ClimatePulseError } from './errors.js';
import { PagedList } from './paginate.js';
import { attemptsOf, DEFAULT_RETRY, retryingFetch, type RetryOptions } from './retry.js';
import type { components, operations, paths } from './schema.js';

type Schemas = components['schemas'];
type Query<O extends keyof operations> = NonNullable<operations[O]['parameters']['query']>;

// The API's shapes, named as in the OpenAPI document's components.
export type Organization = Schemas['Organization'];
/** @deprecated Use `Organization`. */
export type Org = Organization;
export type Stats = Schemas['Stats'];
export type DailyStats = Schemas['DailyStats'];
export type DailyStatsDay = Schemas['DailyStatsDay'];
export type Pulse = Schemas['Pulse'];
export type PulsePage = Schemas['PulsePage'];
/** @deprecated Use `PulsePage`. */
export type PulseList = PulsePage;
export type Comment = Schemas['Comment'];
export type CommentPage = Schemas['CommentPage'];
/** @deprecated Use `CommentPage`. */
export type CommentList = CommentPage;
export type Alert = Schemas['Alert'];
export type AlertList = Schemas['AlertList'];
export type Team = Schemas['Team'];
export type TeamList = Schemas['TeamList'];
export type NewTeam = Schemas['NewTeam'];
export type CreatedTeam = Schemas['CreatedTeam'];
export type Action = Schemas['Action'];
export type ActionStatus = Schemas['ActionStatus'];
export type ActionList = Schemas['ActionList'];
export type NewAction = Schemas['NewAction'];
export type ActionChange = Schemas['ActionChange'];
export type ActionId = Schemas['ActionId'];
/** The error body of every failed request. */
export type ApiErrorBody = Schemas['ApiError'];
export type PulseQuery = Omit<Query<'listPulses'>, 'cursor'>;
export type CommentQuery = Omit<Query<'listComments'>, 'cursor'>;
export type DailyStatsQuery = Query<'getDailyStats'>;
export type AlertQuery = Query<'listAlerts'>;

/** The page size `pulses.list` asks for unless told otherwise: the API's largest. */
export const PULSES_PAGE_SIZE = 200;

export interface ClientOptions {
  /** The service, e.g. `http://127.0.0.1:3000`; `/v1` is added unless the URL ends with `/v1`. */
  baseUrl: string;
  /** An API key of the organization (`cp_live_...`). */
  apiKey: string;
  retry?: RetryOptions;
  /** Per attempt, in ms (default 30000). */
  timeoutMs?: number;
  /** The `fetch` to use (default: Node's). */
  fetch?: typeof globalThis.fetch;
  onRetry?: Parameters<typeof retryingFetch>[0]['onRetry'];
  /**
   * Send `If-None-Match` on GETs with the ETag of the last answer to the same URL, and reuse that
   * answer when the server says 304 (nothing changed, no body sent). `true` or options; off by default.
   */
  etagCache?: boolean | EtagCacheOptions;
}

export interface WriteOptions {
  /** Sent as `Idempotency-Key`; a fresh random one when not given. Kept across retries. */
  idempotencyKey?: string;
  signal?: AbortSignal;
}

/** A new Idempotency-Key: a random UUID (36 characters of the allowed set). */
export function newIdempotencyKey(): string {
  return globalThis.crypto.randomUUID();
}

type Result<T> = { data?: T; error?: unknown; response: Response };

/** Returns the data of a 2xx answer, or throws ClimatePulseError. */
async function unwrap<T>(call: Promise<Result<T>>): Promise<T> {
  const { data, error, response } = await call;
  if (response.ok && error === undefined) return data as T;
  const requestId = response.headers.get('x-request-id');
  const attempts = attemptsOf.get(response) ?? 1;
  const e = (error as { error?: { code?: unknown; message?: unknown } } | undefined)?.error;
  if (e && typeof e.code === 'string' && typeof e.message === 'string') {
    throw new ClimatePulseError({ status: response.status, code: e.code, message: e.message, requestId, attempts });
  }
  throw new ClimatePulseError({
    status: response.status,
    code: 'unexpected_response',
    message: `HTTP ${response.status} without an API error body`,
    requestId,
    attempts,
  });
}

/**
 * The Climate Pulse API from TypeScript. Lists that span pages are `PagedList`s:
 * `for await (const p of client.pulses.list({ from }))`. Writes carry an Idempotency-Key;
 * network errors, 429 and 503 are retried with backoff (see retry.ts).
 */
export class ClimatePulseClient {
  /** The typed openapi-fetch client underneath, with the same retries, for anything not wrapped here. */
  readonly raw: Client<paths>;
  /** The If-None-Match cache when `etagCache` is on. */
  readonly etagCache?: EtagCache;

  constructor(opts: ClientOptions) {
    const root = opts.baseUrl.replace(/\/+$/, '');
    const baseUrl = /\/v1$/.test(root) ? root : `${root}/v1`;
    const transport = retryingFetch({
      fetch: opts.fetch ?? globalThis.fetch,
      retry: { ...DEFAULT_RETRY, ...opts.retry },
      timeoutMs: opts.timeoutMs ?? 30_000,
      onRetry: opts.onRetry,
    });
    if (opts.etagCache) this.etagCache = new EtagCache(opts.etagCache === true ? {} : opts.etagCache);
    this.raw = createClient<paths>({
      baseUrl,
      fetch: this.etagCache ? this.etagCache.wrap(transport) : transport,
      headers: { authorization: `Bearer ${opts.apiKey}`, 'user-agent': 'climate-pulse-client/1.1.0' },
    });
  }

  readonly org = {
    get: (opts: { signal?: AbortSignal } = {}): Promise<Organization> => unwrap(this.raw.GET('/org', { signal: opts.signal })),
  };

  readonly stats = {
    get: (opts: { signal?: AbortSignal } = {}): Promise<Stats> => unwrap(this.raw.GET('/stats', { signal: opts.signal })),
    daily: (query: DailyStatsQuery = {}, opts: { signal?: AbortSignal } = {}): Promise<DailyStats> =>
      unwrap(this.raw.GET('/stats/daily', { params: { query }, signal: opts.signal })),
  };

  readonly pulses = {
    /**
     * Every pulse matching `query`, newest first, over as many pages as it takes: pages of 200
     * (the API's largest) unless `query.limit` says otherwise.
     */
    list: (query: PulseQuery = {}, opts: { signal?: AbortSignal } = {}): PagedList<Pulse, PulsePage> =>
      new PagedList((cursor) => this.pulses.page({ limit: PULSES_PAGE_SIZE, ...query, cursor }, opts)),
    /** One page (the API's default size, 50, unless `query.limit` is given). */
    page: (query: Query<'listPulses'> = {}, opts: { signal?: AbortSignal } = {}): Promise<PulsePage> =>
      unwrap(this.raw.GET('/pulses', { params: { query }, signal: opts.signal })),
  };

  readonly comments = {
    /** Every released comment of the range, over as many pages as it takes. */
    list: (query: CommentQuery = {}, opts: { signal?: AbortSignal } = {}): PagedList<Comment, CommentPage> =>
      new PagedList((cursor) => this.comments.page({ ...query, cursor }, opts)),
    page: (query: Query<'listComments'> = {}, opts: { signal?: AbortSignal } = {}): Promise<CommentPage> =>
      unwrap(this.raw.GET('/comments', { params: { query }, signal: opts.signal })),
  };

  readonly alerts = {
    /** The most recent alerts (at most 50; the endpoint has no further pages). */
    list: async (query: AlertQuery = {}, opts: { signal?: AbortSignal } = {}): Promise<Alert[]> =>
      (await unwrap(this.raw.GET('/alerts', { params: { query }, signal: opts.signal }))).items,
  };

  readonly teams = {
    list: async (opts: { signal?: AbortSignal } = {}): Promise<Team[]> => (await unwrap(this.raw.GET('/teams', { signal: opts.signal }))).items,
    create: (body: NewTeam, opts: WriteOptions = {}): Promise<CreatedTeam> =>
      unwrap(
        this.raw.POST('/teams', {
          params: { header: { 'idempotency-key': opts.idempotencyKey ?? newIdempotencyKey() } },
          body,
          signal: opts.signal,
        }),
      ),
  };

  readonly actions = {
    list: async (opts: { signal?: AbortSignal } = {}): Promise<Action[]> => (await unwrap(this.raw.GET('/actions', { signal: opts.signal }))).items,
    create: (body: NewAction, opts: WriteOptions = {}): Promise<ActionId> =>
      unwrap(
        this.raw.POST('/actions', {
          params: { header: { 'idempotency-key': opts.idempotencyKey ?? newIdempotencyKey() } },
          body,
          signal: opts.signal,
        }),
      ),
    /**
     * Edit fields, `null` clears description, endDate or subteamId; `status`: active -> done or
     * cancelled and back to active (done <-> cancelled is 409 invalid_transition).
     */
    update: (id: string, change: ActionChange, opts: { signal?: AbortSignal } = {}): Promise<ActionId> =>
      unwrap(this.raw.PATCH('/actions/{id}', { params: { path: { id } }, body: change, signal: opts.signal })),
  };
}
