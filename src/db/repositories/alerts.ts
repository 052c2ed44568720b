import { sql, type Queryable } from '../executor.js';
import { iso, isoOrNull } from './time.js';

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

export async function recentAlerts(db: Queryable, orgId: string, limit: number): Promise<AlertRow[]> {
  const rows = await db.query<{
    id: string; type: string; message: string; week_iso: string | null; subteam_name: string | null;
    read_at: Date | null; created_at: Date;
  }>(recentQuery, [orgId, limit]);
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

const insertQuery = sql(
  'alerts.insert',
  `INSERT INTO alerts (org_id, id, type, message, week_iso, subteam_id, read_at, created_at)
   SELECT $1, * FROM unnest($2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::timestamptz[], $8::timestamptz[])`,
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
