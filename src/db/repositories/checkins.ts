import { sql, type Queryable } from '../executor.js';
import { arrayLiteral } from '../pulse-writes.js';

/**
 * The check-ins' tables (migration 0023, CONTRACT.md section 12): the roster, the organization's
 * settings, the keys of each (team, week), the rounds and links, and the spent tokens. Weeks are
 * ISO weeks named by their Monday (`YYYY-MM-DD`, read as text so no driver turns them into local
 * times). A team slot is a team's id, or '' for the organization's own key (teams of fewer than 5).
 */

const iso = (d: Date | string) => (d instanceof Date ? d : new Date(d)).toISOString();

export interface RespondentRow {
  id: string;
  email: string;
  teamId: string | null;
  teamName: string | null;
  createdAt: string;
  /** Where the person came from (migration 0031): the people file, by hand, or SCIM (then not edited by hand). */
  source: RespondentSource;
  /** The person's language for the round's mails (issue 57), null for the organization's default; read by the roster's pages only. */
  language?: string | null;
}
export type RespondentSource = 'file' | 'console' | 'scim';

const listRespondentsQuery = sql(
  'respondents.list',
  `SELECT r.id, r.email, r.team_id, t.name AS team_name, r.created_at, r.source
     FROM respondents r LEFT JOIN teams t ON t.org_id = r.org_id AND t.id = r.team_id
    WHERE r.org_id = $1
    ORDER BY lower(r.email), r.id`,
);
type DbRespondent = {
  id: string;
  email: string;
  team_id: string | null;
  team_name: string | null;
  created_at: Date;
  source: RespondentSource;
  language?: string | null;
};
const toRespondent = (r: DbRespondent): RespondentRow => ({
  id: r.id,
  email: r.email,
  teamId: r.team_id,
  teamName: r.team_name,
  createdAt: iso(r.created_at),
  source: r.source,
  ...(r.language !== undefined ? { language: r.language } : {}),
});

export async function listRespondentRows(db: Queryable, orgId: string): Promise<RespondentRow[]> {
  return (await db.query<DbRespondent>(listRespondentsQuery, [orgId])).map(toRespondent);
}

const byEmailQuery = sql(
  'respondents.by_email',
  `SELECT id, email, team_id, NULL::text AS team_name, created_at, source FROM respondents WHERE org_id = $1 AND lower(email) = lower($2)`,
);
export async function findRespondentByEmail(db: Queryable, orgId: string, email: string): Promise<RespondentRow | null> {
  const [r] = await db.query<DbRespondent>(byEmailQuery, [orgId, email]);
  return r ? toRespondent(r) : null;
}

const byIdQuery = sql(
  'respondents.by_id',
  `SELECT id, email, team_id, NULL::text AS team_name, created_at, source FROM respondents WHERE org_id = $1 AND id = $2`,
);
export async function findRespondent(db: Queryable, orgId: string, id: string): Promise<RespondentRow | null> {
  const [r] = await db.query<DbRespondent>(byIdQuery, [orgId, id]);
  return r ? toRespondent(r) : null;
}

const insertRespondentQuery = sql(
  'respondents.insert',
  `INSERT INTO respondents (org_id, id, email, team_id, created_at, team_since, source, language) VALUES ($1, $2, $3, $4, $5, $5, $6, $7)`,
);
export async function insertRespondent(
  db: Queryable,
  orgId: string,
  r: { id: string; email: string; teamId: string | null; createdAt: Date; source?: RespondentSource; language?: string | null },
) {
  await db.query(insertRespondentQuery, [orgId, r.id, r.email, r.teamId, r.createdAt.toISOString(), r.source ?? 'console', r.language ?? null]);
}

/** A respondent's language for the round's mails (issue 57): null for the organization's default. */
const setLanguageQuery = sql('respondents.set_language', `UPDATE respondents SET language = $3 WHERE org_id = $1 AND id = $2`);
export async function setRespondentLanguage(db: Queryable, orgId: string, id: string, language: string | null) {
  await db.query(setLanguageQuery, [orgId, id, language]);
}
const languageOfQuery = sql('respondents.language', `SELECT language FROM respondents WHERE org_id = $1 AND id = $2`);
/** One respondent's language (null: the organization's default, or no such respondent). */
export async function respondentLanguage(db: Queryable, orgId: string, id: string): Promise<string | null> {
  const [r] = await db.query<{ language: string | null }>(languageOfQuery, [orgId, id]);
  return r?.language ?? null;
}
const languagesQuery = sql('respondents.languages', `SELECT id, language FROM respondents WHERE org_id = $1 AND language IS NOT NULL`);
/** The roster's languages by respondent id (only the people whose row names one). */
export async function respondentLanguages(db: Queryable, orgId: string): Promise<Map<string, string>> {
  return new Map((await db.query<{ id: string; language: string }>(languagesQuery, [orgId])).map((r) => [r.id, r.language]));
}

