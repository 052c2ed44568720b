import { parse } from 'csv-parse/sync';
import type { Queryable } from '../database.js';
import type { DatabaseExecutor } from '../../db/executor.js';
import { dbFailure } from '../../db/errors.js';
import {
  deleteRespondentRow,
  findRespondent,
  findRespondentByEmail,
  insertRespondent,
  listRespondentRows,
  setRespondentTeam,
  teamSizes,
  type RespondentRow,
} from '../../db/repositories/checkins.js';
import { findTeamByName, insertTeam } from '../../db/repositories/teams.js';
import { invalid, notFound } from '../../contract/errors.js';
import { recordAudit, type Actor } from '../audit.js';
import { newId } from '../ids.js';
import { requireLiveOrg } from '../orgs.js';

/**
 * The roster of check-ins (CONTRACT.md section 12): respondents, each an email and a team (or
 * none). Every change is audited with the respondent's id, never the address. A team of fewer
 * than MIN_TEAM respondents answers under the organization's key, without a team.
 */
export const MIN_TEAM = 5;
export const MAX_ROSTER = 50_000;

const EMAIL = /^[^\s@,;<>"\0]+@[^\s@,;<>"\0]+\.[^\s@,;<>"\0]+$/;

export interface Roster {
  respondents: (RespondentRow & { answersWithTeam: boolean })[];
  /** Teams with respondents, and whether they are big enough to answer as a team. */
  teams: { id: string; name: string; respondents: number; answersAsTeam: boolean }[];
}

export async function listRoster(db: Queryable, orgId: string): Promise<Roster> {
  const rows = await listRespondentRows(db, orgId);
  const sizes = await teamSizes(db, orgId);
  const names = new Map(rows.filter((r) => r.teamId).map((r) => [r.teamId!, r.teamName ?? r.teamId!]));
  return {
    respondents: rows.map((r) => ({ ...r, answersWithTeam: r.teamId !== null && (sizes.get(r.teamId) ?? 0) >= MIN_TEAM })),
    teams: [...sizes.entries()]
      .map(([id, n]) => ({ id, name: names.get(id) ?? id, respondents: n, answersAsTeam: n >= MIN_TEAM }))
      .sort((a, b) => a.name.localeCompare(b.name)),
  };
}

/** One respondent of the roster (email and team), or 404. */
export async function getRespondent(db: Queryable, orgId: string, id: string): Promise<RespondentRow> {
  const r = await findRespondent(db, orgId, id);
  if (!r) throw notFound('Respondent');
  return r;
}

function checkEmail(raw: unknown, field: string): string {
  if (typeof raw !== 'string') throw invalid(`'${field}' must be an email address.`);
  const email = raw.trim();
  if (email.length < 3 || email.length > 254 || !EMAIL.test(email)) throw invalid(`'${field}' must be an email address.`);
  return email;
}

function checkTeamName(raw: unknown, field: string): string | null {
  if (raw === null || raw === undefined) return null;
  if (typeof raw !== 'string') throw invalid(`'${field}' must be a team name or null.`);
  const name = raw.trim();
  if (name.includes('\0')) throw invalid(`'${field}' must not contain NUL.`);
  if (name === '') return null;
  if ([...name].length > 80) throw invalid(`'${field}' must be at most 80 characters.`);
  return name;
}

/** The team of that name, made (and audited) when the organization has none yet. */
async function teamNamed(tx: Queryable, orgId: string, name: string | null, actor: Actor, now: Date): Promise<string | null> {
  if (name === null) return null;
  const found = await findTeamByName(tx, orgId, name);
  if (found) return found.id;
  const id = newId('team');
  await insertTeam(tx, orgId, { id, name, createdAt: now.toISOString() });
  await recordAudit(tx, orgId, actor, { action: 'team.created', target: { kind: 'team', id }, details: { name } }, now);
  return id;
}

const taken = () => invalid("'email' is already on the roster.");

export async function createRespondent(
  db: DatabaseExecutor,
  orgId: string,
  input: { email: unknown; team?: unknown },
  actor: Actor,
  now: Date,
): Promise<{ id: string }> {
  const email = checkEmail(input.email, 'email');
  const teamName = checkTeamName(input.team, 'team');
  await requireLiveOrg(db, orgId);
  return db.transaction(async (tx) => {
    if (await findRespondentByEmail(tx, orgId, email)) throw taken();
    const teamId = await teamNamed(tx, orgId, teamName, actor, now);
    const id = newId('rsp');
    try {
      await insertRespondent(tx, orgId, { id, email, teamId, createdAt: now });
    } catch (err) {
      if (dbFailure(err) === 'unique_violation') throw taken();
      throw err;
    }
    await recordAudit(tx, orgId, actor, { action: 'respondent.added', target: { kind: 'respondent', id }, details: { team: teamId } }, now);
    return { id };
  });
}

export async function deleteRespondent(db: DatabaseExecutor, orgId: string, id: string, actor: Actor, now: Date): Promise<void> {
  await requireLiveOrg(db, orgId);
  await db.transaction(async (tx) => {
    if (!(await deleteRespondentRow(tx, orgId, id))) throw notFound('Respondent');
    await recordAudit(tx, orgId, actor, { action: 'respondent.removed', target: { kind: 'respondent', id } }, now);
  });
}

export async function moveRespondent(db: DatabaseExecutor, orgId: string, id: string, team: unknown, actor: Actor, now: Date): Promise<void> {
  const teamName = checkTeamName(team, 'team');
  await requireLiveOrg(db, orgId);
  await db.transaction(async (tx) => {
    if (!(await findRespondent(tx, orgId, id))) throw notFound('Respondent');
    const teamId = await teamNamed(tx, orgId, teamName, actor, now);
    await setRespondentTeam(tx, orgId, id, teamId, now);
    await recordAudit(tx, orgId, actor, { action: 'respondent.moved', target: { kind: 'respondent', id }, details: { team: teamId } }, now);
  });
}

export interface RosterReplaced {
  added: number;
  removed: number;
  moved: number;
  unchanged: number;
}

/** Parses and checks a whole `email,team` file; throws naming the first bad line and why. */
export function parseRosterCsv(text: string): { email: string; team: string | null }[] {
  if (text.includes('\0')) throw invalid("'csv' must not contain NUL.");
  let records: { record: string[]; info: { lines: number } }[];
  try {
    records = parse(text, { relax_column_count: true, skip_empty_lines: true, bom: true, trim: true, info: true }) as unknown as typeof records;
  } catch (err) {
    const line = (err as { lines?: number }).lines;
    throw invalid(`The CSV file does not parse${line ? ` (line ${line})` : ''}: quote a field that holds a comma or a quote.`);
  }
  if (records.length > 0 && records[0].record[0]?.toLowerCase() === 'email') records = records.slice(1);
  if (records.length > MAX_ROSTER) throw invalid(`The CSV file holds more than ${MAX_ROSTER} respondents.`);
  const seen = new Map<string, number>();
  return records.map(({ record: r, info }) => {
    const line = info.lines;
    if (r.length < 1 || r.length > 2) throw invalid(`Line ${line}: expected 'email,team', found ${r.length} fields.`);
    let email: string;
    let team: string | null;
    try {
      email = checkEmail(r[0], 'email');
      team = checkTeamName(r[1] ?? null, 'team');
    } catch (err) {
      throw invalid(`Line ${line}: ${(err as Error).message}`);
    }
    const key = email.toLowerCase();
    if (seen.has(key)) throw invalid(`Line ${line}: 'email' ${JSON.stringify(email)} is already on line ${seen.get(key)}.`);
    seen.set(key, line);
    return { email, team };
  });
}

/**
 * Replaces the roster with a CSV file of `email,team` (a header line `email,team` optional),
 * checked whole before anything changes: the first bad line is named with its reason and nothing
 * is written. Respondents keep their id when their email stays (their link of the week too).
 */
export async function replaceRoster(db: DatabaseExecutor, orgId: string, csv: string, actor: Actor, now: Date): Promise<RosterReplaced> {
  const rows = parseRosterCsv(csv);
  await requireLiveOrg(db, orgId);
  return db.transaction(async (tx) => {
    const current = new Map((await listRespondentRows(tx, orgId)).map((r) => [r.email.toLowerCase(), r]));
    const teamIds = new Map<string, string | null>();
    const result: RosterReplaced = { added: 0, removed: 0, moved: 0, unchanged: 0 };
    for (const row of rows) {
      const key = row.team?.toLowerCase() ?? '';
      if (!teamIds.has(key)) teamIds.set(key, await teamNamed(tx, orgId, row.team, actor, now));
      const teamId = teamIds.get(key)!;
      const had = current.get(row.email.toLowerCase());
      if (!had) {
        await insertRespondent(tx, orgId, { id: newId('rsp'), email: row.email, teamId, createdAt: now });
        result.added++;
      } else {
        current.delete(row.email.toLowerCase());
        if (had.teamId !== teamId) {
          await setRespondentTeam(tx, orgId, had.id, teamId, now);
          result.moved++;
        } else result.unchanged++;
      }
    }
    for (const gone of current.values()) {
      await deleteRespondentRow(tx, orgId, gone.id);
      result.removed++;
    }
    await recordAudit(tx, orgId, actor, { action: 'roster.replaced', target: { kind: 'roster', id: null }, details: { ...result } }, now);
    return result;
  });
}
