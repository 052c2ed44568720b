import { sql, type Queryable } from '../executor.js';

export interface IdempotencyScope {
  orgId: string;
  apiKeyId: string;
  key: string;
}

export interface StoredOutcome {
  method: string;
  path: string;
  bodySha256: string;
  statusCode: number;
  responseBody: string;
}

/**
 * Claims the key. On PostgreSQL a concurrent claim of the same key blocks on the primary key
 * until the first transaction ends, then sees its row: that is what makes duplicates wait.
 */
const claimQuery = sql(
  'idempotency.claim',
  `INSERT INTO idempotency_records (org_id, api_key_id, idempotency_key, method, path, body_sha256, status_code, response_body)
   VALUES ($1, $2, $3, $4, $5, $6, 0, '')
   ON CONFLICT (org_id, api_key_id, idempotency_key) DO NOTHING
   RETURNING 1 AS claimed`,
);

export async function claimIdempotencyKey(db: Queryable, s: IdempotencyScope, request: { method: string; path: string; bodySha256: string }): Promise<boolean> {
  const rows = await db.query(claimQuery, [s.orgId, s.apiKeyId, s.key, request.method, request.path, request.bodySha256]);
  return rows.length > 0;
}

const completeQuery = sql(
  'idempotency.complete',
  `UPDATE idempotency_records SET status_code = $4, response_body = $5
    WHERE org_id = $1 AND api_key_id = $2 AND idempotency_key = $3`,
);

export async function completeIdempotencyKey(db: Queryable, s: IdempotencyScope, statusCode: number, responseBody: string) {
  await db.query(completeQuery, [s.orgId, s.apiKeyId, s.key, statusCode, responseBody]);
}

const readQuery = sql(
  'idempotency.read',
  `SELECT method, path, body_sha256, status_code, response_body FROM idempotency_records
    WHERE org_id = $1 AND api_key_id = $2 AND idempotency_key = $3`,
);

export async function readIdempotencyKey(db: Queryable, s: IdempotencyScope): Promise<StoredOutcome | null> {
  const [r] = await db.query<{ method: string; path: string; body_sha256: string; status_code: number; response_body: string }>(readQuery, [
    s.orgId,
    s.apiKeyId,
    s.key,
  ]);
  return r ? { method: r.method, path: r.path, bodySha256: r.body_sha256, statusCode: r.status_code, responseBody: r.response_body } : null;
}

/** Maintenance across all organizations: the one query here not scoped to one of them. */
const purgeQuery = sql('idempotency.purge', `DELETE FROM idempotency_records WHERE created_at < now() - make_interval(secs => $1::float8 * 3600)`);

export async function purgeIdempotencyRecords(db: Queryable, retentionHours: number): Promise<number> {
  const rows = await db.query(sql('idempotency.purge_count', `WITH gone AS (${purgeQuery.text} RETURNING 1) SELECT count(*)::int AS n FROM gone`), [
    retentionHours,
  ]);
  return (rows[0] as { n: number }).n;
}