const deleteRespondentQuery = sql('respondents.delete', `DELETE FROM respondents WHERE org_id = $1 AND id = $2 RETURNING id`);
export async function deleteRespondentRow(db: Queryable, orgId: string, id: string): Promise<boolean> {
  return (await db.query(deleteRespondentQuery, [orgId, id])).length > 0;
}

/** A new team, joined now (`team_since`: the page counts who joined a team in the last four weeks). */
const moveRespondentQuery = sql(
  'respondents.move',
  `UPDATE respondents SET team_id = $3, team_since = CASE WHEN team_id IS DISTINCT FROM $3 THEN $4::timestamptz ELSE team_since END
    WHERE org_id = $1 AND id = $2 RETURNING id`,
);
export async function setRespondentTeam(db: Queryable, orgId: string, id: string, teamId: string | null, now: Date): Promise<boolean> {
  return (await db.query(moveRespondentQuery, [orgId, id, teamId, now.toISOString()])).length > 0;
}

const teamSizesQuery = sql(
  'respondents.team_sizes',
  `SELECT team_id, count(*)::int AS n FROM respondents WHERE org_id = $1 AND team_id IS NOT NULL GROUP BY team_id`,
);
/** Respondents on the roster per team. */
export async function teamSizes(db: Queryable, orgId: string): Promise<Map<string, number>> {
  return new Map((await db.query<{ team_id: string; n: number }>(teamSizesQuery, [orgId])).map((r) => [r.team_id, r.n]));
}

export interface CheckinSettingsRow {
  weekday: number;
  hour: number;
  timeZone: string;
  reminderWeekday: number | null;
  reasons: string[];
  flagWords: string[];
}

export const DEFAULT_CHECKIN_SETTINGS: CheckinSettingsRow = { weekday: 1, hour: 9, timeZone: 'UTC', reminderWeekday: 4, reasons: [], flagWords: [] };

const settingsQuery = sql(
  'checkin_settings.read',
  `SELECT weekday, hour, time_zone, reminder_weekday, reasons, flag_words FROM checkin_settings WHERE org_id = $1`,
);
type DbSettings = { weekday: number; hour: number; time_zone: string; reminder_weekday: number | null; reasons: string[]; flag_words: string[] };

export async function readCheckinSettings(db: Queryable, orgId: string): Promise<CheckinSettingsRow> {
  const [r] = await db.query<DbSettings>(settingsQuery, [orgId]);
  if (!r) return { ...DEFAULT_CHECKIN_SETTINGS };
  return { weekday: r.weekday, hour: r.hour, timeZone: r.time_zone, reminderWeekday: r.reminder_weekday, reasons: r.reasons, flagWords: r.flag_words };
}

const upsertSettingsQuery = sql(
  'checkin_settings.upsert',
  `INSERT INTO checkin_settings (org_id, weekday, hour, time_zone, reminder_weekday, reasons, flag_words, updated_at)
   VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
   ON CONFLICT (org_id) DO UPDATE SET weekday = $2, hour = $3, time_zone = $4, reminder_weekday = $5, reasons = $6, flag_words = $7, updated_at = $8`,
);
export async function writeCheckinSettings(db: Queryable, orgId: string, s: CheckinSettingsRow, now: Date) {
  await db.query(upsertSettingsQuery, [orgId, s.weekday, s.hour, s.timeZone, s.reminderWeekday, s.reasons, s.flagWords, now.toISOString()]);
}

/** The organization's default language for the round's mails (issue 57): its people's, unless the roster names theirs. */
const languageQuery = sql('checkin_settings.language', `SELECT language FROM checkin_settings WHERE org_id = $1`);
export async function readCheckinLanguage(db: Queryable, orgId: string): Promise<string> {
  const [r] = await db.query<{ language: string }>(languageQuery, [orgId]);
  return r?.language ?? 'en';
}
/** The organization's time zone and default language at once: what every console page speaks by. */
const zoneAndLanguageQuery = sql('checkin_settings.zone_language', `SELECT time_zone, language FROM checkin_settings WHERE org_id = $1`);
export async function readCheckinZoneAndLanguage(db: Queryable, orgId: string): Promise<{ timeZone: string; language: string }> {
  const [r] = await db.query<{ time_zone: string; language: string }>(zoneAndLanguageQuery, [orgId]);
  return r ? { timeZone: r.time_zone, language: r.language } : { timeZone: DEFAULT_CHECKIN_SETTINGS.timeZone, language: 'en' };
}
const writeLanguageQuery = sql(
  'checkin_settings.write_language',
  `INSERT INTO checkin_settings (org_id, weekday, hour, time_zone, reminder_weekday, reasons, flag_words, updated_at, language)
   VALUES ($1, $3, $4, $5, $6, $7, $8, $9, $2)
   ON CONFLICT (org_id) DO UPDATE SET language = $2, updated_at = $9`,
);
export async function writeCheckinLanguage(db: Queryable, orgId: string, language: string, now: Date) {
  const d = DEFAULT_CHECKIN_SETTINGS;
  await db.query(writeLanguageQuery, [orgId, language, d.weekday, d.hour, d.timeZone, d.reminderWeekday, d.reasons, d.flagWords, now.toISOString()]);
}

