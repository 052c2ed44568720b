import { sql, type Queryable, type Transaction } from '../executor.js';
import { day } from './time.js';

/** A week is named by its Monday, YYYY-MM-DD (UTC). */
export type WeekDate = string;

export interface Span {
  first: WeekDate;
  last: WeekDate;
}

export interface ReleasedComment {
  week: WeekDate;
  rank: Buffer;
  comment: string;
}

const spansOverlapping = sql(
  'comments.spans_overlapping',
  `SELECT first_week, last_week FROM comment_release_spans
    WHERE org_id = $1 AND first_week <= $3 AND last_week >= $2
    ORDER BY first_week`,
);

export async function frozenSpans(db: Queryable, orgId: string, from: WeekDate, to: WeekDate): Promise<Span[]> {
  const rows = await db.query<{ first_week: Date | string; last_week: Date | string }>(spansOverlapping, [orgId, from, to]);
  return rows.map((r) => ({ first: day(r.first_week), last: day(r.last_week) }));
}

const lockOrg = sql('comments.lock_org', `SELECT id FROM organizations WHERE id = $1 FOR NO KEY UPDATE`);

/**
 * Serializes the releases of one organization across every process on the database; the
 * moderation trigger takes the same row FOR SHARE, so a status change and a release never
 * miss each other.
 */
export async function lockReleases(tx: Transaction, orgId: string): Promise<void> {
  await tx.query(lockOrg, [orgId]);
}

const cleanWeeks = sql(
  'comments.clean_weeks',
  `SELECT week, sum(clean_count)::int AS n FROM pulse_clean_week_stats
    WHERE org_id = $1 AND week >= $2 AND week <= $3 AND clean_count > 0
    GROUP BY week ORDER BY week`,
);

/** Weeks of [from, to] that hold CLEAN pulses, with their counts (from the rollup). */
export async function weeksWithCleanPulses(db: Queryable, orgId: string, from: WeekDate, to: WeekDate): Promise<{ week: WeekDate; n: number }[]> {
  const rows = await db.query<{ week: Date | string; n: number }>(cleanWeeks, [orgId, from, to]);
  return rows.map((r) => ({ week: day(r.week), n: r.n }));
}

/**
 * Freezes the weeks [firstWeek, lastWeek] (pulses created in [$2, $3)): every CLEAN pulse becomes
 * a member of its group's cell, or of the week's remainder when its group has 1-4; cells of at
 * least 5 and remainders of at least 5 are visible. The rank is HMAC-SHA256(orderKey, pulse id),
 * computed from the key's inner and outer pads ($4, $5).
 */
const releaseWeeks = sql(
  'comments.release_weeks',
  `WITH src AS (
     SELECT id, comment, date_trunc('week', created_at AT TIME ZONE 'UTC')::date AS week,
            coalesce('team:' || subteam_id, 'none') AS grp
       FROM pulses
      WHERE org_id = $1 AND created_at >= $2 AND created_at < $3 AND moderation_status = 'CLEAN'
   ), groups AS (
     SELECT week, grp, count(*)::int AS n FROM src GROUP BY 1, 2
   ), weeks AS (
     SELECT week, coalesce(sum(n) FILTER (WHERE n < 5), 0)::int AS rest FROM groups GROUP BY 1
   ), cells AS (
     INSERT INTO comment_cells (org_id, week, cell, sample, released)
     SELECT $1, week, grp, n, n >= 5 FROM groups
     UNION ALL
     SELECT $1, week, 'rest', rest, rest >= 5 FROM weeks WHERE rest > 0
     RETURNING 1
   ), members AS (
     INSERT INTO comment_release_members (org_id, pulse_id, week, grp, cell, rank, comment, visible)
     SELECT $1, s.id, s.week, s.grp, CASE WHEN g.n >= 5 THEN s.grp ELSE 'rest' END,
            sha256($5::bytea || sha256($4::bytea || convert_to(s.id, 'UTF8'))),
            nullif(s.comment, ''), g.n >= 5 OR w.rest >= 5
       FROM src s JOIN groups g ON g.week = s.week AND g.grp = s.grp JOIN weeks w ON w.week = s.week
     RETURNING 1
   )
   SELECT (SELECT count(*) FROM members)::int AS members, (SELECT count(*) FROM cells)::int AS cells`,
);

export async function releaseWeekRange(
  tx: Transaction,
  orgId: string,
  range: { fromInstant: string; toInstant: string },
  pads: { inner: Buffer; outer: Buffer },
): Promise<number> {
  const [r] = await tx.query<{ members: number }>(releaseWeeks, [orgId, range.fromInstant, range.toInstant, pads.inner, pads.outer]);
  return r.members;
}

const insertSpan = sql(
  'comments.insert_span',
  `INSERT INTO comment_release_spans (org_id, first_week, last_week, released_at) VALUES ($1, $2, $3, $4)`,
);

export async function recordSpan(tx: Transaction, orgId: string, span: Span, at: Date): Promise<void> {
  await tx.query(insertSpan, [orgId, span.first, span.last, at.toISOString()]);
}

