import type { Queryable } from '../src/db/executor.js';
import { sql } from '../src/db/executor.js';
import { rebuildRollups } from '../src/db/pulse-writes.js';
import { hashKey } from '../src/domain/keys.js';

/**
 * Builds benchmark data with set-based SQL (generate_series), fast enough for ten million
 * pulses, then computes the rollups from the pulses exactly as the service's writes would.
 * Levels follow a fixed pseudo-random sequence so every run measures the same data.
 */
export async function generateOrg(
  db: Queryable,
  o: { orgId: string; pulses: number; teams: number; key: string; plan?: string; days?: number; now?: Date },
): Promise<void> {
  const now = (o.now ?? new Date()).toISOString();
  const days = o.days ?? 365;
  const run = (name: string, text: string, params: unknown[]) => db.query(sql(name, text), params);
  await run('bench.plan', `INSERT INTO plans (name, rest_api, rate_limit_per_minute) VALUES ('bench', true, 1000000000) ON CONFLICT (name) DO NOTHING`, []);
  await run(
    'bench.org',
    `INSERT INTO organizations (id, name, plan, member_count, created_at) VALUES ($1, $1, $2, 500, $3::timestamptz - interval '400 days')`,
    [o.orgId, o.plan ?? 'bench', now],
  );
  await run('bench.key', `INSERT INTO api_keys (org_id, id, key_hash, prefix, name) VALUES ($1, 'key_' || $1, $2, left($3, 12), 'bench')`, [
    o.orgId,
    hashKey(o.key),
    o.key,
  ]);
  await run(
    'bench.teams',
    `INSERT INTO teams (org_id, id, name, created_at)
     SELECT $1, 'team_' || g, 'Team ' || g, $3::timestamptz - interval '400 days' FROM generate_series(1, $2::int) g`,
    [o.orgId, o.teams, now],
  );
  await run(
    'bench.pulses',
    `INSERT INTO pulses (org_id, id, level, reason, comment, moderation_status, subteam_id, created_at)
     SELECT $1, 'p_' || lpad(g::text, 9, '0'),
            (1 + (g::bigint * 2654435761) % 5)::smallint,
            CASE WHEN g % 4 = 0 THEN 'workload' WHEN g % 4 = 1 THEN 'team' ELSE NULL END,
            CASE WHEN g % 3 = 0 THEN 'Comment number ' || g ELSE NULL END,
            CASE WHEN g % 17 = 0 THEN 'FLAGGED' ELSE 'CLEAN' END,
            'team_' || (1 + g % $3::int),
            date_trunc('milliseconds', $4::timestamptz - ((g::float8 - 0.5) / $2::int) * ($5::int * interval '1 day'))
       FROM generate_series(1, $2::int) g`,
    [o.orgId, o.pulses, o.teams, now, days],
  );
  // Written around the pulse door in bulk (src/db/pulse-writes.ts): the rollups are computed afterwards.
  await rebuildRollups(db, o.orgId);
}
