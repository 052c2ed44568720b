/**
 * The closed list of error codes (CONTRACT.md section 3). Every error body the service
 * sends is built from an `ApiError` by the one error handler.
 */
export const ERROR_STATUS = {
  invalid_request: 400,
  invalid_json: 400,
  invalid_cursor: 400,
  idempotency_key_required: 400,
  invalid_idempotency_key: 400,
  payload_too_large: 400,
  unauthorized: 401,
  plan_forbidden: 403,
  insufficient_scope: 403,
  org_not_found: 404,
  not_found: 404,
  idempotency_key_reused: 409,
  team_name_taken: 409,
  invalid_transition: 409,
  pulse_conflict: 409,
  rate_limited: 429,
  internal_error: 500,
  service_unavailable: 503,
} as const;

export type ErrorCode = keyof typeof ERROR_STATUS;

/**
 * An error whose message is the whole story for whoever reads it: a client (as an error body) or
 * an operator at a terminal (one line, exit 1), never with a stack. The domain throws only
 * ApiError; the command line's own errors (CliError), a configuration error and a data directory
 * that cannot be used are PlainErrors too, so every face has one path to print them.
 */
export class PlainError extends Error {}

/** The one error type of the domain: a code from the closed list, translated to HTTP in errors.ts. */
export class ApiError extends PlainError {
  readonly statusCode: number;
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(message.length > 500 ? `${message.slice(0, 497)}...` : message);
    this.statusCode = ERROR_STATUS[code];
  }
}

export const invalid = (message: string) => new ApiError('invalid_request', message);
export const notFound = (what = 'Resource') => new ApiError('not_found', `${what} not found.`);
