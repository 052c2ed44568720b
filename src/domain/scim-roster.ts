import { createHash } from 'node:crypto';
import type { DatabaseExecutor, Queryable } from '../db/executor.js';
import { findTeamByName } from '../db/repositories/teams.js';
import {
  deleteInactiveUser,
  findScimGroup,
  findScimGroupByName,
  findScimUser,
  findScimUsersByEmail,
  findScimUsersByExternalId,
  findScimUsersByUserName,
  listScimGroups,
  listScimUsers,
  lockScimGroup,
  lockScimUser,
  markRespondentScim,
  readScimTeamFrom,
  scimGroupMembers,
  scimGroupPage,
  scimUserPage,
  setRespondentEmail,
  setTeamScimFields,
  touchRespondentsScim,
  writeInactiveUser,
  type ScimGroupRow,
  type ScimTeamFrom,
  type ScimUserRow,
} from '../db/repositories/scim.js';
import { setRespondentLanguage } from '../db/repositories/checkins.js';
import { ApiError, type ErrorCode } from '../contract/errors.js';
import { matchLocale } from '../i18n/index.js';
import { recordAudit, type Actor } from './audit.js';
import { addRespondentIn, moveRespondentIn, removeRespondentIn } from './checkins/roster.js';
import { newId } from './ids.js';
import { requireLiveOrg } from './orgs.js';
import { createTeam } from './teams.js';

export type { ScimGroupRow, ScimUserRow };

/**
 * SCIM's Users and Groups over the one roster (issue 56; CONTRACT.md section 12, amended: *The
 * roster from SCIM*). Users are the respondents (and the users SCIM turned off, kept aside so it
 * can read them and turn them on again); Groups are the teams. Every change of the roster goes
 * through the People page's own operations (src/domain/checkins/roster.ts: add, remove, move),
 * inside one transaction per SCIM request, audited as theirs are, with SCIM's token as the actor.
 * A round's roster was fixed when it started (its members and key slots): what SCIM changes
 * during the week applies from the next round, as every other door's change does.
 */

/** A SCIM answer that is not 200: its HTTP status and RFC 7644 `scimType`. */
export class ScimProblem extends ApiError {
  constructor(
    status: number,
    readonly scimType: string | undefined,
    message: string,
  ) {
    const code: ErrorCode = status === 404 ? 'not_found' : status === 409 ? 'invalid_transition' : status >= 500 ? 'internal_error' : 'invalid_request';
    super(code, message);
    (this as { statusCode: number }).statusCode = status;
  }
}

const invalidValue = (message: string) => new ScimProblem(400, 'invalidValue', message);
const uniqueness = (message: string) => new ScimProblem(409, 'uniqueness', message);
const userNotFound = (id: string) => new ScimProblem(404, undefined, `No user ${JSON.stringify(id)}.`);
const groupNotFound = (id: string) => new ScimProblem(404, undefined, `No group ${JSON.stringify(id)}.`);

const version = (parts: unknown[]) => createHash('sha256').update(JSON.stringify(parts)).digest('base64url').slice(0, 16);

/** A user's version (its ETag's value): changes whenever anything SCIM reads of it changes, through any door. */
export const userVersion = (u: ScimUserRow): string => version([u.email, u.userName, u.externalId, u.active, u.teamId, u.teamName, u.language]);

export interface ScimGroup extends ScimGroupRow {
  members: { id: string; userName: string }[];
}

export const groupVersion = (g: ScimGroup): string => version([g.name, g.externalId, g.members.map((m) => m.id)]);

