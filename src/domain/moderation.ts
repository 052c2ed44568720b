import type { DatabaseExecutor } from '../db/executor.js';
import { sql } from '../db/executor.js';
import { ApiError } from '../contract/errors.js';

export type ModerationStatus = 'CLEAN' | 'FLAGGED';

export interface ModerationResult {
  pulseId: string;
  previous: ModerationStatus;
  current: ModerationStatus;
  changed: boolean;
}

const currentStatus = sql(
  'moderation.current',
  `SELECT moderation_status FROM pulses WHERE org_id = $1 AND id = $2 FOR UPDATE`,
);
const setStatus = sql('moderation.set', `UPDATE pulses SET moderation_status = $3 WHERE org_id = $1 AND id = $2`);

/**
 * Sets the moderation status of one pulse, under the rule of CONTRACT.md section 5 (moderation
 * after release). The one operation behind the CLI's `pulses moderate` and the operator API.
 */
export async function moderatePulse(db: DatabaseExecutor, orgId: string, pulseId: string, status: ModerationStatus): Promise<ModerationResult> {
  return db.transaction(async (tx) => {
    const [row] = await tx.query<{ moderation_status: ModerationStatus }>(currentStatus, [orgId, pulseId]);
    if (!row) throw new ApiError('not_found', `Pulse ${JSON.stringify(pulseId)} not found.`);
    const previous = row.moderation_status;
    if (previous !== status) await tx.query(setStatus, [orgId, pulseId, status]);
    return { pulseId, previous, current: status, changed: previous !== status };
  });
}
