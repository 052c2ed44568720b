import { sql, type Queryable } from '../executor.js';
import { day, iso, isoOrNull } from './time.js';

export interface AlertRow {
  id: string;
  type: string;
  message: string;
  weekISO: string | null;
  subteamName: string | null;
  readAt: string | null;
  createdAt: string;
}

const recentQuery = sql(
  'alerts.recent',
  `SELECT a.id, a.type, a.message, a.week_iso, t.name AS subteam_name, a.read_at, a.created_at
     FROM alerts a
     LEFT JOIN teams t ON t.org_id = a.org_id AND t.id = a.subteam_id
    WHERE a.org_id = $1
    ORDER BY a.created_at DESC, a.id DESC
    LIMIT $2`,
);

const unreadQuery = sql(
  'alerts.unread',
  `SELECT a.id, a.type, a.message, a.week_iso, t.name AS subteam_name, a.read_at, a.created_at
     FROM alerts a
     LEFT JOIN teams t ON t.org_id = a.org_id AND t.id = a.subteam_id
    WHERE a.org_id = $1 AND a.read_at IS NULL
    ORDER BY a.created_at DESC, a.id DESC
    LIMIT $2`,
);

export async function recentAlerts(db: Queryable, orgId: string, limit: number, only?: 'unread'): Promise<AlertRow[]> {
  const rows = await db.query<{
    id: string;
    type: string;
    message: string;
    week_iso: string | null;
    subteam_name: string | null;
    read_at: Date | null;
    created_at: Date;
  }>(only === 'unread' ? unreadQuery : recentQuery, [orgId, limit]);
  return rows.map((r) => ({
    id: r.id,
    type: r.type,
    message: r.message,
    weekISO: r.week_iso,
    subteamName: r.subteam_name,
    readAt: isoOrNull(r.read_at),
    createdAt: iso(r.created_at),
  }));
}

export interface NewAlert {
  id: string;
  type: string;
  message: string;
  weekISO: string | null;
  subteamId: string | null;
  readAt: string | null;
  createdAt: string;
}

/** Many alerts (the dataset loader); RETURNING in a CTE keeps a duplicate's SQLSTATE on Citus (teams.insert says why). */
const insertQuery = sql(
  'alerts.insert',
  `WITH ins AS (
     INSERT INTO alerts (org_id, id, type, message, week_iso, subteam_id, read_at, created_at)
     SELECT $1, * FROM unnest($2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::timestamptz[], $8::timestamptz[])
     RETURNING 1)
   SELECT count(*)::int AS n FROM ins`,
);

export async function insertAlerts(db: Queryable, orgId: string, alerts: NewAlert[]): Promise<void> {
  if (alerts.length === 0) return;
  await db.query(insertQuery, [
    orgId,
    alerts.map((a) => a.id),
    alerts.map((a) => a.type),
    alerts.map((a) => a.message),
    alerts.map((a) => a.weekISO),
    alerts.map((a) => a.subteamId),
    alerts.map((a) => a.readAt),
    alerts.map((a) => a.createdAt),
  ]);
}

/**
 * Organizations (not deleted) with pulses on a day in [fromDay, toDay): the ones the engine
 * evaluates, a listing across organizations. The days are read first and the organizations
 * joined to them, not the other way round: Citus runs no subquery correlated with a reference table.
 */
const withPulsesQuery = sql(
  'alerts.orgs_with_pulses_between',
  `SELECT o.id FROM organizations o
    WHERE o.deleted_at IS NULL
      AND o.id IN (SELECT DISTINCT d.org_id FROM pulse_day_stats d WHERE d.day >= $1::date AND d.day < $2::date)
    ORDER BY o.id`,
);

export async function orgIdsWithPulsesBetween(db: Queryable, fromDay: string, toDay: string): Promise<string[]> {
  return (await db.query<{ id: string }>(withPulsesQuery, [fromDay, toDay])).map((r) => r.id);
}

/** One group's pulses in one ISO week. group_key: 'team:<id>', 'no_team' or 'org'. */
export interface GroupWeekRow {
  groupKey: string;
  subteamId: string | null;
  subteamName: string | null;
  /** Monday of the week, YYYY-MM-DD. */
  week: string;
  count: number;
  sum: number;
}

/**
 * Weekly count and level sum per team, for pulses without a team (the organization's day
 * rollup minus its teams' day rollups) and for the whole organization, over whole weeks from
 * the Monday $2 to the Monday $3 (exclusive). Reads day rollups only, never pulses.
 */
