import { dbFailure } from '../db/errors.js';
import type { Queryable } from '../db/executor.js';
import { findTeamByName, insertTeam, listTeams } from '../db/repositories/teams.js';
import { ApiError, invalid } from '../contract/errors.js';
import { recordAudit, type Actor } from './audit.js';
import { newId } from './ids.js';

/** POST /teams, inside its idempotency transaction (`tx`), which the audit row shares. */
export async function createTeam(tx: Queryable, orgId: string, rawName: string, actor: Actor, now: Date): Promise<{ id: string; name: string }> {
  const name = rawName.trim();
  // Counted in characters (code points), as JSON Schema's maxLength counts them.
  const length = [...name].length;
  if (length < 1 || length > 80) throw invalid("Body field 'name' must be 1-80 characters after trimming.");
  const taken = () => new ApiError('team_name_taken', `A team named ${JSON.stringify(name)} already exists in this organization.`);
  if (await findTeamByName(tx, orgId, name)) throw taken();
  const id = newId('team');
  try {
    await insertTeam(tx, orgId, { id, name, createdAt: now.toISOString() });
  } catch (err) {
    // Two different keys creating the same name at once: the unique index decides.
    if (dbFailure(err) === 'unique_violation') throw taken();
    throw err;
  }
  await recordAudit(tx, orgId, actor, { action: 'team.created', target: { kind: 'team', id }, details: { name } }, now);
  return { id, name };
}

/** GET /teams: every team of the organization, by name (case-insensitive), then id. */
export async function listOrgTeams(db: Queryable, orgId: string) {
  return listTeams(db, orgId);
}
