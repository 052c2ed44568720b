import type { DatabaseExecutor } from '../db/executor.js';
import { writePulses, type NewPulse } from '../db/pulse-writes.js';
import { pulsesByIds, type StoredPulse } from '../db/repositories/pulse-lookup.js';
import { listTeamIds } from '../db/repositories/teams.js';
import { ApiError, invalid } from '../contract/errors.js';
import { recordAudit, type Actor } from './audit.js';
import { FrozenWeekTally } from './comments.js';
import { validate } from './import.js';
import { requireLiveOrg } from './orgs.js';

export interface IngestResult {
  inserted: number;
  unchanged: number;
  /** Inserted pulses whose ISO week had already released its comments: they are never released (docs/privacy.md). */
  inFrozenWeeks: number;
}

export const MAX_INGEST_BATCH = 1000;

/** `pulses[3].level: must be <= 5` from the importer's `level: must be <= 5`. */
const at = (i: number, problem: string) =>
  /^[A-Za-z]+: /.test(problem) ? `pulses[${i}].${problem.replace(/ in this file$/, ' in this batch')}` : `pulses[${i}]: ${problem}`;

/**
 * What a sender may re-send unchanged. The moderation status is the moderation's once the pulse
 * exists (`pulses moderate`), so a re-sent pulse that differs only there is unchanged, not a
 * conflict: a retry after moderation neither fails nor undoes it. The comment is never compared
 * (and never read): were it, `unchanged` against 409 would confirm a guessed comment of a pulse.
 * A re-sent pulse keeps its stored comment.
 */
const sameAsSent = (stored: StoredPulse, sent: NewPulse) =>
  stored.level === sent.level && stored.reason === sent.reason && stored.subteamId === sent.subteamId && stored.createdAt === sent.createdAt;

function conflict(index: number, id: string) {
  return new ApiError('pulse_conflict', `pulses[${index}]: a pulse with id ${JSON.stringify(id)} already exists with other fields; pulses cannot be changed`);
}

/**
 * Live ingestion (`POST /admin/v1/organizations/{orgId}/pulses`): 1-1000 pulses of the dataset
 * file's shape in one transaction, through the one write door (db/pulse-writes.ts), so rollups,
 * frozen-week counting, alerts and webhooks see them as they see imported ones. Idempotent by
 * pulse id: an existing pulse with the same fields is left as it is; one with other fields is a
 * 409 pulse_conflict and nothing is written. A bad pulse is named (`pulses[3].level`) and
 * nothing is written.
 */
export async function ingestPulses(db: DatabaseExecutor, orgId: string, pulses: unknown[], actor: Actor, now: Date): Promise<IngestResult> {
  if (pulses.length < 1 || pulses.length > MAX_INGEST_BATCH) throw invalid(`Body field 'pulses' must hold 1-${MAX_INGEST_BATCH} pulses.`);
  await requireLiveOrg(db, orgId);
  return db.transaction(async (tx) => {
    const teams = await listTeamIds(tx, orgId);
    const seen = new Set<string>();
    const rows: NewPulse[] = [];
    for (const [i, p] of pulses.entries()) {
      const r = validate(p, teams, seen);
      if (typeof r === 'string') throw invalid(at(i, r));
      rows.push(r);
    }
    const index = new Map(rows.map((r, i) => [r.id, i]));
    const stored = await pulsesByIds(
      tx,
      orgId,
      rows.map((r) => r.id),
    );
    const fresh: NewPulse[] = [];
    for (const [i, r] of rows.entries()) {
      const s = stored.get(r.id);
      if (!s) fresh.push(r);
      else if (!sameAsSent(s, r)) throw conflict(i, r.id);
    }
    const inserted = await writePulses(tx, orgId, fresh, { onExisting: 'skip' });
    if (inserted < fresh.length) {
      // Another batch inserted some of these ids meanwhile: they must be what this one sends.
      const now = await pulsesByIds(
        tx,
        orgId,
        fresh.map((r) => r.id),
      );
      for (const r of fresh) {
        const s = now.get(r.id);
        if (s && !sameAsSent(s, r)) throw conflict(index.get(r.id)!, r.id);
      }
    }
    const tally = new FrozenWeekTally();
    for (const r of fresh) tally.add(r.createdAt);
    const inFrozenWeeks = inserted > 0 ? await tally.count(tx, orgId) : 0;
    const result = { inserted, unchanged: rows.length - inserted, inFrozenWeeks };
    // Counts only: the row names no pulse (src/domain/audit.ts).
    await recordAudit(tx, orgId, actor, { action: 'pulses.ingested', target: { kind: 'pulses', id: null }, details: { ...result } }, now);
    return result;
  });
}
