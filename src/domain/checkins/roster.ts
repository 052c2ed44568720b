import { parse } from 'csv-parse/sync';
import type { Queryable } from '../database.js';
import type { DatabaseExecutor } from '../../db/executor.js';
import { dbFailure } from '../../db/errors.js';
import {
  deleteRespondentRow,
  findRespondent,
  findRespondentByEmail,
  insertRespondent,
  respondentLanguage,
  respondentLanguages,
  setRespondentLanguage,
  listRespondentRows,
  respondentPage,
  respondentPageOfAll,
  setRespondentTeam,
  teamSizes,
  teamSummaryRows,
  type RespondentRow,
  type RespondentSource,
} from '../../db/repositories/checkins.js';
import { findTeamByName, insertTeam } from '../../db/repositories/teams.js';
import { invalid, notFound } from '../../contract/errors.js';
import { recordAudit, type Actor } from '../audit.js';
import { newId } from '../ids.js';
import { requireLiveOrg } from '../orgs.js';
import { rosterLanguage } from './settings.js';

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

export interface TeamSummary {
  /** null: the people without a team. */
  id: string | null;
  name: string | null;
  respondents: number;
  /** Joined the team (or the roster) in the last four weeks. */
  recentJoins: number;
  answersAsTeam: boolean;
}

export interface RosterPage {
  /** Everyone on the roster. */
  rosterSize: number;
  /** The teams first (by name), then the people without a team; the page's size does not grow with the roster, only with its teams. */
  teams: TeamSummary[];
  /** Those matching the search (everyone without one). */
  matching: number;
  page: number;
  pages: number;
  respondents: (RespondentRow & { answersWithTeam: boolean })[];
}

/**
 * One page of the roster (issue 52, L9: a 50,000-person roster is not one page), by address,
 * searched by address or team, with the teams' summary: size, recent joins, and whether they
 * answer as a team (5 or more) or count in the organization's total without a team.
 */
export async function rosterPage(db: Queryable, orgId: string, q: { search: string | null; page: number; pageSize: number }, now: Date): Promise<RosterPage> {
  const summary = await teamSummaryRows(db, orgId, new Date(now.getTime() - 28 * 86_400_000));
  const sizes = new Map(summary.filter((t) => t.team_id !== null).map((t) => [t.team_id!, t.n]));
  const teams: TeamSummary[] = summary
    .map((t) => ({
      id: t.team_id,
      name: t.team_name,
      respondents: t.n,
      recentJoins: t.recent,
      answersAsTeam: t.team_id !== null && t.n >= MIN_TEAM,
    }))
    .sort((a, b) => (a.id === null ? 1 : b.id === null ? -1 : (a.name ?? '').localeCompare(b.name ?? '')));
  const rosterSize = summary.reduce((n, t) => n + t.n, 0);
  // Without a search every person matches: the summary counted them, and the page is read alone.
  const pageOf = async (n: number) =>
    q.search
      ? respondentPage(db, orgId, { search: q.search, limit: q.pageSize, offset: (n - 1) * q.pageSize })
      : { total: rosterSize, rows: await respondentPageOfAll(db, orgId, { limit: q.pageSize, offset: (n - 1) * q.pageSize }) };
  const first = await pageOf(q.page);
  const pages = Math.max(1, Math.ceil(first.total / q.pageSize));
  // A page past the end (people removed since the link was made) shows the last one.
  const page = Math.min(q.page, pages);
  const rows = page === q.page ? first.rows : (await pageOf(page)).rows;
  return {
    rosterSize,
    teams,
    matching: first.total,
    page,
    pages,
    respondents: rows.map((r) => ({ ...r, answersWithTeam: r.teamId !== null && (sizes.get(r.teamId) ?? 0) >= MIN_TEAM })),
  };
}

/** One respondent of the roster (email and team), or 404. */
export async function getRespondent(db: Queryable, orgId: string, id: string): Promise<RespondentRow> {
  const r = await findRespondent(db, orgId, id);
  if (!r) throw notFound('Respondent');
  return r;
}