export interface CheckinKeyRow {
  id: string;
  week: string;
  teamSlot: string;
  publicSpki: Buffer;
  privateSealed: Buffer;
}
type DbKey = { id: string; week: string; team_slot: string; public_spki: Uint8Array; private_sealed: Uint8Array };
const toKey = (r: DbKey): CheckinKeyRow => ({
  id: r.id,
  week: r.week,
  teamSlot: r.team_slot,
  publicSpki: Buffer.from(r.public_spki),
  privateSealed: Buffer.from(r.private_sealed),
});
const KEY_COLUMNS = 'id, week::text AS week, team_slot, public_spki, private_sealed';

const keyByIdQuery = sql('checkin_keys.by_id', `SELECT ${KEY_COLUMNS} FROM checkin_keys WHERE org_id = $1 AND id = $2`);
export async function findCheckinKey(db: Queryable, orgId: string, id: string): Promise<CheckinKeyRow | null> {
  const [r] = await db.query<DbKey>(keyByIdQuery, [orgId, id]);
  return r ? toKey(r) : null;
}

const keyBySlotQuery = sql('checkin_keys.by_slot', `SELECT ${KEY_COLUMNS} FROM checkin_keys WHERE org_id = $1 AND week = $2::date AND team_slot = $3`);
export async function findCheckinKeyFor(db: Queryable, orgId: string, week: string, teamSlot: string): Promise<CheckinKeyRow | null> {
  const [r] = await db.query<DbKey>(keyBySlotQuery, [orgId, week, teamSlot]);
  return r ? toKey(r) : null;
}

const insertKeyQuery = sql(
  'checkin_keys.insert',
  `INSERT INTO checkin_keys (org_id, id, week, team_slot, public_spki, private_sealed) VALUES ($1, $2, $3::date, $4, $5, $6)
   ON CONFLICT (org_id, week, team_slot) DO NOTHING`,
);
/** Inserts the key unless (week, team) has one already; the caller reads whichever won. */
export async function insertCheckinKey(db: Queryable, orgId: string, k: CheckinKeyRow) {
  await db.query(insertKeyQuery, [orgId, k.id, k.week, k.teamSlot, k.publicSpki, k.privateSealed]);
}

const publishedQuery = sql(
  'checkin_keys.published',
  `SELECT k.id, k.week::text AS week, k.team_slot, k.public_spki, t.name AS team_name
     FROM checkin_keys k
     JOIN checkin_round_slots s ON s.org_id = k.org_id AND s.week = k.week AND s.team_slot = k.team_slot
     LEFT JOIN teams t ON t.org_id = k.org_id AND t.id = k.team_slot
    WHERE k.org_id = $1 AND k.week >= $2::date
    ORDER BY k.week DESC, k.team_slot`,
);
export async function listPublishedKeys(db: Queryable, orgId: string, fromWeek: string) {
  const rows = await db.query<{ id: string; week: string; team_slot: string; public_spki: Uint8Array; team_name: string | null }>(publishedQuery, [
    orgId,
    fromWeek,
  ]);
  return rows.map((r) => ({ id: r.id, week: r.week, teamSlot: r.team_slot, teamName: r.team_name, publicSpki: Buffer.from(r.public_spki) }));
}

/**
 * The round of a week, fixed at its start: made once (its primary key decides among processes),
 * with the reasons and flag words in force then. Returns whether this call made it.
 */
const insertRoundQuery = sql(
  'checkin_rounds.insert',
  `INSERT INTO checkin_rounds (org_id, week, started_at, reasons, flag_words, by_mail) VALUES ($1, $2::date, $3, $4, $5, $6) ON CONFLICT DO NOTHING RETURNING week`,
);
export async function insertRound(
  db: Queryable,
  orgId: string,
  week: string,
  r: { startedAt: Date; reasons: string[]; flagWords: string[]; byMail: boolean },
): Promise<boolean> {
  return (await db.query(insertRoundQuery, [orgId, week, r.startedAt.toISOString(), r.reasons, r.flagWords, r.byMail])).length > 0;
}

export interface RoundRow {
  week: string;
  startedAt: string;
  reasons: string[];
  flagWords: string[];
}
const roundQuery = sql(
  'checkin_rounds.read',
  `SELECT week::text AS week, started_at, reasons, flag_words FROM checkin_rounds WHERE org_id = $1 AND week = $2::date`,
);
export async function findRound(db: Queryable, orgId: string, week: string): Promise<RoundRow | null> {
  const [r] = await db.query<{ week: string; started_at: Date; reasons: string[]; flag_words: string[] }>(roundQuery, [orgId, week]);
  return r ? { week: r.week, startedAt: iso(r.started_at), reasons: r.reasons, flagWords: r.flag_words } : null;
}

