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
}

const listRespondentsQuery = sql(
  'respondents.list',
  `SELECT r.id, r.email, r.team_id, t.name AS team_name, r.created_at
     FROM respondents r LEFT JOIN teams t ON t.org_id = r.org_id AND t.id = r.team_id
    WHERE r.org_id = $1
    ORDER BY lower(r.email), r.id`,
);
type DbRespondent = { id: string; email: string; team_id: string | null; team_name: string | null; created_at: Date };
const toRespondent = (r: DbRespondent): RespondentRow => ({ id: r.id, email: r.email, teamId: r.team_id, teamName: r.team_name, createdAt: iso(r.created_at) });

export async function listRespondentRows(db: Queryable, orgId: string): Promise<RespondentRow[]> {
  return (await db.query<DbRespondent>(listRespondentsQuery, [orgId])).map(toRespondent);
}

const byEmailQuery = sql(
  'respondents.by_email',
  `SELECT id, email, team_id, NULL::text AS team_name, created_at FROM respondents WHERE org_id = $1 AND lower(email) = lower($2)`,
);
export async function findRespondentByEmail(db: Queryable, orgId: string, email: string): Promise<RespondentRow | null> {
  const [r] = await db.query<DbRespondent>(byEmailQuery, [orgId, email]);
  return r ? toRespondent(r) : null;
}

const byIdQuery = sql('respondents.by_id', `SELECT id, email, team_id, NULL::text AS team_name, created_at FROM respondents WHERE org_id = $1 AND id = $2`);
export async function findRespondent(db: Queryable, orgId: string, id: string): Promise<RespondentRow | null> {
  const [r] = await db.query<DbRespondent>(byIdQuery, [orgId, id]);
  return r ? toRespondent(r) : null;
}

const insertRespondentQuery = sql('respondents.insert', `INSERT INTO respondents (org_id, id, email, team_id, created_at) VALUES ($1, $2, $3, $4, $5)`);
export async function insertRespondent(db: Queryable, orgId: string, r: { id: string; email: string; teamId: string | null; createdAt: Date }) {
  await db.query(insertRespondentQuery, [orgId, r.id, r.email, r.teamId, r.createdAt.toISOString()]);
}

const deleteRespondentQuery = sql('respondents.delete', `DELETE FROM respondents WHERE org_id = $1 AND id = $2 RETURNING id`);
export async function deleteRespondentRow(db: Queryable, orgId: string, id: string): Promise<boolean> {
  return (await db.query(deleteRespondentQuery, [orgId, id])).length > 0;
}

