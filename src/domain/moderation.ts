import type { DatabaseExecutor, Queryable } from '../db/executor.js';
import { sql } from '../db/executor.js';
import { ApiError } from '../contract/errors.js';
import { lockAgainstReleases } from '../db/repositories/comments.js';
import { recordAudit, type Actor } from './audit.js';
import { requireLiveOrg } from './orgs.js';

export type ModerationStatus = 'CLEAN' | 'FLAGGED';

export interface ModerationResult {
  pulseId: string;
  previous: ModerationStatus;
  current: ModerationStatus;
  changed: boolean;
}


/**
 * The pulse, locked, with its cell group, its week, the status GET /pulses shows of it and what its
 * week's release recorded of it.
 */
const currentStatus = sql(
  'moderation.current',
  `SELECT p.moderation_status, coalesce(p.shown_status, p.moderation_status) AS shown_status,
          date_trunc('week', p.created_at AT TIME ZONE 'UTC')::date::text AS week,
          coalesce('team:' || p.subteam_id, 'none') AS grp, m.frozen_status
     FROM pulses p
     LEFT JOIN comment_release_members m ON m.org_id = p.org_id AND m.pulse_id = p.id
    WHERE p.org_id = $1 AND p.id = $2
      FOR UPDATE OF p`,
);

/**
 * The status changes and the CLEAN rollup follows; the status GET /pulses shows does not change
 * ($6: kept while it differs from the new status, NULL when they agree again). For a pulse its
 * week's release recorded (`frozen`), also: the group's frozen CLEAN count follows (so its late
 * pool does not move), and a released comment is visible exactly while its pulse is CLEAN. Four statements rather than
 * one guarded by a boolean parameter: Citus leaves a data-modifying CTE whose WHERE folds to false
 * unrouted, and the worker then refuses it ("cannot execute a distributed query from a query on a shard").
 */
const changeQuery = (up: boolean, frozen: boolean) =>
  sql(
    `moderation.change.${up ? 'up' : 'down'}${frozen ? '.frozen' : ''}`,
    `WITH pulse AS (
       UPDATE pulses SET moderation_status = $3, shown_status = $6 WHERE org_id = $1 AND id = $2 RETURNING 1
     ), clean AS (
       ${
         up
           ? `INSERT INTO pulse_clean_week_stats AS s (org_id, week, grp, clean_count) VALUES ($1, $4::date, $5, 1)
              ON CONFLICT (org_id, week, grp) DO UPDATE SET clean_count = s.clean_count + 1`
           : `UPDATE pulse_clean_week_stats SET clean_count = clean_count - 1 WHERE org_id = $1 AND week = $4::date AND grp = $5`
       }
       RETURNING 1
     )${
       frozen
         ? `, frozen AS (
       UPDATE comment_frozen_groups SET frozen_clean = frozen_clean + ${up ? 1 : -1}
        WHERE org_id = $1 AND week = $4::date AND grp = $5
       RETURNING 1
     ), member AS (
       UPDATE comment_release_members SET visible = released AND $3 = 'CLEAN' AND NOT hidden
        WHERE org_id = $1 AND pulse_id = $2
       RETURNING 1
     )`
         : ''
     }
     SELECT (SELECT count(*) FROM pulse)::int AS pulses, (SELECT count(*) FROM clean)::int AS clean,
            ${frozen ? '(SELECT count(*) FROM frozen)::int' : '0'} AS frozen`,
  );
const change = {
  up: { frozen: changeQuery(true, true), open: changeQuery(true, false) },
  down: { frozen: changeQuery(false, true), open: changeQuery(false, false) },
};

/**
 * Sets the moderation status of one pulse, under the rules of CONTRACT.md section 5 (moderation
 * before and after release). The one operation behind the CLI's `pulses moderate` and the operator
 * API, and the only way a status changes: it keeps pulse_clean_week_stats exact and never changes
 * the status GET /pulses shows (the status the pulse arrived with until a release covers it, then
 * the one it had at that release: moderators act on a comment's words, so a visible flip would
 * name the pulse whose comment a release shows). For a pulse of a released week it hides or shows
 * its released comment while every count and `suppressed` stay as they were at the release. The
 * organization's release lock is taken shared: moderations of one organization run side by side; a
 * release waits for them.
 */
export async function moderatePulse(
  db: DatabaseExecutor,
  orgId: string,
  pulseId: string,
  status: ModerationStatus,
  actor: Actor,
  now: Date,
): Promise<ModerationResult> {
  await requireLiveOrg(db, orgId);
  // The audit row never names the pulse: the organization's members read the log, and a pulse
  // named next to the time a released comment left GET /comments would say which pulse wrote it
  // (docs/privacy.md). It says that a moderation happened, by whom, and the status it set.
  const audit = (tx: Queryable, changed: boolean) =>
    recordAudit(tx, orgId, actor, { action: 'pulse.moderated', target: { kind: 'pulse', id: null }, details: { status, statusChanged: changed } }, now);
  return db.transaction(async (tx) => {
    await lockAgainstReleases(tx, orgId);
    const [row] = await tx.query<{
      moderation_status: ModerationStatus; shown_status: ModerationStatus; week: string; grp: string; frozen_status: ModerationStatus | null;
    }>(currentStatus, [orgId, pulseId]);
    if (!row) throw new ApiError('not_found', `Pulse ${JSON.stringify(pulseId)} not found.`);
    const previous = row.moderation_status;
    if (previous === status) {
      await audit(tx, false);
      return { pulseId, previous, current: status, changed: false };
    }
    const frozen = row.frozen_status !== null;
    const shown = row.shown_status !== status ? row.shown_status : null;
    const up = status === 'CLEAN';
    const statement = change[up ? 'up' : 'down'][frozen ? 'frozen' : 'open'];
    const params = [orgId, pulseId, status, row.week, row.grp, shown];
    const [r] = await tx.query<{ pulses: number; clean: number; frozen: number }>(statement, params);
    if (r.pulses !== 1 || r.clean !== 1 || r.frozen !== (frozen ? 1 : 0)) {
      throw new Error(`moderation of ${pulseId} found its rollups out of step (${JSON.stringify(r)})`);
    }
    await audit(tx, true);
    return { pulseId, previous, current: status, changed: true };
  });
}