const groupWeeksQuery = sql(
  'alerts.group_weeks',
  `WITH team_weeks AS (
     SELECT subteam_id, $2::date + ((day - $2::date) / 7) * 7 AS week,
            sum(pulse_count)::int AS count, sum(level_sum)::float8 AS sum
       FROM pulse_team_day_stats
      WHERE org_id = $1 AND day >= $2::date AND day < $3::date
      GROUP BY 1, 2
   ), org_weeks AS (
     SELECT $2::date + ((day - $2::date) / 7) * 7 AS week,
            sum(pulse_count)::int AS count, sum(level_sum)::float8 AS sum
       FROM pulse_day_stats
      WHERE org_id = $1 AND day >= $2::date AND day < $3::date
      GROUP BY 1
   ), teams_total AS (
     SELECT week, sum(count)::int AS count, sum(sum)::float8 AS sum FROM team_weeks GROUP BY week
   )
   SELECT 'team:' || w.subteam_id AS group_key, w.subteam_id, t.name AS subteam_name, w.week, w.count, w.sum
     FROM team_weeks w JOIN teams t ON t.org_id = $1 AND t.id = w.subteam_id
   UNION ALL
   SELECT 'org', NULL, NULL, week, count, sum FROM org_weeks
   UNION ALL
   SELECT 'no_team', NULL, NULL, o.week, o.count - COALESCE(x.count, 0), o.sum - COALESCE(x.sum, 0)
     FROM org_weeks o LEFT JOIN teams_total x USING (week)
    WHERE o.count > COALESCE(x.count, 0)`,
);

export async function groupWeekAggregates(db: Queryable, orgId: string, fromMonday: string, toMondayExclusive: string): Promise<GroupWeekRow[]> {
  const rows = await db.query<{
    group_key: string;
    subteam_id: string | null;
    subteam_name: string | null;
    week: Date | string;
    count: number;
    sum: number;
  }>(groupWeeksQuery, [orgId, fromMonday, toMondayExclusive]);
  return rows.map((r) => ({
    groupKey: r.group_key,
    subteamId: r.subteam_id,
    subteamName: r.subteam_name,
    week: day(r.week),
    count: r.count,
    sum: r.sum,
  }));
}

export interface RaisedAlert {
  id: string;
  type: string;
  message: string;
  weekISO: string;
  groupKey: string;
  subteamId: string | null;
  subteamName: string | null;
  createdAt: string;
}

const insertRaisedQuery = sql(
  'alerts.insert_raised',
  `INSERT INTO alerts (org_id, id, type, message, week_iso, group_key, subteam_id, read_at, created_at)
   SELECT $1, u.id, u.type, u.message, u.week_iso, u.group_key, u.subteam_id, NULL, u.created_at
     FROM unnest($2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::timestamptz[])
          AS u(id, type, message, week_iso, group_key, subteam_id, created_at)
   ON CONFLICT (org_id, week_iso, group_key, type) DO NOTHING
   RETURNING id`,
);

/**
 * Inserts alerts raised by the engine; one that exists for its (organization, week, group,
 * type) is skipped by the unique index. Returns exactly the rows this call inserted, in the
 * shape of GET /alerts and in the order given. On PostgreSQL a concurrent insert of the same
 * alert waits for the other transaction and is then skipped.
 */
export async function insertRaisedAlerts(db: Queryable, orgId: string, alerts: RaisedAlert[]): Promise<AlertRow[]> {
  if (alerts.length === 0) return [];
  const rows = await db.query<{ id: string }>(insertRaisedQuery, [
    orgId,
    alerts.map((a) => a.id),
    alerts.map((a) => a.type),
    alerts.map((a) => a.message),
    alerts.map((a) => a.weekISO),
    alerts.map((a) => a.groupKey),
    alerts.map((a) => a.subteamId),
    alerts.map((a) => a.createdAt),
  ]);
  const inserted = new Set(rows.map((r) => r.id));
  return alerts
    .filter((a) => inserted.has(a.id))
    .map((a) => ({
      id: a.id,
      type: a.type,
      message: a.message,
      weekISO: a.weekISO,
      subteamName: a.subteamName,
      readAt: null,
      createdAt: iso(a.createdAt),
    }));
}

/** The read marker: `read` sets read_at to `at` unless already set (the first time is kept); unread clears it. */
const markReadQuery = sql(
  'alerts.mark_read',
  `WITH a AS (
     UPDATE alerts SET read_at = CASE WHEN $3 THEN COALESCE(read_at, $4::timestamptz) ELSE NULL END
      WHERE org_id = $1 AND id = $2
     RETURNING org_id, id, type, message, week_iso, subteam_id, read_at, created_at)
   SELECT a.id, a.type, a.message, a.week_iso, t.name AS subteam_name, a.read_at, a.created_at
     FROM a LEFT JOIN teams t ON t.org_id = a.org_id AND t.id = a.subteam_id`,
);

export async function markAlertRead(db: Queryable, orgId: string, alertId: string, read: boolean, at: Date): Promise<AlertRow | null> {
  const [r] = await db.query<{
    id: string;
    type: string;
    message: string;
    week_iso: string | null;
    subteam_name: string | null;
    read_at: Date | null;
    created_at: Date;
  }>(markReadQuery, [orgId, alertId, read, at.toISOString()]);
  if (!r) return null;
  return {
    id: r.id,
    type: r.type,
    message: r.message,
    weekISO: r.week_iso,
    subteamName: r.subteam_name,
    readAt: isoOrNull(r.read_at),
    createdAt: iso(r.created_at),
  };
}
