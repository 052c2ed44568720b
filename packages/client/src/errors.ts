import type { components } from './schema.js';

/**
 * The error codes of the API (its closed list, from the OpenAPI document), the client's own two,
 * and any other string (a newer server may know more).
 */
export type ErrorCode =
  | components['schemas']['ApiError']['error']['code']
  /** No answer: the connection failed, was dropped, or timed out (status 0). */
  | 'network_error'
  /** An answer that is not the API's error shape (a proxy's page, say). */
  | 'unexpected_response'
  | (string & {});

/**
 * Every failure the client reports: an error answer of the API (after any retries), or a
 * request that got no answer at all (`status` 0, `code` 'network_error').
 */
export class ClimatePulseError extends Error {
  override readonly name = 'ClimatePulseError';
  readonly status: number;
  readonly code: ErrorCode;
  /** The answer's `X-Request-Id`: quote it when asking about a request. Null without an answer. */
  readonly requestId: string | null;
  /** How many attempts were made, retries included. */
  readonly attempts: number;

  constructor(init: { status: number; code: ErrorCode; message: string; requestId: string | null; attempts: number; cause?: unknown }) {
    super(init.message, init.cause === undefined ? undefined : { cause: init.cause });
    this.status = init.status;
    this.code = init.code;
    this.requestId = init.requestId;
    this.attempts = init.attempts;
  }
}