const pages = {
  org: sql(
    'comments.page.org',
    `SELECT week, rank, comment FROM comment_release_members
      WHERE org_id = $1 AND visible AND comment IS NOT NULL AND week >= $2 AND week <= $3
      ORDER BY week DESC, rank LIMIT $4`,
  ),
  orgAfter: sql(
    'comments.page.org_after',
    `SELECT week, rank, comment FROM comment_release_members
      WHERE org_id = $1 AND visible AND comment IS NOT NULL AND week >= $2 AND week <= $3
        AND (week < $5 OR (week = $5 AND rank > $6))
      ORDER BY week DESC, rank LIMIT $4`,
  ),
  cell: sql(
    'comments.page.cell',
    `SELECT week, rank, comment FROM comment_release_members
      WHERE org_id = $1 AND cell = $5 AND visible AND comment IS NOT NULL AND week >= $2 AND week <= $3
      ORDER BY week DESC, rank LIMIT $4`,
  ),
  cellAfter: sql(
    'comments.page.cell_after',
    `SELECT week, rank, comment FROM comment_release_members
      WHERE org_id = $1 AND cell = $5 AND visible AND comment IS NOT NULL AND week >= $2 AND week <= $3
        AND (week < $6 OR (week = $6 AND rank > $7))
      ORDER BY week DESC, rank LIMIT $4`,
  ),
};

/** A page of released comments of the weeks [from, to]: weeks newest first, then by rank. */
export async function releasedComments(
  db: Queryable,
  orgId: string,
  f: { from: WeekDate; to: WeekDate; cell?: string; after?: { week: WeekDate; rank: Buffer }; limit: number },
): Promise<ReleasedComment[]> {
  const base = [orgId, f.from, f.to, f.limit];
  const cell = f.cell !== undefined ? [f.cell] : [];
  const after = f.after ? [f.after.week, f.after.rank] : [];
  const q = f.cell !== undefined ? (f.after ? pages.cellAfter : pages.cell) : f.after ? pages.orgAfter : pages.org;
  const rows = await db.query<{ week: Date | string; rank: Uint8Array; comment: string }>(q, [...base, ...cell, ...after]);
  return rows.map((r) => ({ week: day(r.week), rank: Buffer.from(r.rank), comment: r.comment }));
}

/**
 * Whether released weeks of [from, to] hold CLEAN pulses that no visible cell releases: a group
 * of 1-4 (withheld with a team filter; pooled otherwise), a remainder under 5, a withdrawn cell,
 * or pulses that reached a frozen week late. Compares the CLEAN rollup with the frozen cells.
 */
const withheld = {
  org: sql(
    'comments.withheld.org',
    `SELECT EXISTS (
       SELECT 1
         FROM (SELECT week, sum(clean_count) AS n FROM pulse_clean_week_stats
                WHERE org_id = $1 AND week >= $2 AND week <= $3 GROUP BY week) c
         LEFT JOIN (SELECT week, sum(sample - left_clean) AS n FROM comment_cells
                     WHERE org_id = $1 AND week >= $2 AND week <= $3 AND released AND NOT withdrawn GROUP BY week) r
           ON r.week = c.week
        WHERE c.n > coalesce(r.n, 0)
     ) AS withheld`,
  ),
  cell: sql(
    'comments.withheld.cell',
    `SELECT EXISTS (
       SELECT 1 FROM pulse_clean_week_stats c
         LEFT JOIN comment_cells r
           ON r.org_id = c.org_id AND r.week = c.week AND r.cell = c.grp AND r.released AND NOT r.withdrawn
        WHERE c.org_id = $1 AND c.grp = $4 AND c.week >= $2 AND c.week <= $3
          AND c.clean_count > coalesce(r.sample - r.left_clean, 0)
     ) AS withheld`,
  ),
};

export async function hasWithheldPulses(db: Queryable, orgId: string, f: { from: WeekDate; to: WeekDate; cell?: string }): Promise<boolean> {
  const [r] =
    f.cell !== undefined
      ? await db.query<{ withheld: boolean }>(withheld.cell, [orgId, f.from, f.to, f.cell])
      : await db.query<{ withheld: boolean }>(withheld.org, [orgId, f.from, f.to]);
  return r.withheld;
}

const frozenWeeksOf = sql(
  'comments.frozen_weeks_of',
  `SELECT w.week FROM unnest($2::date[]) AS w(week)
    WHERE EXISTS (SELECT 1 FROM comment_release_spans s
                   WHERE s.org_id = $1 AND s.first_week <= w.week AND s.last_week >= w.week)`,
);

/** How many of the given pulses (counted per week, by Monday) fall into weeks already frozen. */
export async function countInFrozenWeeks(db: Queryable, orgId: string, perWeek: Map<WeekDate, number>): Promise<number> {
  if (perWeek.size === 0) return 0;
  const rows = await db.query<{ week: Date | string }>(frozenWeeksOf, [orgId, [...perWeek.keys()]]);
  return rows.reduce((sum, r) => sum + (perWeek.get(day(r.week)) ?? 0), 0);
}
