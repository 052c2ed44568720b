import { sql, type Queryable, type Transaction } from '../executor.js';
import { day, pgIso } from './time.js';

/** A week is named by its Monday, YYYY-MM-DD (UTC). */
export type WeekDate = string;

export interface ReleasedComment {
  week: WeekDate;
  rank: Buffer;
  comment: string;
}

/**
 * The releases of one organization, and its moderations, are ordered by a transaction-scoped
 * advisory lock of the organization (exclusive for a release, shared for a moderation), in a
 * namespace of its own (the two-key form; the migration lock uses the one-key form). It was a row
 * lock on `organizations` (FOR NO KEY UPDATE / FOR SHARE); on Citus that table is a reference table
 * locked on every placement, and two processes releasing the same week at once deadlocked there
 * (40P01, a 500). An advisory lock taken by a statement without a table runs where the API
 * processes connect, the coordinator, like the row lock before it.
 */
const RELEASE_LOCK_SPACE = 0x43505245; // 'CPRE'
const lockExclusive = sql('comments.lock_releases', `SELECT pg_advisory_xact_lock(${RELEASE_LOCK_SPACE}, hashtext($1))`);
const lockShared = sql('comments.lock_releases_shared', `SELECT pg_advisory_xact_lock_shared(${RELEASE_LOCK_SPACE}, hashtext($1))`);
const orderSalt = sql('comments.order_salt', `SELECT order_salt FROM organizations WHERE id = $1`);

/**
 * Serializes the releases of one organization across every process on the database; the
 * moderation operation takes the same lock shared (`lockAgainstReleases`), so a status change and a
 * release never miss each other. Returns the organization's order salt (migration 0013): only a
 * release needs it.
 */
export async function lockReleases(tx: Transaction, orgId: string): Promise<Buffer> {
  await tx.query(lockExclusive, [orgId]);
  const [r] = await tx.query<{ order_salt: Uint8Array | null }>(orderSalt, [orgId]);
  if (!r) throw new Error(`no organization ${orgId} to release comments of`);
  // NULL: an organization made before migration 0013 keeps the key it was ordered by, its id.
  return r.order_salt ? Buffer.from(r.order_salt) : Buffer.from(orgId, 'utf8');
}

/** Waits for a release of the organization in progress; moderations of one organization run side by side. */
export async function lockAgainstReleases(tx: Transaction, orgId: string): Promise<void> {
  await tx.query(lockShared, [orgId]);
}

/** The instants [lo, hi) of weeks, as PostgreSQL reads them. */
function bounds(weeks: WeekDate[]): [string[], string[]] {
  return [weeks.map((w) => `${w}T00:00:00.000Z`), weeks.map((w) => pgIso(new Date(Date.parse(`${w}T00:00:00.000Z`) + 7 * 86_400_000)))];
}

const unfrozenWeeks = sql(
  'comments.unfrozen_weeks',
  `SELECT date_trunc('week', d.day::timestamp)::date AS week, sum(d.pulse_count)::int AS n FROM pulse_day_stats d
    WHERE d.org_id = $1 AND d.day >= $2::date AND d.day < $3::date + 7 AND d.pulse_count > 0
      AND NOT EXISTS (SELECT 1 FROM comment_frozen_groups f
                       WHERE f.org_id = d.org_id AND f.week = date_trunc('week', d.day::timestamp)::date)
    GROUP BY 1 ORDER BY 1`,
);

/**
 * Weeks of [from, to] that hold pulses and are not frozen yet, with their pulse counts (from the
 * daily rollup). A week holding any pulse is frozen by the first answer that covers it, whatever
 * the statuses of its pulses (CONTRACT.md section 5, nothing live behind `suppressed`): whether a
 * week freezes never depends on a moderation that no answer shows yet.
 */
export async function weeksToRelease(db: Queryable, orgId: string, from: WeekDate, to: WeekDate): Promise<{ week: WeekDate; n: number }[]> {
  const rows = await db.query<{ week: Date | string; n: number }>(unfrozenWeeks, [orgId, from, to]);
  return rows.map((r) => ({ week: day(r.week), n: r.n }));
}

