import { sql, type Queryable } from '../executor.js';
import { auditParams, type AuditRow } from './audit.js';
import { iso, isoOrNull } from './time.js';

export type ActionStatus = 'active' | 'done' | 'cancelled';

export interface ActionRow {
  id: string;
  title: string;
  description: string | null;
  startDate: string;
  endDate: string | null;
  status: ActionStatus;
  subteamId: string | null;
  subteamName: string | null;
  createdAt: string;
}

type DbAction = {
  id: string;
  title: string;
  description: string | null;
  start_date: Date;
  end_date: Date | null;
  status: ActionStatus;
  subteam_id: string | null;
  subteam_name: string | null;
  created_at: Date;
};

const toRow = (r: DbAction): ActionRow => ({
  id: r.id,
  title: r.title,
  description: r.description,
  startDate: iso(r.start_date),
  endDate: isoOrNull(r.end_date),
  status: r.status,
  subteamId: r.subteam_id,
  subteamName: r.subteam_name,
  createdAt: iso(r.created_at),
});

const listQuery = sql(
  'actions.list',
  `SELECT a.id, a.title, a.description, a.start_date, a.end_date, a.status, a.subteam_id,
          t.name AS subteam_name, a.created_at
     FROM actions a
     LEFT JOIN teams t ON t.org_id = a.org_id AND t.id = a.subteam_id
    WHERE a.org_id = $1
    ORDER BY a.created_at DESC, a.id DESC`,
);

export async function listActions(db: Queryable, orgId: string): Promise<ActionRow[]> {
  return (await db.query<DbAction>(listQuery, [orgId])).map(toRow);
}

const recentQuery = (open: boolean) =>
  sql(
    `actions.recent${open ? '_open' : ''}`,
    `SELECT a.id, a.title, a.description, a.start_date, a.end_date, a.status, a.subteam_id,
            t.name AS subteam_name, a.created_at
       FROM actions a
       LEFT JOIN teams t ON t.org_id = a.org_id AND t.id = a.subteam_id
      WHERE a.org_id = $1${open ? ` AND a.status = 'active'` : ''}
      ORDER BY a.created_at DESC, a.id DESC
      LIMIT $2`,
  );
const recent = { all: recentQuery(false), open: recentQuery(true) };

/** The newest `limit` actions (or open ones), and whether there are more (one row more is read; a count would read them all). */
export async function recentActions(db: Queryable, orgId: string, limit: number, only?: 'open'): Promise<{ rows: ActionRow[]; more: boolean }> {
  const rows = await db.query<DbAction>(only === 'open' ? recent.open : recent.all, [orgId, limit + 1]);
  return { rows: rows.slice(0, limit).map(toRow), more: rows.length > limit };
}

const getQuery = sql(
  'actions.get',
  `SELECT a.id, a.title, a.description, a.start_date, a.end_date, a.status, a.subteam_id,
          t.name AS subteam_name, a.created_at
     FROM actions a
     LEFT JOIN teams t ON t.org_id = a.org_id AND t.id = a.subteam_id
    WHERE a.org_id = $1 AND a.id = $2`,
);

export async function getAction(db: Queryable, orgId: string, id: string): Promise<ActionRow | null> {
  const [r] = await db.query<DbAction>(getQuery, [orgId, id]);
  return r ? toRow(r) : null;
}

const lockQuery = sql(
  'actions.lock',
  `SELECT id, title, description, start_date, end_date, status, subteam_id FROM actions WHERE org_id = $1 AND id = $2 FOR UPDATE`,
);

/** The action's own fields, its row locked until the end of the transaction. */
export async function getActionForUpdate(db: Queryable, orgId: string, id: string): Promise<Omit<ActionRow, 'subteamName' | 'createdAt'> | null> {
  const [r] = await db.query<{
    id: string;
    title: string;
    description: string | null;
    start_date: Date;
    end_date: Date | null;
    status: ActionStatus;
    subteam_id: string | null;
  }>(lockQuery, [orgId, id]);
  return r
    ? {
        id: r.id,
        title: r.title,
        description: r.description,
        startDate: iso(r.start_date),
        endDate: isoOrNull(r.end_date),
        status: r.status,
        subteamId: r.subteam_id,
      }
    : null;
}