/** The roster as the round takes it: who, in which team, since when. */
const rosterForRoundQuery = sql('respondents.for_round', `SELECT id, team_id, team_since FROM respondents WHERE org_id = $1 ORDER BY id`);
export async function rosterForRound(db: Queryable, orgId: string) {
  return (await db.query<{ id: string; team_id: string | null; team_since: Date }>(rosterForRoundQuery, [orgId])).map((r) => ({
    id: r.id,
    teamId: r.team_id,
    teamSince: new Date(r.team_since),
  }));
}

export interface SlotRow {
  teamSlot: string;
  respondents: number;
  recentJoiners: number;
  capacity: number;
  answered: number;
}
const insertSlotsQuery = sql(
  'checkin_round_slots.insert',
  `INSERT INTO checkin_round_slots (org_id, week, team_slot, respondents, recent_joiners, capacity)
   SELECT $1, $2::date, s, n, j, c FROM unnest($3::text[], $4::int[], $5::int[], $6::int[]) AS u(s, n, j, c)`,
);
export async function insertSlots(db: Queryable, orgId: string, week: string, slots: readonly Omit<SlotRow, 'answered'>[]) {
  await db.query(insertSlotsQuery, [
    orgId,
    week,
    arrayLiteral(slots.map((s) => s.teamSlot)),
    arrayLiteral(slots.map((s) => s.respondents)),
    arrayLiteral(slots.map((s) => s.recentJoiners)),
    arrayLiteral(slots.map((s) => s.capacity)),
  ]);
}
const slotsQuery = sql(
  'checkin_round_slots.list',
  `SELECT team_slot, respondents, recent_joiners, capacity, answered FROM checkin_round_slots WHERE org_id = $1 AND week = $2::date ORDER BY team_slot`,
);
type DbSlot = { team_slot: string; respondents: number; recent_joiners: number; capacity: number; answered: number };
const toSlot = (r: DbSlot): SlotRow => ({
  teamSlot: r.team_slot,
  respondents: r.respondents,
  recentJoiners: r.recent_joiners,
  capacity: r.capacity,
  answered: r.answered,
});
export async function roundSlots(db: Queryable, orgId: string, week: string): Promise<SlotRow[]> {
  return (await db.query<DbSlot>(slotsQuery, [orgId, week])).map(toSlot);
}

const slotExistsQuery = sql('checkin_round_slots.exists', `SELECT 1 AS x FROM checkin_round_slots WHERE org_id = $1 AND week = $2::date AND team_slot = $3`);
/** Whether a round of the week started with that key slot: keys are made for such slots only. */
export async function slotExists(db: Queryable, orgId: string, week: string, teamSlot: string): Promise<boolean> {
  return (await db.query(slotExistsQuery, [orgId, week, teamSlot])).length > 0;
}

/**
 * Takes `n` answers from the slot's key when it has room for them all; false when it has not (the
 * key accepts at most as many answers as the people it was made for). The row's lock orders the
 * answers of one key, as the rollups' do.
 */
const takeAnswersQuery = sql(
  'checkin_round_slots.take',
  `UPDATE checkin_round_slots SET answered = answered + $4
    WHERE org_id = $1 AND week = $2::date AND team_slot = $3 AND answered + $4 <= capacity
   RETURNING answered`,
);
export async function takeAnswers(db: Queryable, orgId: string, week: string, teamSlot: string, n: number): Promise<boolean> {
  return (await db.query(takeAnswersQuery, [orgId, week, teamSlot, n])).length > 0;
}

const insertMembersQuery = sql(
  'checkin_round_members.insert',
  `INSERT INTO checkin_round_members (org_id, week, respondent_id, team_slot)
   SELECT $1, $2::date, r, s FROM unnest($3::text[], $4::text[]) AS u(r, s)`,
);
export async function insertMembers(db: Queryable, orgId: string, week: string, members: readonly { respondentId: string; teamSlot: string }[]) {
  await db.query(insertMembersQuery, [orgId, week, arrayLiteral(members.map((m) => m.respondentId)), arrayLiteral(members.map((m) => m.teamSlot))]);
}
const memberQuery = sql(
  'checkin_round_members.find',
  `SELECT team_slot FROM checkin_round_members WHERE org_id = $1 AND week = $2::date AND respondent_id = $3`,
);
/** The key slot the respondent answers under in the week's round; null when they are not on it. */
export async function memberSlot(db: Queryable, orgId: string, week: string, respondentId: string): Promise<string | null> {
  const [r] = await db.query<{ team_slot: string }>(memberQuery, [orgId, week, respondentId]);
  return r ? r.team_slot : null;
}
const membersQuery = sql(
  'checkin_round_members.list',
  `SELECT respondent_id, team_slot FROM checkin_round_members WHERE org_id = $1 AND week = $2::date ORDER BY respondent_id`,
);
export async function roundMembers(db: Queryable, orgId: string, week: string) {
  return (await db.query<{ respondent_id: string; team_slot: string }>(membersQuery, [orgId, week])).map((r) => ({
    respondentId: r.respondent_id,
    teamSlot: r.team_slot,
  }));
}