/** One respondent with their mail language (null: the organization's default), or 404. */
export async function getRespondentLanguage(db: Queryable, orgId: string, id: string): Promise<RespondentRow & { language: string | null }> {
  const r = await getRespondent(db, orgId, id);
  return { ...r, language: await respondentLanguage(db, orgId, id) };
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

/** Where a change by this actor puts a new person: SCIM's token makes them SCIM's, anything else is by hand. */
export const sourceOf = (actor: Actor): RespondentSource => (actor.kind === 'scim' ? 'scim' : 'console');

/**
 * A person whom SCIM owns is changed by SCIM alone (CONTRACT.md section 12, amended: *The roster
 * from SCIM*): the People page, the operator API and the CLI are refused, so the identity
 * provider's next sync never undoes a hand edit, nor a hand edit its.
 */
export function refuseHandEdit(r: { source: RespondentSource }, actor: Actor): void {
  if (r.source === 'scim' && actor.kind !== 'scim') {
    throw invalid("This person is kept by the organization's identity provider (SCIM): change them there.");
  }
}

/**
 * Adds one person inside the caller's transaction (the one add of every door: People page,
 * operator API, CLI, SCIM). `id`: a person SCIM turns on again keeps the id it had.
 */
export async function addRespondentIn(
  tx: Queryable,
  orgId: string,
  input: { email: string; team: string | null; id?: string; source?: RespondentSource },
  actor: Actor,
  now: Date,
): Promise<{ id: string }> {
  if (await findRespondentByEmail(tx, orgId, input.email)) throw taken();
  const teamId = await teamNamed(tx, orgId, input.team, actor, now);
  const id = input.id ?? newId('rsp');
  try {
    await insertRespondent(tx, orgId, { id, email: input.email, teamId, createdAt: now, source: input.source ?? sourceOf(actor) });
  } catch (err) {
    if (dbFailure(err) === 'unique_violation') throw taken();
    throw err;
  }
  await recordAudit(tx, orgId, actor, { action: 'respondent.added', target: { kind: 'respondent', id }, details: { team: teamId } }, now);
  return { id };
}

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
  return db.transaction((tx) => addRespondentIn(tx, orgId, { email, team: teamName }, actor, now));
}

/** Removes one person inside the caller's transaction (a removal by hand, or SCIM's `active: false` or DELETE). */
export async function removeRespondentIn(tx: Queryable, orgId: string, id: string, actor: Actor, now: Date): Promise<void> {
  const r = await findRespondent(tx, orgId, id);
  if (!r) throw notFound('Respondent');
  refuseHandEdit(r, actor);
  await deleteRespondentRow(tx, orgId, id);
  await recordAudit(tx, orgId, actor, { action: 'respondent.removed', target: { kind: 'respondent', id } }, now);
}

export async function deleteRespondent(db: DatabaseExecutor, orgId: string, id: string, actor: Actor, now: Date): Promise<void> {
  await requireLiveOrg(db, orgId);
  await db.transaction((tx) => removeRespondentIn(tx, orgId, id, actor, now));
}

/**
 * Moves one person inside the caller's transaction: to the team named (made when new), or to the
 * team of that id (SCIM's group memberships), or to none.
 */
export async function moveRespondentIn(
  tx: Queryable,
  orgId: string,
  id: string,
  team: { name: string | null } | { id: string | null },
  actor: Actor,
  now: Date,
): Promise<void> {
  const r = await findRespondent(tx, orgId, id);
  if (!r) throw notFound('Respondent');
  refuseHandEdit(r, actor);
  const teamId = 'name' in team ? await teamNamed(tx, orgId, team.name, actor, now) : team.id;
  await setRespondentTeam(tx, orgId, id, teamId, now);
  await recordAudit(tx, orgId, actor, { action: 'respondent.moved', target: { kind: 'respondent', id }, details: { team: teamId } }, now);
}

export async function moveRespondent(db: DatabaseExecutor, orgId: string, id: string, team: unknown, actor: Actor, now: Date): Promise<void> {
  const teamName = checkTeamName(team, 'team');
  await requireLiveOrg(db, orgId);
  await db.transaction((tx) => moveRespondentIn(tx, orgId, id, { name: teamName }, actor, now));
}

