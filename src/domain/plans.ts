import type { Queryable } from '../db/executor.js';
import { putPlan, type PlanRow } from '../db/repositories/plans.js';

export type { PlanRow };

/**
 * `PUT /admin/v1/plans/{name}` and `plans set`: creates or changes a plan. Running servers apply a
 * change within the key cache's bound (at most 5 s), since the plan is read with the key.
 */
export async function updatePlan(db: Queryable, plan: PlanRow): Promise<PlanRow & { created: boolean }> {
  const { created } = await putPlan(db, plan);
  return { ...plan, created };
}