/** Links that name no one, in the order given (the caller's random order), in one statement. */
const insertLinksQuery = sql(
  'checkin_round_links.insert',
  `INSERT INTO checkin_round_links (org_id, token_hash, week, team_slot)
   SELECT $1, decode(h, 'hex'), $2::date, s FROM unnest($3::text[], $4::text[]) WITH ORDINALITY AS u(h, s, i) ORDER BY i`,
);
export async function insertLinks(db: Queryable, orgId: string, week: string, links: readonly { hashHex: string; teamSlot: string }[]) {
  if (links.length === 0) return;
  await db.query(insertLinksQuery, [orgId, week, arrayLiteral(links.map((l) => l.hashHex)), arrayLiteral(links.map((l) => l.teamSlot))]);
}

export interface OutboxRow {
  id: string;
  respondentId: string;
  kind: 'first' | 'reminder' | 'resent';
  /** The link's token sealed by one process (src/domain/checkins/outbox-seal.ts); null for a reminder. */
  tokenSealed: string | null;
  sealedBy: string | null;
  /** Until when only the sealing process may send it (it renews this at each try). */
  sealedUntil: Date | null;
  dueAt: Date;
}
const insertOutboxQuery = sql(
  'checkin_outbox.insert',
  `INSERT INTO checkin_outbox (org_id, id, week, respondent_id, kind, token_sealed, sealed_by, sealed_until, due_at)
   SELECT $1, i, $2::date, r, k, t, b, su::timestamptz, d::timestamptz
     FROM unnest($3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[], $9::text[]) WITH ORDINALITY AS u(i, r, k, t, b, su, d, n) ORDER BY n`,
);
export async function insertOutbox(db: Queryable, orgId: string, week: string, rows: readonly OutboxRow[]) {
  if (rows.length === 0) return;
  await db.query(insertOutboxQuery, [
    orgId,
    week,
    arrayLiteral(rows.map((r) => r.id)),
    arrayLiteral(rows.map((r) => r.respondentId)),
    arrayLiteral(rows.map((r) => r.kind)),
    arrayLiteral(rows.map((r) => r.tokenSealed)),
    arrayLiteral(rows.map((r) => r.sealedBy)),
    arrayLiteral(rows.map((r) => r.sealedUntil?.toISOString() ?? null)),
    arrayLiteral(rows.map((r) => r.dueAt.toISOString())),
  ]);
}

/**
 * Takes up to $4 mails of the week that are due and that no other process holds, and holds them
 * until $3, with their address: reminders, rows this process sealed ($6, their seal renewed until
 * $7), and rows sealed by a process that is gone (its seal not renewed in time), which the caller
 * gives new links.
 */
const claimOutboxQuery = sql(
  'checkin_outbox.claim',
  `WITH due AS (
     SELECT o.org_id, o.id FROM checkin_outbox o
      WHERE o.org_id = $1 AND o.week = $2::date AND o.due_at <= $5
        AND (o.lease_until IS NULL OR o.lease_until < $5)
        AND (o.sealed_by IS NULL OR o.sealed_by = $6 OR o.sealed_until < $5)
      ORDER BY o.id
      LIMIT $4
      FOR UPDATE SKIP LOCKED)
   UPDATE checkin_outbox o SET lease_until = $3, sealed_until = CASE WHEN o.sealed_by = $6 THEN $7::timestamptz ELSE o.sealed_until END
     FROM due, respondents r
    WHERE o.org_id = due.org_id AND o.id = due.id
      AND r.org_id = o.org_id AND r.id = o.respondent_id
   RETURNING o.id, o.kind, o.respondent_id, o.token_sealed, o.sealed_by, r.email, r.language`,
);
export async function claimOutbox(db: Queryable, orgId: string, week: string, limit: number, now: Date, leaseUntil: Date, sealId: string, sealedUntil: Date) {
  return db.query<{
    id: string;
    kind: OutboxRow['kind'];
    respondent_id: string;
    token_sealed: string | null;
    sealed_by: string | null;
    email: string;
    language: string | null;
  }>(claimOutboxQuery, [orgId, week, leaseUntil.toISOString(), limit, now.toISOString(), sealId, sealedUntil.toISOString()]);
}

const resealOutboxQuery = sql(
  'checkin_outbox.reseal',
  `UPDATE checkin_outbox SET token_sealed = $3, sealed_by = $4, sealed_until = $5 WHERE org_id = $1 AND id = $2`,
);
/** A new link's token for a waiting mail whose sealing process is gone. */
export async function resealOutboxRow(db: Queryable, orgId: string, id: string, tokenSealed: string, sealedBy: string, sealedUntil: Date) {
  await db.query(resealOutboxQuery, [orgId, id, tokenSealed, sealedBy, sealedUntil.toISOString()]);
}