const moveRespondentQuery = sql('respondents.move', `UPDATE respondents SET team_id = $3 WHERE org_id = $1 AND id = $2 RETURNING id`);
export async function setRespondentTeam(db: Queryable, orgId: string, id: string, teamId: string | null): Promise<boolean> {
  return (await db.query(moveRespondentQuery, [orgId, id, teamId])).length > 0;
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
     FROM checkin_keys k LEFT JOIN teams t ON t.org_id = k.org_id AND t.id = k.team_slot
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

const insertRoundQuery = sql('checkin_rounds.insert', `INSERT INTO checkin_rounds (org_id, week) VALUES ($1, $2::date) ON CONFLICT DO NOTHING`);
const roundExistsQuery = sql('checkin_rounds.exists', `SELECT 1 AS x FROM checkin_rounds WHERE org_id = $1 AND week = $2::date`);
export async function ensureRound(db: Queryable, orgId: string, week: string) {
  await db.query(insertRoundQuery, [orgId, week]);
}
export async function roundExists(db: Queryable, orgId: string, week: string): Promise<boolean> {
  return (await db.query(roundExistsQuery, [orgId, week])).length > 0;
}

/**
 * A link for every respondent of the roster who has none for the week (the round's first run, and
 * respondents added later that week), in the team they are in now, or in none when that team has
 * fewer than `minTeam` respondents on the roster.
 */
const insertLinksQuery = sql(
  'checkin_links.insert_missing',
  `INSERT INTO checkin_links (org_id, respondent_id, week, team_slot)
   SELECT r.org_id, r.id, $2::date,
          CASE WHEN r.team_id IS NOT NULL AND (SELECT count(*) FROM respondents s WHERE s.org_id = r.org_id AND s.team_id = r.team_id) >= $3
               THEN r.team_id ELSE '' END
     FROM respondents r
    WHERE r.org_id = $1
   ON CONFLICT (org_id, respondent_id, week) DO NOTHING`,
);
export async function insertMissingLinks(db: Queryable, orgId: string, week: string, minTeam: number) {
  await db.query(insertLinksQuery, [orgId, week, minTeam]);
}

/** The team slots ('' for none) that the week's links answer under: one key each. */
const weekSlotsQuery = sql('checkin_links.week_slots', `SELECT DISTINCT team_slot FROM checkin_links WHERE org_id = $1 AND week = $2::date ORDER BY team_slot`);
export async function weekTeamSlots(db: Queryable, orgId: string, week: string): Promise<string[]> {
  return (await db.query<{ team_slot: string }>(weekSlotsQuery, [orgId, week])).map((r) => r.team_slot);
}

/**
 * Takes up to $4 links of the week whose mail ($5: 'first' or 'reminder') is due and that no other
 * process holds, and holds them until $3. A reminder is due for a link mailed, not yet opened and
 * not yet reminded.
 */
const claimMailQuery = sql(
  'checkin_links.claim_mail',
  `WITH due AS (
     SELECT l.org_id, l.respondent_id, l.week FROM checkin_links l
      WHERE l.org_id = $1 AND l.week = $2::date
        AND (l.lease_until IS NULL OR l.lease_until < $6)
        AND CASE WHEN $5 = 'first' THEN NOT l.mailed ELSE l.mailed AND NOT l.reminded AND NOT l.opened AND NOT l.issued END
      ORDER BY l.respondent_id
      LIMIT $4
      FOR UPDATE SKIP LOCKED)
   UPDATE checkin_links l SET lease_until = $3
     FROM due, respondents r
    WHERE l.org_id = due.org_id AND l.respondent_id = due.respondent_id AND l.week = due.week
      AND r.org_id = l.org_id AND r.id = l.respondent_id
   RETURNING l.respondent_id, r.email`,
);
export async function claimMail(db: Queryable, orgId: string, week: string, kind: 'first' | 'reminder', limit: number, now: Date, leaseUntil: Date) {
  return db.query<{ respondent_id: string; email: string }>(claimMailQuery, [orgId, week, leaseUntil.toISOString(), limit, kind, now.toISOString()]);
}

const setFirstTokenQuery = sql(
  'checkin_links.set_first_token',
  `UPDATE checkin_links SET token_hash = $4, mailed = true, reminded = reminded OR $5, lease_until = NULL WHERE org_id = $1 AND respondent_id = $2 AND week = $3::date`,
);
const setReminderTokenQuery = sql(
  'checkin_links.set_reminder_token',
  `UPDATE checkin_links SET reminder_hash = $4, reminded = true, lease_until = NULL WHERE org_id = $1 AND respondent_id = $2 AND week = $3::date`,
);
/**
 * The link's token for this mail, and the mail marked sent: what a process does once its mail went.
 * `noReminder`: a first mail sent after the reminder's time (someone added late) needs no reminder.
 */
export async function setLinkToken(
  db: Queryable,
  orgId: string,
  respondentId: string,
  week: string,
  kind: 'first' | 'reminder',
  hash: Buffer,
  noReminder = false,
) {
  if (kind === 'first') await db.query(setFirstTokenQuery, [orgId, respondentId, week, hash, noReminder]);
  else await db.query(setReminderTokenQuery, [orgId, respondentId, week, hash]);
}

const releaseQuery = sql('checkin_links.release', `UPDATE checkin_links SET lease_until = NULL WHERE org_id = $1 AND respondent_id = $2 AND week = $3::date`);
export async function releaseLink(db: Queryable, orgId: string, respondentId: string, week: string) {
  await db.query(releaseQuery, [orgId, respondentId, week]);
}

/** The links of the week nobody opened yet, with their respondent: the CSV file's rows (without SMTP). */
const unopenedQuery = sql(
  'checkin_links.unopened',
  `SELECT l.respondent_id, r.email, t.name AS team_name
     FROM checkin_links l JOIN respondents r ON r.org_id = l.org_id AND r.id = l.respondent_id
     LEFT JOIN teams t ON t.org_id = r.org_id AND t.id = r.team_id
    WHERE l.org_id = $1 AND l.week = $2::date AND NOT l.opened AND NOT l.issued
    ORDER BY lower(r.email)
    FOR UPDATE OF l`,
);
export async function unopenedLinks(db: Queryable, orgId: string, week: string) {
  return db.query<{ respondent_id: string; email: string; team_name: string | null }>(unopenedQuery, [orgId, week]);
}

export interface LinkRow {
  respondentId: string;
  week: string;
  teamSlot: string;
  opened: boolean;
  issued: boolean;
}
const linkByTokenQuery = sql(
  'checkin_links.by_token',
  `SELECT respondent_id, week::text AS week, team_slot, opened, issued FROM checkin_links
    WHERE org_id = $1 AND (token_hash = $2 OR reminder_hash = $2)`,
);
export async function findLinkByToken(db: Queryable, orgId: string, hash: Buffer): Promise<LinkRow | null> {
  const [r] = await db.query<{ respondent_id: string; week: string; team_slot: string; opened: boolean; issued: boolean }>(linkByTokenQuery, [orgId, hash]);
  return r ? { respondentId: r.respondent_id, week: r.week, teamSlot: r.team_slot, opened: r.opened, issued: r.issued } : null;
}

const markOpenedQuery = sql(
  'checkin_links.mark_opened',
  `UPDATE checkin_links SET opened = true WHERE org_id = $1 AND respondent_id = $2 AND week = $3::date AND NOT opened`,
);
export async function markLinkOpened(db: Queryable, orgId: string, respondentId: string, week: string) {
  await db.query(markOpenedQuery, [orgId, respondentId, week]);
}

const markIssuedQuery = sql(
  'checkin_links.mark_issued',
  `UPDATE checkin_links SET issued = true, opened = true WHERE org_id = $1 AND respondent_id = $2 AND week = $3::date AND NOT issued RETURNING respondent_id`,
);
/** True when this call is the one that issued the week's token (false: it was issued before). */
export async function markLinkIssued(db: Queryable, orgId: string, respondentId: string, week: string): Promise<boolean> {
  return (await db.query(markIssuedQuery, [orgId, respondentId, week])).length > 0;
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

/** Per week and team slot: invited (links), opened, and answered (tokens spent under that week's key of that slot). */
const participationQuery = sql(
  'checkin_links.participation',
  `WITH l AS (
     SELECT week, team_slot, count(*)::int AS invited, count(*) FILTER (WHERE opened OR issued)::int AS opened
       FROM checkin_links WHERE org_id = $1 AND week >= $2::date GROUP BY week, team_slot),
   a AS (
     SELECT k.week, k.team_slot, count(*)::int AS answered
       FROM checkin_spent s JOIN checkin_keys k ON k.org_id = s.org_id AND k.id = s.key_id
      WHERE s.org_id = $1 AND k.week >= $2::date GROUP BY k.week, k.team_slot)
   SELECT coalesce(l.week, a.week)::text AS week, coalesce(l.team_slot, a.team_slot) AS team_slot, t.name AS team_name,
          coalesce(l.invited, 0) AS invited, coalesce(l.opened, 0) AS opened, coalesce(a.answered, 0) AS answered
     FROM l FULL JOIN a ON a.week = l.week AND a.team_slot = l.team_slot
     LEFT JOIN teams t ON t.org_id = $1 AND t.id = coalesce(l.team_slot, a.team_slot)
    ORDER BY 1 DESC, 3 NULLS LAST, 2`,
);
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