/**
 * Per week of [from, to], from three small tables and never from pulses: whether it is frozen (its
 * release recorded groups), whether it holds any pulse (the daily rollup), and its late pools per
 * group. Every count is of statuses as answers show them (CONTRACT.md section 5): `clean_count` is
 * the group's pulses shown CLEAN (as they arrived until a release covers them, then as frozen), and
 * `frozen_clean` the pulses that releases froze CLEAN; a late pool is their difference, the pulses
 * that arrived CLEAN and that no release covered. A moderation moves none of them. The tables are
 * read by range scans on their keys and summed, not joined: a join's plan depends on statistics,
 * and a nested loop chosen on a stale row estimate cost the answer 1.3 ms at 100 groups.
 * `$T` is the group whose late pulses count as withheld (NULL: every group).
 */
const weekState = (team: string) => `grp_state AS (
     SELECT week, grp, sum(clean)::int AS clean, sum(frozen_clean)::int AS frozen_clean, bool_or(frozen) AS frozen,
            sum(pulses)::int AS pulses
       FROM (SELECT week, grp, clean_count AS clean, 0 AS frozen_clean, false AS frozen, 0 AS pulses
               FROM pulse_clean_week_stats WHERE org_id = $1 AND week >= $2 AND week <= $3
             UNION ALL
             SELECT week, grp, 0, frozen_clean, true, 0
               FROM comment_frozen_groups WHERE org_id = $1 AND week >= $2 AND week <= $3
             UNION ALL
             SELECT date_trunc('week', day::timestamp)::date, '', 0, 0, false, pulse_count
               FROM pulse_day_stats WHERE org_id = $1 AND day >= $2::date AND day < $3::date + 7) g
      GROUP BY week, grp
   ), wk AS (
     SELECT week,
            bool_or(frozen) AS frozen,
            sum(pulses) > 0 AS has_pulses,
            max(clean - frozen_clean) AS late_max,
            coalesce(sum(clean - frozen_clean) FILTER (WHERE clean - frozen_clean BETWEEN 1 AND 4), 0) AS late_small,
            bool_or(clean - frozen_clean > 0${team === 'NULL' ? '' : ` AND grp = ${team}`}) AS late_group
       FROM grp_state
      GROUP BY week
   )`;

const pendingLate = sql(
  'comments.pending_late',
  `WITH ${weekState('NULL')}
   SELECT week, (late_max + late_small)::int AS n FROM wk
    WHERE frozen AND (late_max >= 5 OR late_small >= 5)
    ORDER BY week`,
);

/** Frozen weeks of [from, to] whose late pools would release something now (a pool of 5, or a late remainder of 5). */
export async function weeksWithLatePools(db: Queryable, orgId: string, from: WeekDate, to: WeekDate): Promise<{ week: WeekDate; n: number }[]> {
  const rows = await db.query<{ week: Date | string; n: number }>(pendingLate, [orgId, from, to]);
  return rows.map((r) => ({ week: day(r.week), n: r.n }));
}

/**
 * Freezes weeks that were never frozen: every pulse of them is recorded with the status it is shown
 * with from now on, and every pulse frozen CLEAN becomes a member of its group's cell, or of the
 * week's remainder when its group has 1-4; cells of at least 5 and remainders of at least 5 are
 * released. A pulse is frozen CLEAN only when it is CLEAN now and was shown CLEAN until now (it
 * arrived CLEAN): one public life per pulse (CONTRACT.md section 5), so a pulse that arrived
 * FLAGGED stays FLAGGED whatever a moderator did before the release, and its comment is never
 * released. Its `shown_status` stays 'FLAGGED' while its current status is CLEAN; a pulse that
 * arrived CLEAN and was flagged before the release is shown FLAGGED from now on (its `shown_status`
 * clears). `pulse_clean_week_stats` loses those pulses (it counts statuses as shown) and
 * `comment_frozen_groups` records the frozen CLEAN ones, so the late pools stay at zero. The rank is
 * HMAC-SHA256(orderKey, order salt || 0x00 || pulse id), computed from the key's outer pad ($5) and
 * the inner pad followed by the organization's prefix ($4).
 */