const eraseOutboxQuery = sql('checkin_outbox.erase', `DELETE FROM checkin_outbox WHERE org_id = $1 AND id = $2`);
/** The relay took the mail: the row that tied its person to a link is gone. */
export async function eraseOutboxRow(db: Queryable, orgId: string, id: string) {
  await db.query(eraseOutboxQuery, [orgId, id]);
}
const releaseOutboxQuery = sql('checkin_outbox.release', `UPDATE checkin_outbox SET lease_until = NULL WHERE org_id = $1 AND id = $2`);
export async function releaseOutboxRow(db: Queryable, orgId: string, id: string) {
  await db.query(releaseOutboxQuery, [orgId, id]);
}

const refuseOutboxQuery = sql('checkin_outbox.refused', `UPDATE checkin_outbox SET refused = true WHERE org_id = $1 AND id = ANY($2::text[])`);
/** Mails the relay refused: counted as failed by the round's status until the relay takes them. */
export async function markOutboxRefused(db: Queryable, orgId: string, ids: readonly string[]) {
  if (ids.length === 0) return;
  await db.query(refuseOutboxQuery, [orgId, arrayLiteral([...ids])]);
}

const countMailsQuery = sql(
  'checkin_rounds.count_mails',
  `UPDATE checkin_rounds SET mailed = coalesce(mailed, 0) + $3, reminded = coalesce(reminded, 0) + $4 WHERE org_id = $1 AND week = $2::date`,
);
/** Mails the relay took, added to the round's counts (never who got them). */
export async function countRoundMails(db: Queryable, orgId: string, week: string, mailed: number, reminded: number) {
  if (mailed + reminded === 0) return;
  await db.query(countMailsQuery, [orgId, week, mailed, reminded]);
}

const roundErrorQuery = sql(
  'checkin_rounds.relay_error',
  `UPDATE checkin_rounds SET last_error = $3, last_error_at = $4 WHERE org_id = $1 AND week = $2::date`,
);
/** The relay's last refusal of a mail of the round (its reason, with no address in it) and when. */
export async function recordRoundError(db: Queryable, orgId: string, week: string, reason: string, at: Date) {
  await db.query(roundErrorQuery, [orgId, week, reason, at.toISOString()]);
}

export interface RoundStatusRow {
  week: string;
  startedAt: string;
  /** null: started before rounds were counted (migration 0027). */
  byMail: boolean | null;
  people: number;
  mailed: number | null;
  reminded: number | null;
  /** First and re-sent mails waiting for the relay, not refused yet. */
  waiting: number;
  /** Mails of any kind the relay refused at their last try (they are tried again). */
  refused: number;
  remindersWaiting: number;
  reminderDue: string | null;
  lastError: string | null;
  lastErrorAt: string | null;
}
const roundStatusQuery = sql(
  'checkin_rounds.status',
  `SELECT r.week::text AS week, r.started_at, r.by_mail, r.mailed, r.reminded, r.last_error, r.last_error_at,
          (SELECT coalesce(sum(s.respondents), 0) FROM checkin_round_slots s WHERE s.org_id = r.org_id AND s.week = r.week)::int AS people,
          (SELECT count(*) FROM checkin_outbox o WHERE o.org_id = r.org_id AND o.week = r.week AND o.kind <> 'reminder' AND NOT o.refused)::int AS waiting,
          (SELECT count(*) FROM checkin_outbox o WHERE o.org_id = r.org_id AND o.week = r.week AND o.refused)::int AS refused,
          (SELECT count(*) FROM checkin_outbox o WHERE o.org_id = r.org_id AND o.week = r.week AND o.kind = 'reminder' AND NOT o.refused)::int AS reminders_waiting,
          (SELECT min(o.due_at) FROM checkin_outbox o WHERE o.org_id = r.org_id AND o.week = r.week AND o.kind = 'reminder') AS reminder_due
     FROM checkin_rounds r
    WHERE r.org_id = $1 AND r.week >= $2::date
    ORDER BY r.week DESC`,
);
/** Each round since `fromWeek`, newest first: its counts, per round, never per person. */
export async function roundStatusRows(db: Queryable, orgId: string, fromWeek: string): Promise<RoundStatusRow[]> {
  const rows = await db.query<{
    week: string;
    started_at: Date;
    by_mail: boolean | null;
    mailed: number | null;
    reminded: number | null;
    last_error: string | null;
    last_error_at: Date | null;
    people: number;
    waiting: number;
    refused: number;
    reminders_waiting: number;
    reminder_due: Date | null;
  }>(roundStatusQuery, [orgId, fromWeek]);
  return rows.map((r) => ({
    week: r.week,
    startedAt: iso(r.started_at),
    byMail: r.by_mail,
    people: r.people,
    mailed: r.mailed,
    reminded: r.reminded,
    waiting: r.waiting,
    refused: r.refused,
    remindersWaiting: r.reminders_waiting,
    reminderDue: r.reminder_due ? iso(r.reminder_due) : null,
    lastError: r.last_error,
    lastErrorAt: r.last_error_at ? iso(r.last_error_at) : null,
  }));
}

/** A LIKE pattern that matches `text` anywhere, its wildcards taken literally. */
const containing = (text: string) => `%${text.toLowerCase().replace(/[\\%_]/g, (c) => `\\${c}`)}%`;

