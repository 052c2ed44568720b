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

/** The pulse, locked (one change at a time per pulse), with the status answers show of it. */
const currentStatus = sql(
  'moderation.current',
  `SELECT p.moderation_status, coalesce(p.shown_status, p.moderation_status) AS shown_status
     FROM pulses p
    WHERE p.org_id = $1 AND p.id = $2
      FOR UPDATE OF p`,
);

/**
 * The status changes; the status answers show does not ($4: kept while it differs from the new
 * status, NULL when they agree again), and no count moves: every count behind freezing, late pools
 * and `suppressed` is of statuses as shown (CONTRACT.md section 5, nothing live behind `suppressed`).
 */
const changeStatus = sql('moderation.change', `UPDATE pulses SET moderation_status = $3, shown_status = $4 WHERE org_id = $1 AND id = $2 RETURNING 1`);

/**
 * A comment a release recorded is visible exactly while it was released, its pulse is CLEAN and no
 * admin hid it. A pulse frozen FLAGGED was never released, so it stays out whatever happens.
 */
const followRelease = sql(
  'moderation.follow_release',
  `UPDATE comment_release_members SET visible = released AND $3 = 'CLEAN' AND NOT hidden
    WHERE org_id = $1 AND pulse_id = $2
   RETURNING 1`,
);

/**
 * Sets the moderation status of one pulse, under the rules of CONTRACT.md section 5. The one
 * operation behind the CLI's `pulses moderate` and the operator API, and the only way a status
 * changes. It never changes the status answers show of the pulse (the status it arrived with until
 * a release covers it, then the one that release froze), nor any count behind freezing, late pools
 * or `suppressed`: a moderation is seen only in what a release holds, and, after the release, in
 * whether the pulse's released comment is in answers. The pulse's row is locked, so moderations of
 * a pulse and hiding or showing its comment in the console happen one at a time, on any number of
 * processes. The organization's release lock is taken shared: moderations of one organization run
 * side by side; a release waits for them.
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
    const [row] = await tx.query<{ moderation_status: ModerationStatus; shown_status: ModerationStatus }>(currentStatus, [orgId, pulseId]);
    if (!row) throw new ApiError('not_found', `Pulse ${JSON.stringify(pulseId)} not found.`);
    const previous = row.moderation_status;
    if (previous === status) {
      await audit(tx, false);
      return { pulseId, previous, current: status, changed: false };
    }
    const shown = row.shown_status !== status ? row.shown_status : null;
    const [changed] = await tx.query<{ '?column?': number }>(changeStatus, [orgId, pulseId, status, shown]);
    if (!changed) throw new Error(`moderation of ${pulseId} found no pulse to change`);
    await tx.query(followRelease, [orgId, pulseId, status]);
    await audit(tx, true);
    return { pulseId, previous, current: status, changed: true };
  });
}