const releaseWeeks = sql(
  'comments.release_weeks',
  `WITH src AS (
     SELECT p.id, p.comment, coalesce(p.shown_status, p.moderation_status) = 'CLEAN' AS shown_clean,
            coalesce(p.shown_status, p.moderation_status) = 'CLEAN' AND p.moderation_status = 'CLEAN' AS clean,
            date_trunc('week', p.created_at AT TIME ZONE 'UTC')::date AS week,
            coalesce('team:' || p.subteam_id, 'none') AS grp
       FROM unnest($2::timestamptz[], $3::timestamptz[]) AS w(lo, hi)
       JOIN pulses p ON p.org_id = $1 AND p.created_at >= w.lo AND p.created_at < w.hi
   ), groups AS (
     SELECT week, grp, (count(*) FILTER (WHERE clean))::int AS n, (count(*) FILTER (WHERE shown_clean AND NOT clean))::int AS lost
       FROM src GROUP BY 1, 2
   ), weeks AS (
     SELECT week, coalesce(sum(n) FILTER (WHERE n < 5), 0)::int AS rest FROM groups GROUP BY 1
   ), frozen AS (
     INSERT INTO comment_frozen_groups (org_id, week, grp, frozen_clean)
     SELECT $1, week, grp, n FROM groups
     RETURNING 1
   ), lost AS (
     UPDATE pulse_clean_week_stats s SET clean_count = s.clean_count - g.lost
       FROM groups g
      WHERE s.org_id = $1 AND s.week = g.week AND s.grp = g.grp AND g.lost > 0
     RETURNING 1
   ), cells AS (
     INSERT INTO comment_cells (org_id, week, cell, batch, sample, released, order_key)
     SELECT $1, week, grp, 0, n, n >= 5, $6::bytea FROM groups WHERE n > 0
     UNION ALL
     SELECT $1, week, 'rest', 0, rest, rest >= 5, $6::bytea FROM weeks WHERE rest > 0
     RETURNING 1
   ), shown AS (
     UPDATE pulses p SET shown_status = NULL
       FROM unnest($2::timestamptz[], $3::timestamptz[]) AS w(lo, hi)
      WHERE p.org_id = $1 AND p.shown_status = 'CLEAN' AND p.created_at >= w.lo AND p.created_at < w.hi
     RETURNING 1
   ), members AS (
     INSERT INTO comment_release_members (org_id, pulse_id, week, grp, batch, frozen_status, cell, rank, comment, released, visible)
     SELECT $1, s.id, s.week, s.grp, 0,
            CASE WHEN s.clean THEN 'CLEAN' ELSE 'FLAGGED' END,
            CASE WHEN NOT s.clean THEN NULL WHEN g.n >= 5 THEN s.grp ELSE 'rest' END,
            CASE WHEN s.clean THEN sha256($5::bytea || sha256($4::bytea || convert_to(s.id, 'UTF8'))) END,
            CASE WHEN s.clean THEN nullif(s.comment, '') END,
            s.clean AND (g.n >= 5 OR w.rest >= 5),
            s.clean AND (g.n >= 5 OR w.rest >= 5)
       FROM src s JOIN groups g ON g.week = s.week AND g.grp = s.grp JOIN weeks w ON w.week = s.week
     RETURNING 1
   )
   SELECT (SELECT count(*) FROM members)::int AS members, (SELECT count(*) FROM cells)::int AS cells,
          (SELECT count(*) FROM frozen)::int AS groups, (SELECT count(*) FROM shown)::int AS shown,
          (SELECT count(*) FROM lost)::int AS lost`,
);