const rosterCountQuery = sql(
  'respondents.count',
  `SELECT count(*)::int AS n FROM respondents r LEFT JOIN teams t ON t.org_id = r.org_id AND t.id = r.team_id
    WHERE r.org_id = $1 AND ($2::text IS NULL OR lower(r.email) LIKE $2 OR lower(t.name) LIKE $2)`,
);
const rosterPageQuery = sql(
  'respondents.page',
  `SELECT r.id, r.email, r.team_id, t.name AS team_name, r.created_at, r.source, r.language
     FROM respondents r LEFT JOIN teams t ON t.org_id = r.org_id AND t.id = r.team_id
    WHERE r.org_id = $1 AND ($2::text IS NULL OR lower(r.email) LIKE $2 OR lower(t.name) LIKE $2)
    ORDER BY lower(r.email), r.id
    LIMIT $3 OFFSET $4`,
);
/** One page of the roster by address, optionally only those whose address or team holds `search`; with how many match. */
export async function respondentPage(
  db: Queryable,
  orgId: string,
  q: { search: string | null; limit: number; offset: number },
): Promise<{ total: number; rows: RespondentRow[] }> {
  const pattern = q.search ? containing(q.search) : null;
  const [c] = await db.query<{ n: number }>(rosterCountQuery, [orgId, pattern]);
  const rows = await db.query<DbRespondent>(rosterPageQuery, [orgId, pattern, q.limit, q.offset]);
  return { total: c?.n ?? 0, rows: rows.map(toRespondent) };
}
const rosterPageOfAllQuery = sql(
  'respondents.page_all',
  `SELECT r.id, r.email, r.team_id, t.name AS team_name, r.created_at, r.source, r.language
     FROM respondents r LEFT JOIN teams t ON t.org_id = r.org_id AND t.id = r.team_id
    WHERE r.org_id = $1
    ORDER BY lower(r.email), r.id
    LIMIT $2 OFFSET $3`,
);
/** One page of the whole roster by address (no search: the caller knows how many there are). */
export async function respondentPageOfAll(db: Queryable, orgId: string, q: { limit: number; offset: number }): Promise<RespondentRow[]> {
  const rows = await db.query<DbRespondent>(rosterPageOfAllQuery, [orgId, q.limit, q.offset]);
  return rows.map(toRespondent);
}

const teamSummaryQuery = sql(
  'respondents.team_summary',
  // Counted by team first, then named: the join is one row a team, not one a person.
  // (Joined on org_id as every query of two organization tables is, so that Citus keeps it on one shard.)
  `SELECT s.team_id, t.name AS team_name, s.n, s.recent
     FROM (SELECT org_id, team_id, count(*)::int AS n, count(*) FILTER (WHERE team_since > $2)::int AS recent
             FROM respondents WHERE org_id = $1 GROUP BY org_id, team_id) s
     LEFT JOIN teams t ON t.org_id = s.org_id AND t.id = s.team_id`,
);
/** Per team (and null: no team), its people on the roster and how many joined it since `since`. */
export async function teamSummaryRows(db: Queryable, orgId: string, since: Date) {
  return db.query<{ team_id: string | null; team_name: string | null; n: number; recent: number }>(teamSummaryQuery, [orgId, since.toISOString()]);
}

/** Mails of weeks whose links have closed: never sent, dropped. */
const dropStaleOutboxQuery = sql('checkin_outbox.drop_stale', `DELETE FROM checkin_outbox WHERE org_id = $1 AND week < $2::date`);
export async function dropStaleOutbox(db: Queryable, orgId: string, beforeWeek: string) {
  await db.query(dropStaleOutboxQuery, [orgId, beforeWeek]);
}

/** The people of the round, with their address and team name (the links file's rows), by address. */
const roundPeopleQuery = sql(
  'checkin_round_members.people',
  `SELECT m.respondent_id, m.team_slot, r.email, t.name AS team_name
     FROM checkin_round_members m JOIN respondents r ON r.org_id = m.org_id AND r.id = m.respondent_id
     LEFT JOIN teams t ON t.org_id = r.org_id AND t.id = r.team_id
    WHERE m.org_id = $1 AND m.week = $2::date
    ORDER BY lower(r.email)`,
);
export async function roundPeople(db: Queryable, orgId: string, week: string) {
  return db.query<{ respondent_id: string; team_slot: string; email: string; team_name: string | null }>(roundPeopleQuery, [orgId, week]);
}

/** How many links the week's round has made: none yet means its links were never handed out. */
const linkCountQuery = sql('checkin_round_links.count', `SELECT count(*)::int AS n FROM checkin_round_links WHERE org_id = $1 AND week = $2::date`);
export async function weekLinkCount(db: Queryable, orgId: string, week: string): Promise<number> {
  const [r] = await db.query<{ n: number }>(linkCountQuery, [orgId, week]);
  return r?.n ?? 0;
}

