import { sql, type Queryable } from '../executor.js';

export interface PlanRow {
  name: string;
  restApi: boolean;
  rateLimitPerMinute: number;
}

const getPlanQuery = sql('plans.get', `SELECT name, rest_api, rate_limit_per_minute FROM plans WHERE name = $1`);

export async function getPlan(db: Queryable, name: string): Promise<PlanRow | null> {
  const [r] = await db.query<{ name: string; rest_api: boolean; rate_limit_per_minute: number }>(getPlanQuery, [name]);
  return r ? { name: r.name, restApi: r.rest_api, rateLimitPerMinute: r.rate_limit_per_minute } : null;
}

/** Plans are not organization data: a small table every organization refers to by name. */
const upsertPlanQuery = sql(
  'plans.put',
  `INSERT INTO plans (name, rest_api, rate_limit_per_minute) VALUES ($1, $2, $3)
   ON CONFLICT (name) DO UPDATE SET rest_api = EXCLUDED.rest_api, rate_limit_per_minute = EXCLUDED.rate_limit_per_minute
   RETURNING (xmax = 0) AS created`,
);

/** Creates or changes a plan; says which. */
export async function putPlan(db: Queryable, plan: PlanRow): Promise<{ created: boolean }> {
  const [r] = await db.query<{ created: boolean }>(upsertPlanQuery, [plan.name, plan.restApi, plan.rateLimitPerMinute]);
  return { created: r.created };
}
