export * from './client.js';
export { EtagCache, type EtagCacheOptions } from './cache.js';
export { ClimatePulseError, type ErrorCode } from './errors.js';
export { PagedList, type Page } from './paginate.js';
export { parseRetryAfter, type RetryOptions } from './retry.js';
export type { components, operations, paths } from './schema.js';