export interface OrderKey {
  /** The inner pad of the HMAC key followed by the organization's order salt and a 0x00 byte. */
  innerPrefix: Buffer;
  outer: Buffer;
  /** A short public name of the key, recorded with every batch of cells it ordered. */
  id: Buffer;
}

export async function releaseNewWeeks(tx: Transaction, orgId: string, weeks: WeekDate[], key: OrderKey): Promise<number> {
  if (weeks.length === 0) return 0;
  const [lo, hi] = bounds(weeks);
  const [r] = await tx.query<{ members: number }>(releaseWeeks, [orgId, lo, hi, key.innerPrefix, key.outer, key.id]);
  return r.members;
}

/**
 * Releases the late pools of frozen weeks: per week and group, the pulses shown CLEAN (they arrived
 * CLEAN) that no release covered. Whether a pool is due is decided on those, as answers show them:
 * a pool of at least 5 is due, and pools of 1-4 once they hold at least 5 together (else they
 * wait). The release then freezes each pulse with its status now, as a week's release does. A group
 * with at least 5 pulses frozen CLEAN is a cell of its own; the others of the release (pools of 1-4,
 * and pools of 5 that a moderation before the release left below 5) make a new remainder, released
 * from 5 and else withheld for good (`suppressed` says so). Each release is a new batch of the
 * week; every pulse it covers is shown with its frozen status from then on (`shown`).
 */
const releaseLate = sql(
  'comments.release_late',
  `WITH src AS (
     SELECT p.id, p.comment, p.moderation_status = 'CLEAN' AS clean,
            date_trunc('week', p.created_at AT TIME ZONE 'UTC')::date AS week,
            coalesce('team:' || p.subteam_id, 'none') AS grp
       FROM unnest($2::timestamptz[], $3::timestamptz[]) AS w(lo, hi)
       JOIN pulses p ON p.org_id = $1 AND p.created_at >= w.lo AND p.created_at < w.hi
      WHERE coalesce(p.shown_status, p.moderation_status) = 'CLEAN'
        AND NOT EXISTS (SELECT 1 FROM comment_release_members m WHERE m.org_id = $1 AND m.pulse_id = p.id)
   ), groups AS (
     SELECT week, grp, count(*)::int AS a, (count(*) FILTER (WHERE clean))::int AS n FROM src GROUP BY 1, 2
   ), due AS (
     SELECT g.week, coalesce(sum(g.a) FILTER (WHERE g.a < 5), 0)::int AS rest_a,
            (SELECT coalesce(max(c.batch), 0) + 1 FROM comment_cells c WHERE c.org_id = $1 AND c.week = g.week) AS batch
       FROM groups g GROUP BY g.week
   ), rel AS (
     SELECT g.week, g.grp, g.a, g.n, d.batch, g.n >= 5 AS own
       FROM groups g JOIN due d ON d.week = g.week
      WHERE g.a >= 5 OR d.rest_a >= 5
   ), rest AS (
     SELECT week, batch, coalesce(sum(n) FILTER (WHERE NOT own), 0)::int AS n FROM rel GROUP BY week, batch
   ), frozen AS (
     INSERT INTO comment_frozen_groups AS f (org_id, week, grp, frozen_clean)
     SELECT $1, week, grp, n FROM rel
     ON CONFLICT (org_id, week, grp) DO UPDATE SET frozen_clean = f.frozen_clean + EXCLUDED.frozen_clean
     RETURNING 1
   ), lost AS (
     UPDATE pulse_clean_week_stats s SET clean_count = s.clean_count - (r.a - r.n)
       FROM rel r
      WHERE s.org_id = $1 AND s.week = r.week AND s.grp = r.grp AND r.a > r.n
     RETURNING 1
   ), cells AS (
     INSERT INTO comment_cells (org_id, week, cell, batch, sample, released, order_key)
     SELECT $1, week, grp, batch, n, own, $6::bytea FROM rel WHERE n > 0
     UNION ALL
     SELECT $1, week, 'rest', batch, n, n >= 5, $6::bytea FROM rest WHERE n > 0
     RETURNING 1
   ), shown AS (
     UPDATE pulses p SET shown_status = NULL
       FROM src s JOIN rel r ON r.week = s.week AND r.grp = s.grp
      WHERE p.org_id = $1 AND p.id = s.id AND p.shown_status IS NOT NULL
     RETURNING 1
   ), members AS (
     INSERT INTO comment_release_members (org_id, pulse_id, week, grp, batch, frozen_status, cell, rank, comment, released, visible)
     SELECT $1, s.id, s.week, s.grp, r.batch,
            CASE WHEN s.clean THEN 'CLEAN' ELSE 'FLAGGED' END,
            CASE WHEN NOT s.clean THEN NULL WHEN r.own THEN s.grp ELSE 'rest' END,
            CASE WHEN s.clean THEN sha256($5::bytea || sha256($4::bytea || convert_to(s.id, 'UTF8'))) END,
            CASE WHEN s.clean THEN nullif(s.comment, '') END,
            s.clean AND (r.own OR x.n >= 5),
            s.clean AND (r.own OR x.n >= 5)
       FROM src s JOIN rel r ON r.week = s.week AND r.grp = s.grp JOIN rest x ON x.week = r.week
     RETURNING 1
   )
   SELECT (SELECT count(*) FROM members)::int AS members, (SELECT count(*) FROM cells)::int AS cells,
          (SELECT count(*) FROM frozen)::int AS groups, (SELECT count(*) FROM shown)::int AS shown,
          (SELECT count(*) FROM lost)::int AS lost`,
);