/**
 * Sets one person's language for the round's mails (issue 57: a roster column, as the people file's
 * language column sets it), or none (null or empty: the organization's default). Audited like the
 * roster's other changes, with the respondent's id; a person SCIM owns is refused, as their other
 * edits are. The mails read it when they go, so it applies to every mail not yet sent.
 */
export async function setRespondentLanguageBy(
  db: DatabaseExecutor,
  orgId: string,
  id: string,
  language: unknown,
  actor: Actor,
  now: Date,
): Promise<{ language: string | null }> {
  const locale = rosterLanguage(language);
  await requireLiveOrg(db, orgId);
  return db.transaction(async (tx) => {
    const r = await findRespondent(tx, orgId, id);
    if (!r) throw notFound('Respondent');
    refuseHandEdit(r, actor);
    await setRespondentLanguage(tx, orgId, id, locale);
    await recordAudit(tx, orgId, actor, { action: 'respondent.language_changed', target: { kind: 'respondent', id }, details: { language: locale } }, now);
    return { language: locale };
  });
}

export interface RosterReplaced {
  added: number;
  removed: number;
  moved: number;
  unchanged: number;
}

/** Header names that say which column is which (lower case, spaces and dashes ignored). */
const EMAIL_NAMES = new Set(['email', 'e-mail', 'mail', 'emailaddress', 'workemail', 'mailaddress']);
const TEAM_NAMES = new Set(['team', 'department', 'dept', 'group', 'teamname', 'departmentname']);
const nameKey = (h: string) =>
  h
    .trim()
    .toLowerCase()
    .replace(/[\s_-]+/g, '');
const isEmailName = (h: string) => EMAIL_NAMES.has(h.trim().toLowerCase()) || EMAIL_NAMES.has(nameKey(h));
const isTeamName = (h: string) => TEAM_NAMES.has(nameKey(h));
/** A people file's language column, by its name (issue 57): the person's language for the round's mails. */
const LANGUAGE_NAMES = new Set(['language', 'lang', 'locale', 'preferredlanguage', 'maillanguage']);

/** The columns of a roster file with a header row, as chosen by whoever uploads it: a header's name; team '' is "no team column". */
export interface RosterColumnChoice {
  email?: string;
  team?: string;
}

/**
 * One error of a roster file, as data: `line` (null for the whole file), what is wrong, and the
 * English sentence of `errors` for the API and the CLI. `field`: the domain's refusal of a cell
 * (its message names the field: 'email', 'team', 'language').
 */
export type RosterIssue = { line: number | null } & (
  | { kind: 'nul' }
  | { kind: 'unparsable' }
  | { kind: 'noColumn'; name: string; what: 'email' | 'team' }
  | { kind: 'sameName'; name: string; count: number }
  | { kind: 'tooMany'; max: number }
  | { kind: 'fields'; found: number }
  | { kind: 'field'; message: string }
  | { kind: 'duplicate'; email: string; first: number }
);

/** An issue's English sentence (the `errors` the API and the CLI show). */
export function issueText(i: RosterIssue): string {
  switch (i.kind) {
    case 'nul':
      return 'The file holds a NUL character: it is not a CSV text file.';
    case 'unparsable':
      return i.line === null || i.line === 0
        ? 'The file does not parse as CSV: quote a field that holds a comma or a quote.'
        : `Line ${i.line}: the line does not parse as CSV; quote a field that holds a comma or a quote.`;
    case 'noColumn':
      return `The file has no column named ${JSON.stringify(i.name)} for the ${i.what}.`;
    case 'sameName':
      return `The file has ${i.count} columns named ${JSON.stringify(i.name)}: rename one.`;
    case 'tooMany':
      return `The file holds more than ${i.max} people.`;
    case 'fields':
      return `Line ${i.line}: expected 'email,team', found ${i.found} fields.`;
    case 'field':
      return `Line ${i.line}: ${i.message}`;
    case 'duplicate':
      return `Line ${i.line}: 'email' ${JSON.stringify(i.email)} is already on line ${i.first}.`;
  }
}