/** The precondition of an `If-Match` header: the current version must be one of those listed (or `*`). */
export function checkIfMatch(ifMatch: string | undefined, current: string): void {
  if (ifMatch === undefined) return;
  const tags = ifMatch.split(',').map((t) => t.trim().replace(/^W\//, '').replace(/^"|"$/g, ''));
  if (!tags.includes('*') && !tags.includes(current)) throw new ScimProblem(412, undefined, 'The resource changed since the version given in If-Match.');
}

/** What SCIM says a user is, once its request is read. `department` and `language` undefined: not said (kept). */
export interface UserInput {
  userName: string;
  email: string;
  externalId: string | null;
  active: boolean;
  department?: string | null;
  /** RFC 7643's `preferredLanguage` as sent (a language tag); null: none. */
  language?: string | null;
}

export interface GroupInput {
  displayName: string;
  externalId: string | null;
  /** The users' ids, in any order. */
  members: string[];
}

const EMAIL = /^[^\s@,;<>"\0]+@[^\s@,;<>"\0]+\.[^\s@,;<>"\0]+$/;

function checkUser(input: UserInput): UserInput {
  const userName = input.userName.trim();
  const email = input.email.trim();
  if (userName.length < 1 || userName.length > 254 || userName.includes('\0')) throw invalidValue("'userName' must be 1-254 characters.");
  if (email.length < 3 || email.length > 254 || !EMAIL.test(email)) {
    throw invalidValue(`The user's address ${JSON.stringify(email)} (from 'emails', else 'userName') is not an email address.`);
  }
  if (input.externalId !== null && (input.externalId.length < 1 || input.externalId.length > 254)) throw invalidValue("'externalId' must be 1-254 characters.");
  let department = input.department;
  if (typeof department === 'string') {
    department = department.trim() || null;
    if (department !== null && [...department].length > 80) throw invalidValue("'department' must be at most 80 characters (a team's name).");
  }
  return { ...input, userName, email, department, language: rosterLanguageOf(input.language) };
}

/**
 * SCIM's `preferredLanguage` as the roster keeps it (issue 57): one of the offered locales, written as
 * the catalogue writes it (matchLocale: "tr-TR" → "tr"); a language not offered is kept as none, so
 * the organization's default applies. Never an error: the identity provider sends whatever its
 * directory holds, and a person is not refused for it.
 */
const rosterLanguageOf = (tag: string | null | undefined): string | null | undefined => (tag === undefined ? undefined : (matchLocale(tag) ?? null));

/** The roster's language of a person on the roster, as the people file writes it; said and different only. */
async function keepLanguage(tx: Queryable, orgId: string, id: string, language: string | null | undefined, had: string | null): Promise<boolean> {
  if (language === undefined || language === had) return false;
  await setRespondentLanguage(tx, orgId, id, language);
  return true;
}

/** The userName kept: none when it is the address itself (the address is then read back as userName). */
const storedUserName = (u: UserInput) => (u.userName.toLowerCase() === u.email.toLowerCase() && u.userName === u.email ? null : u.userName);

async function assertFree(tx: Queryable, orgId: string, u: UserInput, exceptId: string | null): Promise<void> {
  const others = (rows: ScimUserRow[]) => rows.filter((r) => r.id !== exceptId);
  if (others(await findScimUsersByUserName(tx, orgId, u.userName)).length > 0) throw uniqueness(`A user with userName ${JSON.stringify(u.userName)} exists.`);
  if (others(await findScimUsersByEmail(tx, orgId, u.email)).length > 0) throw uniqueness(`A user with the address ${JSON.stringify(u.email)} exists.`);
}

export async function scimTeamFrom(db: Queryable, orgId: string): Promise<ScimTeamFrom> {
  return readScimTeamFrom(db, orgId);
}

export async function getScimUser(db: Queryable, orgId: string, id: string): Promise<ScimUserRow> {
  const u = await findScimUser(db, orgId, id);
  if (!u) throw userNotFound(id);
  return u;
}

/** The users one indexed condition finds (SCIM's `eq` look-ups), by id. */
export async function findScimUsersBy(db: Queryable, orgId: string, by: 'id' | 'userName' | 'externalId' | 'email', value: string): Promise<ScimUserRow[]> {
  switch (by) {
    case 'id': {
      const u = await findScimUser(db, orgId, value);
      return u ? [u] : [];
    }
    case 'userName':
      return findScimUsersByUserName(db, orgId, value);
    case 'externalId':
      return findScimUsersByExternalId(db, orgId, value);
    case 'email':
      return findScimUsersByEmail(db, orgId, value);
  }
}

export const allScimUsers = (db: Queryable, orgId: string) => listScimUsers(db, orgId);
export const scimUsersPage = (db: Queryable, orgId: string, offset: number, limit: number) => scimUserPage(db, orgId, offset, limit);

/** Who the audit log names for SCIM: its token, never a member. */
function requireScimActor(actor: Actor): void {
  if (actor.kind !== 'scim') throw new Error('SCIM operations are made by a SCIM token');
}

/** POST /Users. */
export async function createScimUser(db: DatabaseExecutor, orgId: string, raw: UserInput, actor: Actor, now: Date): Promise<ScimUserRow> {
  requireScimActor(actor);
  const u = checkUser(raw);
  await requireLiveOrg(db, orgId);
  const id = await db.transaction(async (tx) => {
    const teamFrom = await readScimTeamFrom(tx, orgId);
    await assertFree(tx, orgId, u, null);
    const team = teamFrom === 'department' ? (u.department ?? null) : null;
    if (u.active) {
      const { id } = await addRespondentIn(tx, orgId, { email: u.email, team, source: 'scim' }, actor, now);
      await keepLanguage(tx, orgId, id, u.language, null);
      await markRespondentScim(tx, orgId, id, { userName: storedUserName(u), externalId: u.externalId, modifiedAt: now });
      return id;
    }
    const id = newId('rsp');
    const teamId = team ? ((await findTeamByName(tx, orgId, team))?.id ?? null) : null;
    await writeInactiveUser(tx, orgId, {
      id,
      email: u.email,
      userName: storedUserName(u),
      externalId: u.externalId,
      teamId,
      language: u.language ?? null,
      createdAt: now,
      modifiedAt: now,
    });
    await recordAudit(tx, orgId, actor, { action: 'scim_user.inactive', target: { kind: 'respondent', id } }, now);
    return id;
  });
  return getScimUser(db, orgId, id);
}

/**
 * PUT and PATCH /Users/{id}: `change` reads the current user (and how the organization maps
 * teams) and says what it becomes; the difference is applied by the roster's own operations, in
 * one transaction. `ifMatch`: the request's If-Match header, checked in that transaction.
 */
export async function updateScimUser(
  db: DatabaseExecutor,
  orgId: string,
  id: string,
  change: (current: ScimUserRow, teamFrom: ScimTeamFrom) => UserInput,
  ifMatch: string | undefined,
  actor: Actor,
  now: Date,
): Promise<ScimUserRow> {
  requireScimActor(actor);
  await requireLiveOrg(db, orgId);
  await db.transaction(async (tx) => {
    await lockScimUser(tx, orgId, id);
    const cur = await findScimUser(tx, orgId, id);
    if (!cur) throw userNotFound(id);
    checkIfMatch(ifMatch, userVersion(cur));
    const teamFrom = await readScimTeamFrom(tx, orgId);
    const u = checkUser(change(cur, teamFrom));
    const curUserName = cur.userName ?? cur.email;
    if (u.userName.toLowerCase() !== curUserName.toLowerCase() || u.email.toLowerCase() !== cur.email.toLowerCase()) await assertFree(tx, orgId, u, id);
    const department = teamFrom === 'department' ? u.department : undefined;
    const sameTeam = (name: string | null) => (name ?? '').toLowerCase() === (cur.teamName ?? '').toLowerCase();
    // The language SCIM said, else the one kept (on the roster or with the user turned off).
    const language = u.language !== undefined ? u.language : cur.language;
    /** The user as SCIM turned them off (or keeps them off): in the team SCIM says, else the one kept. */
    const keepOff = async () => {
      const teamId = department !== undefined && !sameTeam(department) ? department && ((await findTeamByName(tx, orgId, department))?.id ?? null) : cur.teamId;
      const user = { id, email: u.email, userName: storedUserName(u), externalId: u.externalId, teamId, language };
      await writeInactiveUser(tx, orgId, { ...user, createdAt: new Date(cur.createdAt), modifiedAt: now });
    };
    if (cur.active && u.active) {
      if (u.email !== cur.email) {
        await setRespondentEmail(tx, orgId, id, u.email);
        await recordAudit(tx, orgId, actor, { action: 'respondent.readdressed', target: { kind: 'respondent', id } }, now);
      }
      if (department !== undefined && !sameTeam(department)) await moveRespondentIn(tx, orgId, id, { name: department }, actor, now);
      const languageChanged = await keepLanguage(tx, orgId, id, u.language, cur.language);
      const same = u.email === cur.email && storedUserName(u) === cur.userName && u.externalId === cur.externalId && !languageChanged;
      if (!same || cur.source !== 'scim') await markRespondentScim(tx, orgId, id, { userName: storedUserName(u), externalId: u.externalId, modifiedAt: now });
    } else if (cur.active && !u.active) {
      await removeRespondentIn(tx, orgId, id, actor, now);
      await keepOff();
    } else if (!cur.active && u.active) {
      await deleteInactiveUser(tx, orgId, id);
      // Back in the team they had, unless SCIM removed that group meanwhile.
      const had = cur.teamId === null ? null : await findScimGroup(tx, orgId, cur.teamId);
      const team = department !== undefined ? department : had && !had.removed ? had.name : null;
      await addRespondentIn(tx, orgId, { id, email: u.email, team, source: 'scim' }, actor, now);
      await keepLanguage(tx, orgId, id, language, null);
      await markRespondentScim(tx, orgId, id, { userName: storedUserName(u), externalId: u.externalId, modifiedAt: now });
    } else {
      await keepOff();
      await recordAudit(tx, orgId, actor, { action: 'scim_user.inactive', target: { kind: 'respondent', id } }, now);
    }
  });
  return getScimUser(db, orgId, id);
}

/** DELETE /Users/{id}: off the roster (as a removal by hand) and forgotten. */
export async function deleteScimUser(db: DatabaseExecutor, orgId: string, id: string, ifMatch: string | undefined, actor: Actor, now: Date): Promise<void> {
  requireScimActor(actor);
  await requireLiveOrg(db, orgId);
  await db.transaction(async (tx) => {
    await lockScimUser(tx, orgId, id);
    const cur = await findScimUser(tx, orgId, id);
    if (!cur) throw userNotFound(id);
    checkIfMatch(ifMatch, userVersion(cur));
    if (cur.active) await removeRespondentIn(tx, orgId, id, actor, now);
    await deleteInactiveUser(tx, orgId, id);
    await recordAudit(tx, orgId, actor, { action: 'scim_user.deleted', target: { kind: 'respondent', id } }, now);
  });
}

// ---- groups ---------------------------------------------------------------------------------

async function withMembers(db: Queryable, orgId: string, rows: ScimGroupRow[]): Promise<ScimGroup[]> {
  const members = await scimGroupMembers(
    db,
    orgId,
    rows.map((r) => r.id),
  );
  return rows.map((r) => ({ ...r, members: members.get(r.id) ?? [] }));
}

export async function getScimGroup(db: Queryable, orgId: string, id: string): Promise<ScimGroup> {
  const g = await findScimGroup(db, orgId, id);
  if (!g || g.removed) throw groupNotFound(id);
  const { removed: _, ...row } = g;
  return (await withMembers(db, orgId, [row]))[0];
}

export async function findScimGroupsBy(db: Queryable, orgId: string, by: 'id' | 'displayName', value: string): Promise<ScimGroup[]> {
  const g = by === 'id' ? await findScimGroup(db, orgId, value) : await findScimGroupByName(db, orgId, value);
  if (!g || g.removed || (by === 'displayName' && g.name !== value.trim() && g.name.toLowerCase() !== value.trim().toLowerCase())) return [];
  const { removed: _, ...row } = g;
  return withMembers(db, orgId, [row]);
}

export async function allScimGroups(db: Queryable, orgId: string): Promise<ScimGroup[]> {
  return withMembers(db, orgId, await listScimGroups(db, orgId));
}

export async function scimGroupsPage(db: Queryable, orgId: string, offset: number, limit: number): Promise<{ total: number; rows: ScimGroup[] }> {
  const page = await scimGroupPage(db, orgId, offset, limit);
  return { total: page.total, rows: await withMembers(db, orgId, page.rows) };
}

function refuseInDepartmentMode(teamFrom: ScimTeamFrom): void {
  if (teamFrom === 'department') {
    throw new ScimProblem(
      400,
      'mutability',
      "This organization takes each user's team from the enterprise extension's 'department': its Groups are read-only here.",
    );
  }
}

function checkGroupName(raw: string): string {
  const name = raw.trim();
  if ([...name].length < 1 || [...name].length > 80 || name.includes('\0')) throw invalidValue("'displayName' must be 1-80 characters (a team's name).");
  return name;
}

/** Moves the users who join or leave the team, each through the People page's move, and marks them SCIM's. */
async function applyMembers(tx: Queryable, orgId: string, teamId: string, current: Set<string>, desired: Set<string>, actor: Actor, now: Date) {
  const joined = [...desired].filter((id) => !current.has(id));
  const left = [...current].filter((id) => !desired.has(id));
  for (const id of joined) {
    try {
      await moveRespondentIn(tx, orgId, id, { id: teamId }, actor, now);
    } catch (err) {
      if (!(err instanceof ApiError && err.code === 'not_found')) throw err;
      // Off the roster (SCIM turned them off): in no team until SCIM turns them on again.
      if (!(await findScimUser(tx, orgId, id))) throw invalidValue(`No user ${JSON.stringify(id)} to make a member.`);
    }
  }
  for (const id of left) await moveRespondentIn(tx, orgId, id, { id: null }, actor, now);
  await touchRespondentsScim(tx, orgId, [...joined, ...left], now);
}

/** POST /Groups: a team (or one SCIM removed, brought back), with its members. */
export async function createScimGroup(db: DatabaseExecutor, orgId: string, input: GroupInput, actor: Actor, now: Date): Promise<ScimGroup> {
  requireScimActor(actor);
  const name = checkGroupName(input.displayName);
  await requireLiveOrg(db, orgId);
  const id = await db.transaction(async (tx) => {
    refuseInDepartmentMode(await readScimTeamFrom(tx, orgId));
    const existing = await findScimGroupByName(tx, orgId, name);
    if (existing && !existing.removed) throw uniqueness(`A group named ${JSON.stringify(name)} exists.`);
    const id = existing ? existing.id : (await createTeam(tx, orgId, name, actor, now)).id;
    // A team SCIM removed comes back as it was (its pulses kept it).
    if (existing) await recordAudit(tx, orgId, actor, { action: 'team.created', target: { kind: 'team', id }, details: { name, restored: true } }, now);
    await setTeamScimFields(tx, orgId, id, { name, externalId: input.externalId, modifiedAt: now, removed: false });
    await applyMembers(tx, orgId, id, new Set(), new Set(input.members), actor, now);
    return id;
  });
  return getScimGroup(db, orgId, id);
}

/** PUT and PATCH /Groups/{id}: a rename, an externalId, members joining and leaving, in one transaction. */
export async function updateScimGroup(
  db: DatabaseExecutor,
  orgId: string,
  id: string,
  change: (current: ScimGroup) => GroupInput,
  ifMatch: string | undefined,
  actor: Actor,
  now: Date,
): Promise<ScimGroup> {
  requireScimActor(actor);
  await requireLiveOrg(db, orgId);
  await db.transaction(async (tx) => {
    await lockScimGroup(tx, orgId, id);
    const cur = await getScimGroup(tx, orgId, id);
    checkIfMatch(ifMatch, groupVersion(cur));
    const input = change(cur);
    refuseInDepartmentMode(await readScimTeamFrom(tx, orgId));
    const name = checkGroupName(input.displayName);
    if (name !== cur.name) {
      const other = await findScimGroupByName(tx, orgId, name);
      if (other && other.id !== id) throw uniqueness(`A group named ${JSON.stringify(name)} exists.`);
      await recordAudit(tx, orgId, actor, { action: 'team.renamed', target: { kind: 'team', id }, details: { name } }, now);
    }
    const current = new Set(cur.members.map((m) => m.id));
    const desired = new Set(input.members);
    const membersChanged = current.size !== desired.size || [...desired].some((m) => !current.has(m));
    if (name !== cur.name || input.externalId !== cur.externalId || membersChanged) {
      await setTeamScimFields(tx, orgId, id, { name, externalId: input.externalId, modifiedAt: now, removed: false });
    }
    if (membersChanged) await applyMembers(tx, orgId, id, current, desired, actor, now);
  });
  return getScimGroup(db, orgId, id);
}

/**
 * DELETE /Groups/{id}: its people leave it (they stay on the roster, without a team) and SCIM no
 * longer reads it; the team stays in the history of its pulses.
 */
export async function deleteScimGroup(db: DatabaseExecutor, orgId: string, id: string, ifMatch: string | undefined, actor: Actor, now: Date): Promise<void> {
  requireScimActor(actor);
  await requireLiveOrg(db, orgId);
  await db.transaction(async (tx) => {
    await lockScimGroup(tx, orgId, id);
    const cur = await getScimGroup(tx, orgId, id);
    checkIfMatch(ifMatch, groupVersion(cur));
    refuseInDepartmentMode(await readScimTeamFrom(tx, orgId));
    await applyMembers(tx, orgId, id, new Set(cur.members.map((m) => m.id)), new Set(), actor, now);
    await setTeamScimFields(tx, orgId, id, { name: cur.name, externalId: cur.externalId, modifiedAt: now, removed: true });
    await recordAudit(tx, orgId, actor, { action: 'team.removed', target: { kind: 'team', id }, details: { members: cur.members.length } }, now);
  });
}