export async function releaseLatePools(tx: Transaction, orgId: string, weeks: WeekDate[], key: OrderKey): Promise<number> {
  if (weeks.length === 0) return 0;
  const [lo, hi] = bounds(weeks);
  const [r] = await tx.query<{ members: number }>(releaseLate, [orgId, lo, hi, key.innerPrefix, key.outer, key.id]);
  return r.members;
}

/**
 * An answer about the released weeks [from, to], read in one statement (one snapshot): a page of
 * released comments (weeks newest first, then by rank), and what the answer needs to know besides,
 * from two small tables: whether a release is due (a week with CLEAN pulses never frozen, or a late
 * pool that would release), and whether the requested group has withheld CLEAN pulses there (a
 * frozen cell of 1-4 of the team, or a remainder of 1-4 without a team filter, or a late pool not
 * yet released). The state comes from CLEAN counts and frozen samples, never from comments; a
 * moderation after the release changes none of it (it moves a group's CLEAN count and its
 * frozen_clean alike). One snapshot matters: a page read before another process's release and a
 * state read after it would answer an empty page as if nothing were due.
 */
function answerQuery(team: boolean, after: boolean) {
  const cellParam = '$5';
  const [weekParam, rankParam] = team ? ['$6', '$7'] : ['$5', '$6'];
  return sql(
    `comments.answer.${team ? 'cell' : 'org'}${after ? '_after' : ''}`,
    `WITH ${weekState(team ? cellParam : 'NULL')}, st AS (
       SELECT coalesce(bool_or(NOT frozen AND has_pulses), false) AS unfrozen,
              coalesce(bool_or(frozen AND (late_max >= 5 OR late_small >= 5)), false) AS late_due,
              coalesce(bool_or(frozen AND late_group), false)
              OR EXISTS (SELECT 1 FROM comment_cells c
                          WHERE c.org_id = $1 AND c.week >= $2 AND c.week <= $3
                            AND c.cell = ${team ? cellParam : `'rest'`} AND NOT c.released) AS withheld
         FROM wk
     )
     SELECT st.unfrozen, st.late_due, st.withheld, to_char(r.week, 'YYYY-MM-DD') AS week, r.rank, r.comment
       FROM st LEFT JOIN LATERAL (
         SELECT week, rank, comment FROM comment_release_members
          WHERE org_id = $1${team ? ` AND cell = ${cellParam}` : ''} AND visible AND comment IS NOT NULL AND week >= $2 AND week <= $3
                ${after ? `AND (week < ${weekParam} OR (week = ${weekParam} AND rank > ${rankParam}))` : ''}
          ORDER BY week DESC, rank LIMIT $4
       ) r ON true
      ORDER BY r.week DESC, r.rank`,
  );
}
const answers = {
  org: answerQuery(false, false),
  orgAfter: answerQuery(false, true),
  cell: answerQuery(true, false),
  cellAfter: answerQuery(true, true),
};