export interface RosterFile {
  /** The rows, when the file has no error (else empty). */
  rows: { email: string; team: string | null; language?: string | null }[];
  /** Every error of the file at once, each with its line: `Line 3: ...`. */
  errors: string[];
  /** The same errors as data, in the same order, for pages that say them in their reader's language. */
  issues: RosterIssue[];
  /** The header row's names, when the file has one. */
  header: string[] | null;
  /** The columns read (indexes into the header; team null: none), or null when they must be chosen. */
  columns: { email: number; team: number | null } | null;
  /** What must be chosen before the file can be read (the header's names are not obvious). */
  choose: { email: boolean; team: boolean } | null;
}

/** At most this many errors are listed (with how many more there are): a wrong file of 50,000 lines should not make a page of 50,000. */
export const MAX_LISTED_ERRORS = 500;

function pickColumn(
  header: string[],
  chosen: string | undefined,
  obvious: (h: string) => boolean,
  what: 'email' | 'team',
  errors: RosterIssue[],
): number | null | undefined {
  if (chosen !== undefined) {
    if (chosen === '') return null;
    const at = header.flatMap((h, i) => (h.trim().toLowerCase() === chosen.trim().toLowerCase() ? [i] : []));
    if (at.length === 1) return at[0];
    errors.push(at.length === 0 ? { line: null, kind: 'noColumn', name: chosen, what } : { line: null, kind: 'sameName', name: chosen, count: at.length });
    return undefined;
  }
  const found = header.flatMap((h, i) => (obvious(h) ? [i] : []));
  return found.length === 1 ? found[0] : undefined;
}

/**
 * Reads a roster file (CSV, UTF-8, a BOM allowed) and reports every error at once. Either a header
 * row, whose extra columns are ignored and whose email and team columns are found by name (email,
 * e-mail, mail; team, department, group) or chosen by whoever uploads it when not obvious; or no
 * header, `email,team` per line (the operator's older files). Nothing is written here.
 */
export function readRosterCsv(text: string, choice: RosterColumnChoice = {}): RosterFile {
  const none: RosterFile = { rows: [], errors: [], issues: [], header: null, columns: null, choose: null };
  const refused = (issues: RosterIssue[]) => ({ errors: issues.map(issueText), issues });
  if (text.includes('\0')) return { ...none, ...refused([{ line: null, kind: 'nul' }]) };
  const errors: RosterIssue[] = [];
  let records: { record: string[]; info: { lines: number } }[];
  try {
    records = parse(text, {
      relax_column_count: true,
      skip_empty_lines: true,
      bom: true,
      trim: true,
      info: true,
      skip_records_with_error: true,
      on_skip: (err) => {
        errors.push({ line: (err as { lines?: number } | undefined)?.lines ?? null, kind: 'unparsable' });
      },
    }) as unknown as typeof records;
  } catch (err) {
    return { ...none, ...refused([{ line: (err as { lines?: number }).lines ?? null, kind: 'unparsable' }]) };
  }
  const first = records[0]?.record ?? [];
  const hasHeader = first.some((h) => isEmailName(h) || isTeamName(h)) || (first.length > 0 && !first.some((c) => EMAIL.test(c)));
  let header: string[] | null = null;
  let emailAt = 0;
  let teamAt: number | null = 1;
  let languageAt: number | null = null;
  if (hasHeader) {
    header = first;
    records = records.slice(1);
    const e = pickColumn(header, choice.email, isEmailName, 'email', errors);
    const t = pickColumn(header, choice.team, isTeamName, 'team', errors);
    if (errors.length > 0 && (choice.email !== undefined || choice.team !== undefined)) return { ...none, header, ...refused(errors) };
    if (e === undefined || e === null || t === undefined || e === t) {
      return { ...none, header, ...refused(errors), choose: { email: e === undefined || e === null || e === t, team: t === undefined } };
    }
    emailAt = e as number;
    teamAt = t;
    // An optional language column (issue 57): found by its name only, never chosen.
    const l = header.findIndex((h) => LANGUAGE_NAMES.has(nameKey(h)));
    languageAt = l >= 0 && l !== emailAt && l !== teamAt ? l : null;
  }
  if (records.length > MAX_ROSTER) return { ...none, header, ...refused([{ line: null, kind: 'tooMany', max: MAX_ROSTER }]) };
  const seen = new Map<string, number>();
  const rows: { email: string; team: string | null; language?: string | null }[] = [];
  for (const { record: r, info } of records) {
    const line = info.lines;
    if (!header && (r.length < 1 || r.length > 2)) {
      errors.push({ line, kind: 'fields', found: r.length });
      continue;
    }
    let email: string;
    let team: string | null;
    let language: string | null | undefined;
    try {
      email = checkEmail(r[emailAt] ?? '', 'email');
      team = checkTeamName(teamAt === null ? null : (r[teamAt] ?? null), 'team');
      language = languageAt === null ? undefined : rosterLanguage(r[languageAt] ?? null);
    } catch (err) {
      errors.push({ line, kind: 'field', message: (err as Error).message });
      continue;
    }
    const key = email.toLowerCase();
    if (seen.has(key)) {
      errors.push({ line, kind: 'duplicate', email, first: seen.get(key)! });
      continue;
    }
    seen.set(key, line);
    rows.push(language === undefined ? { email, team } : { email, team, language });
  }
  errors.sort((a, b) => (a.line ?? 0) - (b.line ?? 0));
  return { rows: errors.length > 0 ? [] : rows, ...refused(errors), header, columns: { email: emailAt, team: teamAt }, choose: null };
}

