import { randomBytes } from 'node:crypto';
import type { DatabaseExecutor } from '../../db/executor.js';
import {
  claimMail,
  ensureRound,
  insertMissingLinks,
  orgsWithRoster,
  participationRows,
  readCheckinSettings,
  releaseLink,
  roundExists,
  setLinkToken,
  unopenedLinks,
  weekTeamSlots,
} from '../../db/repositories/checkins.js';
import { getOrganization, requireLiveOrg } from '../orgs.js';
import { recordAudit, type Actor } from '../audit.js';
import { WEEK_MS } from '../time.js';
import { tokenHash } from './answers.js';
import type { CheckinKeys } from './keys.js';
import { MIN_TEAM } from './roster.js';
import { addWeeks, reminderTime, roundTime, weekOf, weekStart } from './week.js';

/**
 * Rounds (CONTRACT.md section 12): at the organization's weekday and hour, every respondent of the
 * roster gets the week's personal link by mail, and on the reminder's day those who have not
 * opened it get it again. Every server process runs this; the database decides who sends what
 * (each link is leased by one process with FOR UPDATE SKIP LOCKED and marked mailed once sent), so
 * N processes send each mail once. Nothing here logs an address.
 */

export type SendMail = (m: { to: string; subject: string; text: string }) => Promise<void>;

export interface RoundOptions {
  /** The link of a token: `${base}/checkin/o/${orgId}#${token}` (the token rides in the fragment, which no request carries). */
  linkFor: (orgId: string, token: string) => string;
  /** Without SMTP_URL: none, and the console offers the links as a CSV file instead. */
  send?: SendMail;
  leaseMs?: number;
  batch?: number;
  /**
   * The week's keys, made before its first mail: else the first openings of each team wait for a
   * 2048-bit key to be generated (a second or more under load).
   */
  keys?: Pick<CheckinKeys, 'keyFor'>;
  /** Mails sent at once (default 4, the SMTP pool's connections). */
  inFlight?: number;
}

export interface RoundReport {
  mailed: number;
  reminded: number;
  failed: number;
}

export const newLinkToken = () => randomBytes(24).toString('base64url');

const mailText = (orgName: string, link: string, reminder: boolean) =>
  `${reminder ? 'A reminder: this' : 'This'} week's check-in of ${orgName} is open.\n\n` +
  `How was your week? Answer in a few seconds here:\n${link}\n\n` +
  `The link is yours and works once. Your answer reaches the service without it: the service can ` +
  `tell that someone of your team answered, never who. The link stays open until the end of next week.\n`;

/** The round of `week` exists and every respondent has a link (those added since the round too), and its keys exist. */
async function prepareRound(db: DatabaseExecutor, orgId: string, week: string, keys?: RoundOptions['keys']) {
  await ensureRound(db, orgId, week);
  await insertMissingLinks(db, orgId, week, MIN_TEAM);
  if (keys) for (const slot of await weekTeamSlots(db, orgId, week)) await keys.keyFor(db, orgId, week, slot);
}

async function mailLinks(
  db: DatabaseExecutor,
  orgId: string,
  week: string,
  kind: 'first' | 'reminder',
  opts: RoundOptions,
  now: Date,
  pastReminder = false,
): Promise<{ sent: number; failed: number }> {
  const send = opts.send!;
  const org = await getOrganization(db, orgId);
  const inFlight = opts.inFlight ?? 4;
  let sent = 0;
  for (;;) {
    const claimed = await claimMail(db, orgId, week, kind, opts.batch ?? 50, now, new Date(now.getTime() + (opts.leaseMs ?? 120_000)));
    if (claimed.length === 0) return { sent, failed: 0 };
    // A few mails at once (the transport's pool), each link's token stored once its mail went.
    for (let at = 0; at < claimed.length; at += inFlight) {
      const group = claimed.slice(at, at + inFlight);
      const outcomes = await Promise.allSettled(
        group.map(async (c) => {
          const token = newLinkToken();
          await send({
            to: c.email,
            subject: `${kind === 'reminder' ? 'Reminder: ' : ''}How was your week? (${org.name})`,
            text: mailText(org.name, opts.linkFor(orgId, token), kind === 'reminder'),
          });
          await setLinkToken(db, orgId, c.respondent_id, week, kind, tokenHash(token), pastReminder);
        }),
      );
      const failed = group.filter((_, i) => outcomes[i]!.status === 'rejected');
      sent += group.length - failed.length;
      if (failed.length > 0) {
        // The relay refused or is down: these links, and the rest of the batch, wait for the next
        // run (their lease released now).
        const rest = [...failed, ...claimed.slice(at + inFlight)];
        for (const r of rest) await releaseLink(db, orgId, r.respondent_id, week);
        return { sent, failed: rest.length };
      }
    }
  }
}