export interface NewAction {
  id: string;
  title: string;
  description: string | null;
  startDate: string;
  endDate: string | null;
  status: ActionStatus;
  subteamId: string | null;
  createdAt: string;
}

/** Many actions (the dataset loader); RETURNING in a CTE keeps a duplicate's SQLSTATE on Citus (teams.insert says why). */
const insertQuery = sql(
  'actions.insert',
  `WITH ins AS (
     INSERT INTO actions (org_id, id, title, description, start_date, end_date, status, subteam_id, created_at, updated_at)
     SELECT $1, u.*, u.created_at FROM unnest($2::text[], $3::text[], $4::text[], $5::timestamptz[], $6::timestamptz[],
                                            $7::text[], $8::text[], $9::timestamptz[])
       AS u(id, title, description, start_date, end_date, status, subteam_id, created_at)
     RETURNING 1)
   SELECT count(*)::int AS n FROM ins`,
);

export async function insertActions(db: Queryable, orgId: string, actions: NewAction[]): Promise<void> {
  if (actions.length === 0) return;
  await db.query(insertQuery, [
    orgId,
    actions.map((a) => a.id),
    actions.map((a) => a.title),
    actions.map((a) => a.description),
    actions.map((a) => a.startDate),
    actions.map((a) => a.endDate),
    actions.map((a) => a.status),
    actions.map((a) => a.subteamId),
    actions.map((a) => a.createdAt),
  ]);
}

/**
 * One new action and its audit row, and in the same round trip whether any enabled webhook
 * endpoint of the organization subscribes to `eventType`: the hot path of POST /actions pays one
 * statement for the change, its log and the question whether anybody listens. Every CTE names the
 * same `org_id`, so Citus routes the whole statement to one shard group.
 */
const insertOneQuery = sql(
  'actions.insert_one_audited_noting_subscribers',
  `WITH ins AS (
     INSERT INTO actions (org_id, id, title, description, start_date, end_date, status, subteam_id, created_at, updated_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $9)
     RETURNING 1),
   aud AS (
     INSERT INTO audit_events (org_id, id, created_at, actor_kind, actor_id, actor_label, action, target_kind, target_id, address, details)
     VALUES ($1, $11, $12::timestamptz, $13, $14, $15, $16, $17, $18, $19, $20::jsonb)
     RETURNING 1)
   SELECT EXISTS (SELECT 1 FROM webhook_endpoints
                   WHERE org_id = $1 AND enabled AND (event_types IS NULL OR $10 = ANY (event_types))) AS subscribed
     FROM ins, aud`,
);

export async function insertActionNotingSubscribers(db: Queryable, orgId: string, a: NewAction, eventType: string, audit: AuditRow): Promise<boolean> {
  const [r] = await db.query<{ subscribed: boolean }>(insertOneQuery, [
    orgId,
    a.id,
    a.title,
    a.description,
    a.startDate,
    a.endDate,
    a.status,
    a.subteamId,
    a.createdAt,
    eventType,
    ...auditParams(audit),
  ]);
  return r.subscribed;
}

/** Fields to change; `undefined` leaves a field as it is, `null` clears it. */
export interface ActionChanges {
  title?: string;
  description?: string | null;
  endDate?: string | null;
  subteamId?: string | null;
  status?: ActionStatus;
}

const updateQuery = sql(
  'actions.update',
  `UPDATE actions SET
      title = CASE WHEN $3 THEN $4 ELSE title END,
      description = CASE WHEN $5 THEN $6 ELSE description END,
      end_date = CASE WHEN $7 THEN $8::timestamptz ELSE end_date END,
      subteam_id = CASE WHEN $9 THEN $10 ELSE subteam_id END,
      status = CASE WHEN $11 THEN $12 ELSE status END,
      updated_at = now()
    WHERE org_id = $1 AND id = $2
    RETURNING id`,
);

export async function updateActionRow(db: Queryable, orgId: string, id: string, c: ActionChanges): Promise<boolean> {
  const rows = await db.query(updateQuery, [
    orgId,
    id,
    c.title !== undefined,
    c.title ?? null,
    c.description !== undefined,
    c.description ?? null,
    c.endDate !== undefined,
    c.endDate ?? null,
    c.subteamId !== undefined,
    c.subteamId ?? null,
    c.status !== undefined,
    c.status ?? null,
  ]);
  return rows.length > 0;
}