/** The refusal of a roster file: every error (up to MAX_LISTED_ERRORS, then how many more), or what to choose. */
export function rosterFileRefusal(file: RosterFile): string | null {
  if (file.choose) {
    const cols = (file.header ?? []).map((h) => JSON.stringify(h)).join(', ');
    const what = [file.choose.email ? 'the email' : null, file.choose.team ? "the team (or '' for none)" : null].filter(Boolean).join(' and ');
    return `${file.errors.length > 0 ? `${file.errors.join(' ')} ` : ''}Say which column holds ${what}: the file's columns are ${cols}.`;
  }
  if (file.errors.length === 0) return null;
  const listed = file.errors.slice(0, MAX_LISTED_ERRORS);
  const more = file.errors.length - listed.length;
  return `${file.errors.length === 1 ? '1 error' : `${file.errors.length} errors`}, nothing changed: ${listed.join(' ')}${more > 0 ? ` And ${more} more.` : ''}`;
}

/** Parses and checks a whole roster file; throws with every error at once (or what to choose). */
export function parseRosterCsv(text: string, choice: RosterColumnChoice = {}): { email: string; team: string | null; language?: string | null }[] {
  const file = readRosterCsv(text, choice);
  const refusal = rosterFileRefusal(file);
  if (refusal) throw invalid(refusal);
  return file.rows;
}

/**
 * Replaces the roster with a CSV file (readRosterCsv: a header row with extra columns, or
 * `email,team` lines), checked whole before anything changes: every bad line is named with its
 * reason and nothing is written. Respondents keep their id when their email stays (their link of the week too).
 * The people SCIM owns stay as SCIM keeps them, whether the file names them or not.
 */