/** One run over every organization with a roster: due rounds prepared, due mails sent. */
export async function runRounds(db: DatabaseExecutor, opts: RoundOptions, now: Date): Promise<RoundReport> {
  const report: RoundReport = { mailed: 0, reminded: 0, failed: 0 };
  for (const orgId of await orgsWithRoster(db)) {
    const s = await readCheckinSettings(db, orgId);
    // A round in a zone east of UTC may start before its ISO week does.
    for (const week of [weekOf(now), addWeeks(weekOf(now), 1)]) {
      if (now < roundTime(week, s) || now.getTime() >= weekStart(week).getTime() + WEEK_MS) continue;
      await prepareRound(db, orgId, week, opts.keys);
      if (!opts.send) continue;
      const remindAt = reminderTime(week, s);
      const pastReminder = remindAt !== null && now >= remindAt;
      // A first mail sent once the reminder's time has passed (someone added late) is not followed by a reminder.
      const first = await mailLinks(db, orgId, week, 'first', opts, now, pastReminder);
      report.mailed += first.sent;
      report.failed += first.failed;
      if (pastReminder) {
        const r = await mailLinks(db, orgId, week, 'reminder', opts, now);
        report.reminded += r.sent;
        report.failed += r.failed;
      }
    }
  }
  return report;
}

/** A cell of the links file: quoted when needed, and never read as a formula by a spreadsheet (a leading =, +, -, @ or tab gets a quote mark). */
export const csvCell = (v: string) => (/[",\n\r]/.test(v) || /^[=+\-@\t]/.test(v) ? `"${v.replace(/^([=+\-@\t])/, "'$1").replace(/"/g, '""')}"` : v);

/** The week's links as the file every face hands out (console download, operator CLI): a header, then email,team,link per row. */
export const linksCsv = (links: readonly { email: string; team: string | null; link: string }[], eol = '\r\n') =>
  `${['email,team,link', ...links.map((l) => [l.email, l.team ?? '', l.link].map(csvCell).join(','))].join(eol)}${eol}`;

/**
 * Without SMTP_URL: the week's links for the organization's own mail tool, one row per respondent
 * whose link nobody opened yet. Each gets a new link (only digests are kept, so a link cannot be
 * shown twice): the links of an earlier file stop working. Starts the week's round when it has
 * not started. Whoever holds the file can answer in someone's place, though still learn no answer.
 */
export async function exportWeekLinks(db: DatabaseExecutor, orgId: string, opts: Pick<RoundOptions, 'linkFor'>, actor: Actor, now: Date) {
  await requireLiveOrg(db, orgId);
  const week = weekOf(now);
  if (!(await roundExists(db, orgId, week))) await ensureRound(db, orgId, week);
  await insertMissingLinks(db, orgId, week, MIN_TEAM);
  return db.transaction(async (tx) => {
    const rows = await unopenedLinks(tx, orgId, week);
    const out: { email: string; team: string | null; link: string }[] = [];
    for (const r of rows) {
      const token = newLinkToken();
      await setLinkToken(tx, orgId, r.respondent_id, week, 'first', tokenHash(token));
      out.push({ email: r.email, team: r.team_name, link: opts.linkFor(orgId, token) });
    }
    await recordAudit(tx, orgId, actor, { action: 'checkin_links.exported', target: { kind: 'checkin_round', id: week }, details: { links: out.length } }, now);
    return { week, links: out };
  });
}

export interface ParticipationCell {
  week: string;
  teamId: string | null;
  teamName: string | null;
  /** Each count only from 5; below, null ("fewer than 5"). */
  invited: number | null;
  opened: number | null;
  answered: number | null;
}

/** Per week (the last `weeks`) and team: invited, opened and answered, each shown only from 5. */
export async function participation(db: DatabaseExecutor, orgId: string, now: Date, weeks = 8): Promise<ParticipationCell[]> {
  const from5 = (n: number) => (n >= MIN_TEAM ? n : null);
  return (await participationRows(db, orgId, addWeeks(weekOf(now), -(weeks - 1)))).map((r) => ({
    week: r.week,
    teamId: r.team_slot || null,
    teamName: r.team_name,
    invited: from5(r.invited),
    opened: from5(r.opened),
    answered: from5(r.answered),
  }));
}