export interface Answer {
  rows: ReleasedComment[];
  /** A release is due: weeks never frozen, or late pools that would release. */
  due: boolean;
  /** The requested group has CLEAN pulses withheld in these weeks. */
  withheld: boolean;
}

export async function readAnswer(
  db: Queryable,
  orgId: string,
  f: { from: WeekDate; to: WeekDate; cell?: string; after?: { week: WeekDate; rank: Buffer }; limit: number },
): Promise<Answer> {
  const base = [orgId, f.from, f.to, f.limit];
  const cell = f.cell !== undefined ? [f.cell] : [];
  const after = f.after ? [f.after.week, f.after.rank] : [];
  const q = f.cell !== undefined ? (f.after ? answers.cellAfter : answers.cell) : f.after ? answers.orgAfter : answers.org;
  const rows = await db.query<{
    unfrozen: boolean;
    late_due: boolean;
    withheld: boolean;
    week: string | null;
    rank: Uint8Array | null;
    comment: string | null;
  }>(q, [...base, ...cell, ...after]);
  const st = rows[0];
  return {
    rows: rows.filter((r) => r.week !== null).map((r) => ({ week: r.week!, rank: Buffer.from(r.rank!), comment: r.comment! })),
    due: st.unfrozen || st.late_due,
    withheld: st.withheld,
  };
}

const dueQuery = sql(
  'comments.due',
  `WITH ${weekState('NULL')}
   SELECT coalesce(bool_or((NOT frozen AND has_pulses) OR (frozen AND (late_max >= 5 OR late_small >= 5))), false) AS due FROM wk`,
);

/** Whether a release is due in the weeks [from, to]. */
export async function releaseDue(db: Queryable, orgId: string, from: WeekDate, to: WeekDate): Promise<boolean> {
  const [r] = await db.query<{ due: boolean }>(dueQuery, [orgId, from, to]);
  return r.due;
}

const orgsWithPulses = sql('comments.orgs_with_pulses', `SELECT org_id FROM pulse_totals WHERE pulse_count > 0 ORDER BY org_id`);

/** Every organization that holds pulses (from the one-row-per-organization rollup). */
export async function organizationsWithPulses(db: Queryable): Promise<string[]> {
  return (await db.query<{ org_id: string }>(orgsWithPulses)).map((r) => r.org_id);
}

const frozenWeeksOf = sql(
  'comments.frozen_weeks_of',
  `SELECT w.week FROM unnest($2::date[]) AS w(week)
    WHERE EXISTS (SELECT 1 FROM comment_frozen_groups f WHERE f.org_id = $1 AND f.week = w.week)`,
);

/** How many of the given pulses (counted per week, by Monday) fall into weeks already frozen. */
export async function countInFrozenWeeks(db: Queryable, orgId: string, perWeek: Map<WeekDate, number>): Promise<number> {
  if (perWeek.size === 0) return 0;
  const rows = await db.query<{ week: Date | string }>(frozenWeeksOf, [orgId, [...perWeek.keys()]]);
  return rows.reduce((sum, r) => sum + (perWeek.get(day(r.week)) ?? 0), 0);
}

/**
 * Hiding a released comment (the console, migration 0017): the comment leaves every answer, and
 * nothing else moves (no status, no count, no cell). It is found by its week and rank, through the
 * answer's own index while it is shown (`visible`) and through the hidden ones' index after. The
 * pulse's status is read, never written: a shown-again comment is visible only while its pulse is
 * CLEAN, as moderation after release says.
 */
