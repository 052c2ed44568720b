import { createHash } from 'node:crypto';
import type { DatabaseExecutor, Queryable } from '../db/executor.js';
import { claimIdempotencyKey, completeIdempotencyKey, readIdempotencyKey, type IdempotencyScope } from '../db/repositories/idempotency.js';
import { ApiError } from '../contract/errors.js';

const KEY = /^[A-Za-z0-9._:-]{8,128}$/;

export function checkIdempotencyKey(value: string | string[] | undefined): string {
  if (value === undefined || value === '') {
    throw new ApiError('idempotency_key_required', "Send an 'Idempotency-Key' header (8-128 characters of A-Z a-z 0-9 . _ : -).");
  }
  if (typeof value !== 'string' || !KEY.test(value)) {
    throw new ApiError('invalid_idempotency_key', "'Idempotency-Key' must be 8-128 characters of A-Z a-z 0-9 . _ : -.");
  }
  return value;
}

/** JSON with keys sorted at every depth, so that key order does not change the fingerprint. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value && typeof value === 'object') {
    const entries = Object.keys(value as object)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonicalJson((value as Record<string, unknown>)[k])}`);
    return `{${entries.join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

export const bodySha256 = (body: unknown) =>
  createHash('sha256')
    .update(canonicalJson(body ?? null))
    .digest('hex');

export interface Outcome<T> {
  statusCode: number;
  body: T;
  replayed: boolean;
}

/**
 * Runs `create` at most once per (organization, API key, Idempotency-Key). The record and the
 * resource are written in one transaction; a concurrent duplicate waits for the first
 * transaction and replays its answer. A failed attempt leaves no record, so it can be retried.
 */
export async function once<T>(
  db: DatabaseExecutor,
  scope: IdempotencyScope,
  request: { method: string; path: string; body: unknown },
  create: (tx: Queryable) => Promise<T>,
): Promise<Outcome<T>> {
  const fingerprint = { method: request.method, path: request.path, bodySha256: bodySha256(request.body) };
  for (let attempt = 0; attempt < 3; attempt++) {
    const result = await db.transaction(async (tx) => {
      if (await claimIdempotencyKey(tx, scope, fingerprint)) {
        const body = await create(tx);
        await completeIdempotencyKey(tx, scope, 200, JSON.stringify(body));
        return { statusCode: 200, body, replayed: false } as Outcome<T>;
      }
      return readIdempotencyKey(tx, scope);
    });
    if (result === null) continue; // the holder rolled back between our claim and our read: claim again
    if ('replayed' in result) return result;
    if (result.method !== fingerprint.method || result.path !== fingerprint.path || result.bodySha256 !== fingerprint.bodySha256) {
      throw new ApiError('idempotency_key_reused', 'This Idempotency-Key was used for a different request; use a new key.');
    }
    return { statusCode: result.statusCode, body: JSON.parse(result.responseBody) as T, replayed: true };
  }
  throw new ApiError('service_unavailable', 'The request could not be completed; retry with the same Idempotency-Key.', { 'retry-after': '1' });
}
