import { sql, type Queryable } from '../executor.js';
import { iso } from './time.js';

export interface OrgRow {
  id: string;
  name: string;
  memberCount: number;
  createdAt: string;
}

const getOrgQuery = sql(
  'orgs.get',
  `SELECT id, name, member_count, created_at FROM organizations WHERE id = $1 AND deleted_at IS NULL`,
);

export async function getOrg(db: Queryable, orgId: string): Promise<OrgRow | null> {
  const [r] = await db.query<{ id: string; name: string; member_count: number; created_at: Date }>(getOrgQuery, [orgId]);
  return r ? { id: r.id, name: r.name, memberCount: r.member_count, createdAt: iso(r.created_at) } : null;
}

const countOrgsQuery = sql('orgs.count', `SELECT count(*)::int AS n FROM organizations`);

export async function countOrgs(db: Queryable): Promise<number> {
  const [r] = await db.query<{ n: number }>(countOrgsQuery);
  return r.n;
}

/**
 * Organizations (not deleted) with pulses on a day in [fromDay, toDay): the ones the alert
 * engine evaluates. Like countOrgs, a listing across organizations, not organization data.
 */
const withPulsesQuery = sql(
  'orgs.with_pulses_between',
  `SELECT o.id FROM organizations o
    WHERE o.deleted_at IS NULL
      AND EXISTS (SELECT 1 FROM pulse_day_stats d WHERE d.org_id = o.id AND d.day >= $1::date AND d.day < $2::date)
    ORDER BY o.id`,
);

export async function orgIdsWithPulsesBetween(db: Queryable, fromDay: string, toDay: string): Promise<string[]> {
  return (await db.query<{ id: string }>(withPulsesQuery, [fromDay, toDay])).map((r) => r.id);
}