const lockPulseOf = sql(
  'comments.lock_pulse_of',
  `SELECT p.id FROM pulses p
    WHERE p.org_id = $1
      AND p.id = (SELECT m.pulse_id FROM comment_release_members m
                   WHERE m.org_id = $1 AND m.week = $2::date AND m.rank = $3 AND m.comment IS NOT NULL)
      FOR UPDATE`,
);
const hideQuery = sql(
  'comments.hide',
  `UPDATE comment_release_members SET hidden = true, visible = false
    WHERE org_id = $1 AND week = $2::date AND rank = $3 AND released AND NOT hidden AND comment IS NOT NULL
   RETURNING 1`,
);
const showQuery = sql(
  'comments.show',
  `UPDATE comment_release_members m SET hidden = false, visible = m.released AND p.moderation_status = 'CLEAN'
     FROM pulses p
    WHERE m.org_id = $1 AND m.week = $2::date AND m.rank = $3 AND m.hidden
      AND p.org_id = m.org_id AND p.id = m.pulse_id
   RETURNING 1`,
);
const hiddenOne = sql('comments.hidden_one', `SELECT 1 FROM comment_release_members WHERE org_id = $1 AND week = $2::date AND rank = $3 AND hidden`);
const shownOne = sql(
  'comments.shown_one',
  `SELECT 1 FROM comment_release_members WHERE org_id = $1 AND week = $2::date AND rank = $3 AND NOT hidden AND released AND comment IS NOT NULL`,
);

/**
 * Hides (or shows again) the released comment at (week, rank). 'changed', 'unchanged' when it
 * already was so, or 'missing' when no released comment of the organization is there. The comment's
 * pulse is locked first, as a moderation locks it (one change at a time per pulse, CONTRACT.md
 * section 5): a "Show again" that meets a moderation flagging the pulse waits for it, or it waits
 * for the showing, and either way the comment of a pulse that is not CLEAN stays out of answers.
 * A comment shown again whose pulse is not CLEAN is no longer hidden but stays out of answers, as
 * moderation after release says, and the answer is the one any other showing gets.
 */
export async function setReleasedCommentHidden(
  tx: Transaction,
  orgId: string,
  at: { week: WeekDate; rank: Buffer },
  hidden: boolean,
): Promise<'changed' | 'unchanged' | 'missing'> {
  const params = [orgId, at.week, at.rank];
  if ((await tx.query(lockPulseOf, params)).length === 0) return 'missing';
  if ((await tx.query(hidden ? hideQuery : showQuery, params)).length === 1) return 'changed';
  return (await tx.query(hidden ? hiddenOne : shownOne, params)).length === 1 ? 'unchanged' : 'missing';
}

function hiddenQuery(team: boolean) {
  return sql(
    `comments.hidden.${team ? 'cell' : 'org'}`,
    `SELECT to_char(week, 'YYYY-MM-DD') AS week, rank, comment FROM comment_release_members
      WHERE org_id = $1 AND hidden AND week >= $2 AND week <= $3${team ? ' AND cell = $5' : ''}
      ORDER BY week DESC, rank LIMIT $4`,
  );
}
const hiddenQueries = { org: hiddenQuery(false), cell: hiddenQuery(true) };

/** The hidden comments of the weeks [from, to] (of one cell, or every one), in the answer's order. */
export async function hiddenComments(
  db: Queryable,
  orgId: string,
  f: { from: WeekDate; to: WeekDate; cell?: string; limit: number },
): Promise<ReleasedComment[]> {
  const rows = await db.query<{ week: string; rank: Uint8Array; comment: string }>(f.cell !== undefined ? hiddenQueries.cell : hiddenQueries.org, [
    orgId,
    f.from,
    f.to,
    f.limit,
    ...(f.cell !== undefined ? [f.cell] : []),
  ]);
  return rows.map((r) => ({ week: r.week, rank: Buffer.from(r.rank), comment: r.comment }));
}