export interface LinkRow {
  week: string;
  teamSlot: string;
  state: number;
}
const linkByTokenQuery = sql(
  'checkin_round_links.by_token',
  `SELECT week::text AS week, team_slot, state FROM checkin_round_links WHERE org_id = $1 AND token_hash = $2`,
);
export async function findLinkByToken(db: Queryable, orgId: string, hash: Buffer): Promise<LinkRow | null> {
  const [r] = await db.query<{ week: string; team_slot: string; state: number }>(linkByTokenQuery, [orgId, hash]);
  return r ? { week: r.week, teamSlot: r.team_slot, state: r.state } : null;
}

const markOpenedQuery = sql('checkin_round_links.opened', `UPDATE checkin_round_links SET state = 1 WHERE org_id = $1 AND token_hash = $2 AND state = 0`);
export async function markLinkOpened(db: Queryable, orgId: string, hash: Buffer) {
  await db.query(markOpenedQuery, [orgId, hash]);
}

const markIssuedQuery = sql(
  'checkin_round_links.issued',
  `UPDATE checkin_round_links SET state = 2 WHERE org_id = $1 AND token_hash = $2 AND state < 2 RETURNING state`,
);
/** True when this call is the one that issued the link's token (false: it was issued before). */
export async function markLinkIssued(db: Queryable, orgId: string, hash: Buffer): Promise<boolean> {
  return (await db.query(markIssuedQuery, [orgId, hash])).length > 0;
}

const spendQuery = sql(
  'checkin_spent.insert',
  `INSERT INTO checkin_spent (org_id, key_id, token_hash)
   SELECT $1, k, decode(h, 'hex') FROM unnest($2::text[], $3::text[]) AS u(k, h)
   ON CONFLICT (org_id, token_hash) DO NOTHING
   RETURNING encode(token_hash, 'hex') AS h`,
);
/**
 * Spends the tokens (each a key id and the hex SHA-256 of its message, all distinct) of one
 * organization in one statement; returns the digests this call spent (the others were spent before).
 */
export async function spendTokens(db: Queryable, orgId: string, tokens: readonly { keyId: string; hashHex: string }[]): Promise<Set<string>> {
  if (tokens.length === 0) return new Set();
  const rows = await db.query<{ h: string }>(spendQuery, [orgId, arrayLiteral(tokens.map((t) => t.keyId)), arrayLiteral(tokens.map((t) => t.hashHex))]);
  return new Set(rows.map((r) => r.h));
}

/** Per week and key slot: the people of the round, links opened (counted from the unnamed links) and answers taken. */
const participationQuery = sql(
  'checkin_round_slots.participation',
  `SELECT s.week::text AS week, s.team_slot, t.name AS team_name, s.respondents AS invited,
          (SELECT count(*) FROM checkin_round_links l WHERE l.org_id = s.org_id AND l.week = s.week AND l.team_slot = s.team_slot AND l.state > 0)::int AS opened,
          s.answered
     FROM checkin_round_slots s LEFT JOIN teams t ON t.org_id = s.org_id AND t.id = s.team_slot
    WHERE s.org_id = $1 AND s.week >= $2::date AND (s.respondents > 0 OR s.answered > 0)
    ORDER BY 1 DESC, 3 NULLS LAST, 2`,
);
/**
 * As participationRows without the links opened (the Overview shows asked and answered only):
 * counting opened links read every link of the weeks, 8 ms of a 50-team Overview's 10 on PostgreSQL.
 */
const slotCountsQuery = sql(
  'checkin_round_slots.counts',
  `SELECT s.week::text AS week, s.team_slot, t.name AS team_name, s.respondents AS invited, s.answered
     FROM checkin_round_slots s LEFT JOIN teams t ON t.org_id = s.org_id AND t.id = s.team_slot
    WHERE s.org_id = $1 AND s.week >= $2::date AND (s.respondents > 0 OR s.answered > 0)
    ORDER BY 1 DESC, 3 NULLS LAST, 2`,
);
export async function slotCounts(db: Queryable, orgId: string, fromWeek: string) {
  return db.query<{ week: string; team_slot: string; team_name: string | null; invited: number; answered: number }>(slotCountsQuery, [orgId, fromWeek]);
}

export async function participationRows(db: Queryable, orgId: string, fromWeek: string) {
  return db.query<{ week: string; team_slot: string; team_name: string | null; invited: number; opened: number; answered: number }>(participationQuery, [
    orgId,
    fromWeek,
  ]);
}

/**
 * Organizations with a roster, not deleted: the round job's work list. An uncorrelated `IN`: Citus
 * refuses a subquery correlated with a reference table (`organizations`), as the alert engine's list.
 */
const rosterOrgsQuery = sql(
  'respondents.orgs',
  `SELECT o.id FROM organizations o WHERE o.deleted_at IS NULL AND o.id IN (SELECT DISTINCT r.org_id FROM respondents r) ORDER BY o.id`,
);
export async function orgsWithRoster(db: Queryable): Promise<string[]> {
  return (await db.query<{ id: string }>(rosterOrgsQuery)).map((r) => r.id);
}