export async function replaceRoster(
  db: DatabaseExecutor,
  orgId: string,
  csv: string,
  actor: Actor,
  now: Date,
  columns: RosterColumnChoice = {},
): Promise<RosterReplaced> {
  const rows = parseRosterCsv(csv, columns);
  await requireLiveOrg(db, orgId);
  return db.transaction(async (tx) => {
    const current = new Map((await listRespondentRows(tx, orgId)).map((r) => [r.email.toLowerCase(), r]));
    const languages = await respondentLanguages(tx, orgId);
    const teamIds = new Map<string, string | null>();
    const result: RosterReplaced = { added: 0, removed: 0, moved: 0, unchanged: 0 };
    for (const row of rows) {
      const key = row.team?.toLowerCase() ?? '';
      if (!teamIds.has(key)) teamIds.set(key, await teamNamed(tx, orgId, row.team, actor, now));
      const teamId = teamIds.get(key)!;
      const had = current.get(row.email.toLowerCase());
      if (!had) {
        await insertRespondent(tx, orgId, { id: newId('rsp'), email: row.email, teamId, createdAt: now, source: 'file', language: row.language ?? null });
        result.added++;
      } else {
        current.delete(row.email.toLowerCase());
        // A file with a language column sets each person's language (an empty cell: the organization's).
        if (row.language !== undefined && had.source !== 'scim' && (languages.get(had.id) ?? null) !== row.language)
          await setRespondentLanguage(tx, orgId, had.id, row.language);
        // SCIM keeps its people: the file neither moves nor removes them (they count as unchanged).
        if (had.source === 'scim') result.unchanged++;
        else if (had.teamId !== teamId) {
          await setRespondentTeam(tx, orgId, had.id, teamId, now);
          result.moved++;
        } else result.unchanged++;
      }
    }
    for (const gone of current.values()) {
      if (gone.source === 'scim') continue;
      await deleteRespondentRow(tx, orgId, gone.id);
      result.removed++;
    }
    await recordAudit(tx, orgId, actor, { action: 'roster.replaced', target: { kind: 'roster', id: null }, details: { ...result } }, now);
    return result;
  });
}

/** At most this many people in one change of several (a page of the console holds 50). */
export const MAX_BULK = 500;

function checkIds(ids: readonly string[]): string[] {
  const unique = [...new Set(ids)];
  if (unique.length === 0) throw invalid('Choose at least one person.');
  if (unique.length > MAX_BULK) throw invalid(`At most ${MAX_BULK} people can be changed at once.`);
  return unique;
}

/**
 * Moves several people into one team (or none), in one transaction: each move is audited as a
 * single move is (`respondent.moved`, with the respondent's id), and one unknown person refuses
 * them all. The week fixed at its start is unchanged: the moves apply from the next round.
 */
export async function moveRespondents(
  db: DatabaseExecutor,
  orgId: string,
  ids: readonly string[],
  team: unknown,
  actor: Actor,
  now: Date,
): Promise<{ moved: RespondentRow[] }> {
  const teamName = checkTeamName(team, 'team');
  const chosen = checkIds(ids);
  await requireLiveOrg(db, orgId);
  return db.transaction(async (tx) => {
    const people: RespondentRow[] = [];
    for (const id of chosen) {
      const r = await findRespondent(tx, orgId, id);
      if (!r) throw notFound('Respondent');
      people.push(r);
    }
    // A person SCIM keeps refuses the whole change, as a single move of theirs is refused.
    for (const p of people) refuseHandEdit(p, actor);
    const teamId = await teamNamed(tx, orgId, teamName, actor, now);
    for (const p of people) {
      await setRespondentTeam(tx, orgId, p.id, teamId, now);
      await recordAudit(tx, orgId, actor, { action: 'respondent.moved', target: { kind: 'respondent', id: p.id }, details: { team: teamId } }, now);
    }
    return { moved: people };
  });
}

/** Removes several people, in one transaction, each audited as a single removal is (`respondent.removed`); one unknown person refuses them all. */
export async function deleteRespondents(
  db: DatabaseExecutor,
  orgId: string,
  ids: readonly string[],
  actor: Actor,
  now: Date,
): Promise<{ removed: RespondentRow[] }> {
  const chosen = checkIds(ids);
  await requireLiveOrg(db, orgId);
  return db.transaction(async (tx) => {
    const people: RespondentRow[] = [];
    for (const id of chosen) {
      const r = await findRespondent(tx, orgId, id);
      if (!r) throw notFound('Respondent');
      people.push(r);
    }
    for (const p of people) refuseHandEdit(p, actor);
    for (const p of people) {
      await deleteRespondentRow(tx, orgId, p.id);
      await recordAudit(tx, orgId, actor, { action: 'respondent.removed', target: { kind: 'respondent', id: p.id } }, now);
    }
    return { removed: people };
  });
}
