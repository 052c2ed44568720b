import { randomBytes, randomInt } from 'node:crypto';
import type { DatabaseExecutor } from '../../db/executor.js';
import type { Queryable } from '../database.js';
import {
  claimOutbox,
  countRoundMails,
  dropStaleOutbox,
  resealOutboxRow,
  eraseOutboxRow,
  findRound,
  insertLinks,
  insertMembers,
  insertOutbox,
  insertRound,
  insertSlots,
  markOutboxRefused,
  memberSlot,
  orgsWithRoster,
  participationRows,
  readCheckinSettings,
  respondentPage,
  recordRoundError,
  releaseOutboxRow,
  roundPeople,
  roundSlots,
  rosterForRound,
  weekLinkCount,
  type OutboxRow,
} from '../../db/repositories/checkins.js';
import { ApiError } from '../../contract/errors.js';
import { getOrganization, requireLiveOrg } from '../orgs.js';
import { recordAudit, type Actor } from '../audit.js';
import { DAY_MS, WEEK_MS } from '../time.js';
import { newId } from '../ids.js';
import { tokenHash } from './answers.js';
import type { CheckinKeys } from './keys.js';
import { SEAL_ID, sealToken, unsealToken } from './outbox-seal.js';
import { relayReason } from './round-status.js';
import { roundMail } from './round-mail.js';
import { getDefaultLanguage } from './settings.js';
import { matchLocale } from '../../i18n/index.js';
import { getRespondent, MIN_TEAM } from './roster.js';
import { addWeeks, reminderTime, roundTime, weekOf, weekStart } from './week.js';

/**
 * Rounds (CONTRACT.md section 12, amended in turn 6: links that name no one, a week fixed at its
 * start). At the organization's weekday and hour a round starts, in one transaction: it fixes who is
 * on it and under which key each answers (a team of 5 or more on this week's roster, else the
 * organization's), its reasons and flag words, and makes one link per person as rows of (digest of
 * the token, week, key slot, state) in random order, naming no one. What ties a person to their
 * link is the mail; until the relay accepts it, the round's outbox row, which is erased then. Every
 * server process runs this; the database leases each mail to one process (FOR UPDATE SKIP LOCKED),
 * so N processes send each mail once. Nothing here logs an address.
 */

/** A mail to send: its text, and its HTML and sender's display name when it has them (multipart/alternative then). */
export type SendMail = (m: { to: string; subject: string; text: string; html?: string; fromName?: string; language?: string }) => Promise<void>;

export interface RoundOptions {
  /** The link of a token: `${base}/checkin/o/${orgId}#${token}` (the token rides in the fragment, which no request carries). */
  linkFor: (orgId: string, token: string) => string;
  /** Without SMTP_URL: none, and the console offers the links as a CSV file instead. */
  send?: SendMail;
  leaseMs?: number;
  batch?: number;
  /**
   * The week's keys, made right after the round starts: else the first openings of each team wait
   * for a 2048-bit key to be generated (a second or more under load).
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

/** How far back a member's move into their team counts as recent (the page says so, and leaves the team out by default). */
export const RECENT_JOIN_MS = 28 * DAY_MS;

export const newLinkToken = () => randomBytes(24).toString('base64url');

/** A uniformly random order (Fisher-Yates with the CSPRNG): the order links are written in says nothing. */
export function shuffled<T>(items: readonly T[]): T[] {
  const out = [...items];
  for (let i = out.length - 1; i > 0; i--) {
    const j = randomInt(i + 1);
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}

/** The round's mails are composed in ./round-mail.ts; these names stay exported from here for the console's preview. */
export { mailText, reminderText, subjectOf } from './round-mail.js';

/** A waiting mail of a link: its token sealed by this process, readable by it alone. */
const sealedMail = (orgId: string, respondentId: string, kind: 'first' | 'resent', token: string, dueAt: Date, now: Date): OutboxRow => {
  const id = newId('obx');
  const sealedUntil = new Date(Math.max(now.getTime(), dueAt.getTime()) + SEALED_FOR_MS);
  return { id, respondentId, kind, tokenSealed: sealToken(token, `${orgId}\0${id}`), sealedBy: SEAL_ID, sealedUntil, dueAt };
};

/**
 * Starts the round of `week` when it has not started: one transaction fixes its people, slots and
 * words and, when the round goes by mail, makes its links and queues its mails (sealed by this
 * process). Without mail the links are made by the first links file. Returns whether this call
 * started it.
 */
export async function startRound(
  db: DatabaseExecutor,
  orgId: string,
  week: string,
  opts: { mails: boolean; firstDue: Date; reminderDue: Date | null },
  now: Date,
): Promise<boolean> {
  return db.transaction((tx) => startRoundIn(tx, orgId, week, opts, now));
}

/** startRound's work, inside the caller's transaction. */
async function startRoundIn(
  tx: Queryable,
  orgId: string,
  week: string,
  opts: { mails: boolean; firstDue: Date; reminderDue: Date | null },
  now: Date,
): Promise<boolean> {
  {
    const settings = await readCheckinSettings(tx, orgId);
    if (!(await insertRound(tx, orgId, week, { startedAt: now, reasons: settings.reasons, flagWords: settings.flagWords, byMail: opts.mails }))) return false;
    const roster = await rosterForRound(tx, orgId);
    const sizes = new Map<string, number>();
    for (const r of roster) if (r.teamId) sizes.set(r.teamId, (sizes.get(r.teamId) ?? 0) + 1);
    const slotOf = (teamId: string | null) => (teamId !== null && (sizes.get(teamId) ?? 0) >= MIN_TEAM ? teamId : '');
    const slots = new Map<string, { respondents: number; recentJoiners: number }>([['', { respondents: 0, recentJoiners: 0 }]]);
    const members = roster.map((r) => {
      const teamSlot = slotOf(r.teamId);
      const slot = slots.get(teamSlot) ?? { respondents: 0, recentJoiners: 0 };
      slot.respondents++;
      if (now.getTime() - r.teamSince.getTime() < RECENT_JOIN_MS) slot.recentJoiners++;
      slots.set(teamSlot, slot);
      return { respondentId: r.id, teamSlot };
    });
    await insertSlots(
      tx,
      orgId,
      week,
      // A team's key takes at most its people's answers; the organization's, everyone's (anyone may leave their team out).
      [...slots].map(([teamSlot, s]) => ({ teamSlot, ...s, capacity: teamSlot === '' ? roster.length : s.respondents })),
    );
    await insertMembers(tx, orgId, week, members);
    if (!opts.mails) return true;
    const tokens = members.map((m) => ({ ...m, token: newLinkToken() }));
    await insertLinks(tx, orgId, week, shuffled(tokens.map((t) => ({ hashHex: tokenHash(t.token).toString('hex'), teamSlot: t.teamSlot }))));
    const mails = tokens.map((t) => sealedMail(orgId, t.respondentId, 'first', t.token, opts.firstDue, now));
    if (opts.reminderDue) {
      for (const m of members)
        mails.push({
          id: newId('obx'),
          respondentId: m.respondentId,
          kind: 'reminder',
          tokenSealed: null,
          sealedBy: null,
          sealedUntil: null,
          dueAt: opts.reminderDue,
        });
    }
    await insertOutbox(tx, orgId, week, shuffled(mails));
    return true;
  }
}

/** The week's keys, one per slot of its round (the organization's always among them). */
async function makeRoundKeys(db: DatabaseExecutor, orgId: string, week: string, keys: RoundOptions['keys']) {
  if (!keys) return;
  for (const s of await roundSlots(db, orgId, week)) await keys.keyFor(db, orgId, week, s.teamSlot);
}

async function mailOutbox(db: DatabaseExecutor, orgId: string, week: string, opts: RoundOptions, now: Date): Promise<RoundReport> {
  const refused: string[] = [];
  try {
    return await mailClaimed(db, orgId, week, opts, now, refused);
  } finally {
    // Held by their lease during this run (not tried twice in it), the refused wait for the next.
    for (const id of refused) await releaseOutboxRow(db, orgId, id);
  }
}

async function mailClaimed(db: DatabaseExecutor, orgId: string, week: string, opts: RoundOptions, now: Date, refused: string[]): Promise<RoundReport> {
  const send = opts.send!;
  const org = await getOrganization(db, orgId);
  const { timeZone } = await readCheckinSettings(db, orgId);
  const orgLanguage = await getDefaultLanguage(db, orgId);
  const round = await findRound(db, orgId, week);
  const firstMailed = new Date(round?.startedAt ?? weekStart(week));
  const inFlight = opts.inFlight ?? 4;
  const report: RoundReport = { mailed: 0, reminded: 0, failed: 0 };
  let keysChecked = false;
  for (;;) {
    const claimed = await claimOutbox(
      db,
      orgId,
      week,
      opts.batch ?? 50,
      now,
      new Date(now.getTime() + (opts.leaseMs ?? 120_000)),
      SEAL_ID,
      new Date(now.getTime() + SEALED_FOR_MS),
    );
    if (claimed.length === 0) return report;
    // A round sent now ("send now") was started without its keys (making them takes seconds a
    // slot): they are made here, before its first links go out, as the job's own start does.
    if (!keysChecked && claimed.some((c) => c.kind !== 'reminder')) {
      keysChecked = true;
      await makeRoundKeys(db, orgId, week, opts.keys);
    }
    const tokens = await openSeals(db, orgId, week, claimed, now);
    // A few mails at once (the transport's pool); each row erased once the relay took its mail.
    for (let at = 0; at < claimed.length; at += inFlight) {
      const group = claimed.slice(at, at + inFlight);
      const outcomes = await Promise.allSettled(
        group.map(async (c) => {
          const mail = roundMail(c.kind, {
            orgName: org.name,
            week,
            timeZone,
            firstMailed,
            // The person's roster language, else the organization's (issue 57).
            locale: matchLocale(c.language) ?? orgLanguage,
            link: c.kind === 'reminder' ? undefined : opts.linkFor(orgId, tokens.get(c.id)!),
          });
          await send({ to: c.email, ...mail });
          await eraseOutboxRow(db, orgId, c.id);
        }),
      );
      const failed = group.filter((_, i) => outcomes[i]!.status === 'rejected');
      const took = { mailed: 0, reminded: 0 };
      for (const [i, c] of group.entries()) if (outcomes[i]!.status === 'fulfilled') took[c.kind === 'reminder' ? 'reminded' : 'mailed']++;
      report.mailed += took.mailed;
      report.reminded += took.reminded;
      // The round's counts and the relay's last reason: per round, at mailing time, never whose mail.
      await countRoundMails(db, orgId, week, took.mailed, took.reminded);
      if (failed.length > 0) {
        const reason = (outcomes.find((o) => o.status === 'rejected') as PromiseRejectedResult).reason;
        await recordRoundError(
          db,
          orgId,
          week,
          relayReason(
            reason,
            failed.map((c) => c.email),
          ),
          now,
        );
        await markOutboxRefused(
          db,
          orgId,
          failed.map((c) => c.id),
        );
        refused.push(...failed.map((c) => c.id));
        report.failed += failed.length;
        // The relay refused every mail of the group (it is down, or refuses us): the rest of the
        // batch waits for the next run, its lease released now. Refusing some only (an address it
        // does not know) says nothing of the others: go on.
        if (failed.length === group.length) {
          const rest = claimed.slice(at + inFlight);
          for (const r of rest) await releaseOutboxRow(db, orgId, r.id);
          report.failed += rest.length;
          return report;
        }
      }
    }
  }
}

/**
 * How long a sealed mail is its sealing process's alone after it was due or last tried: a process
 * that has not tried it for this long is gone, and another gives the person a new link.
 */
export const SEALED_FOR_MS = 10 * 60_000;

/**
 * The tokens of the claimed mails: opened with this process's seal, or, for a mail sealed by a
 * process that is gone (its seal died with it), a new link made now in the re-send's way and
 * sealed here. Nothing else can open a seal, so no copy of the database ever ties a person to a link.
 */
async function openSeals(
  db: DatabaseExecutor,
  orgId: string,
  week: string,
  claimed: readonly { id: string; kind: string; respondent_id: string; token_sealed: string | null }[],
  now: Date,
): Promise<Map<string, string>> {
  const tokens = new Map<string, string>();
  const orphans: { id: string; respondentId: string }[] = [];
  for (const c of claimed) {
    if (c.token_sealed === null) continue;
    const token = unsealToken(c.token_sealed, `${orgId}\0${c.id}`);
    if (token === null) orphans.push({ id: c.id, respondentId: c.respondent_id });
    else tokens.set(c.id, token);
  }
  if (orphans.length === 0) return tokens;
  await db.transaction(async (tx) => {
    const sizes = new Map((await roundSlots(tx, orgId, week)).map((s) => [s.teamSlot, s.respondents]));
    const slots: string[] = [];
    for (const o of orphans) slots.push((await memberSlot(tx, orgId, week, o.respondentId)) ?? '');
    const made = await makeLinksFor(
      tx,
      orgId,
      week,
      slots.map((teamSlot) => ({ teamSlot })),
      (s) => sizes.get(s) ?? 1,
    );
    for (const [i, o] of orphans.entries()) {
      await resealOutboxRow(tx, orgId, o.id, sealToken(made[i]!, `${orgId}\0${o.id}`), SEAL_ID, new Date(now.getTime() + SEALED_FOR_MS));
      tokens.set(o.id, made[i]!);
    }
  });
  return tokens;
}

/** One run over every organization with a roster: due rounds started, due mails sent. */
export async function runRounds(db: DatabaseExecutor, opts: RoundOptions, now: Date): Promise<RoundReport> {
  const report: RoundReport = { mailed: 0, reminded: 0, failed: 0 };
  for (const orgId of await orgsWithRoster(db)) {
    const s = await readCheckinSettings(db, orgId);
    // Mails of weeks whose links have closed are never sent.
    await dropStaleOutbox(db, orgId, addWeeks(weekOf(now), -1));
    // A round in a zone east of UTC may start before its ISO week does.
    for (const week of [weekOf(now), addWeeks(weekOf(now), 1)]) {
      const startsAt = roundTime(week, s);
      const due = now >= startsAt && now.getTime() < weekStart(week).getTime() + WEEK_MS;
      if (due) {
        const remindAt = reminderTime(week, s);
        // A round started after its reminder's time (the service was down) sends no reminder.
        const reminderDue = opts.send && remindAt !== null && remindAt > now ? remindAt : null;
        if (await startRound(db, orgId, week, { mails: Boolean(opts.send), firstDue: startsAt, reminderDue }, now))
          await makeRoundKeys(db, orgId, week, opts.keys);
      }
      if (!opts.send) continue;
      // A round sent before its hour ("send now") is mailed at once, not at the hour.
      if (!due && !(await findRound(db, orgId, week))) continue;
      const r = await mailOutbox(db, orgId, week, opts, now);
      report.mailed += r.mailed;
      report.reminded += r.reminded;
      report.failed += r.failed;
    }
  }
  return report;
}

export interface RoundNowState {
  week: string;
  /** When this week's round started (by its schedule, "send now" or a links file); null: not yet. */
  startedAt: string | null;
  /** The people a round started now would mail: the roster as it stands. */
  people: number;
  /** When the schedule starts this week's round (in the past when it should have: an empty roster then, or no mail). */
  scheduledAt: string;
  /** The reminder a round started now would send (null: none, or its time is past). */
  reminderAt: string | null;
}

/** What "send this week's round now" would do, said before it is done (the console's confirmation, the operator's status). */
export async function roundNowState(db: Queryable, orgId: string, now: Date): Promise<RoundNowState> {
  const week = weekOf(now);
  const [round, s, roster] = await Promise.all([
    findRound(db, orgId, week),
    readCheckinSettings(db, orgId),
    respondentPage(db, orgId, { search: null, limit: 0, offset: 0 }),
  ]);
  const remindAt = reminderTime(week, s);
  return {
    week,
    startedAt: round?.startedAt ?? null,
    people: roster.total,
    scheduledAt: roundTime(week, s).toISOString(),
    reminderAt: remindAt && remindAt > now ? remindAt.toISOString() : null,
  };
}

/**
 * "Send this week's round now" (console, operator API, CLI): starts this week's round at once, by
 * the same operation as the round job at its hour (startRound), with its mails due now and its
 * reminder at the schedule's time when that is still to come. From then on the round is fixed as
 * at any start: the job mails it (within a minute, on every server process) and does not start it
 * again at the scheduled hour; its keys are made by the job before its first links go (making
 * them takes seconds a slot, too long for a request). Refused without mail (the links file starts a round then), when
 * the round started already, and with an empty roster. Audited with the number of people.
 */
export async function startRoundNow(
  db: DatabaseExecutor,
  orgId: string,
  opts: Pick<RoundOptions, 'keys'> & { mails: boolean },
  actor: Actor,
  now: Date,
): Promise<{ week: string; people: number }> {
  await requireLiveOrg(db, orgId);
  if (!opts.mails) {
    throw new ApiError(
      'invalid_transition',
      "This server sends no mail (SMTP_URL is not set): download this week's links as a file instead, which starts the round.",
    );
  }
  const week = weekOf(now);
  const people = await db.transaction(async (tx) => {
    const round = await findRound(tx, orgId, week);
    if (round) throw new ApiError('invalid_transition', `This week's round started already, at ${round.startedAt}: it is not started twice.`);
    const s = await readCheckinSettings(tx, orgId);
    const { total } = await respondentPage(tx, orgId, { search: null, limit: 0, offset: 0 });
    if (total === 0) throw new ApiError('invalid_transition', 'The roster is empty: add people before sending a round.');
    const remindAt = reminderTime(week, s);
    const reminderDue = remindAt !== null && remindAt > now ? remindAt : null;
    if (!(await startRoundIn(tx, orgId, week, { mails: true, firstDue: now, reminderDue }, now))) {
      throw new ApiError('invalid_transition', "This week's round started already: it is not started twice.");
    }
    await recordAudit(tx, orgId, actor, { action: 'checkin_round.started', target: { kind: 'checkin_round', id: week }, details: { people: total } }, now);
    return total;
  });
  await makeRoundKeys(db, orgId, week, opts.keys);
  return { week, people };
}

/**
 * A test of the round's mail, to the member who asks (their own address), through the same
 * mailer and with the same words as the round's first mail, but with a preview link that opens a
 * page saying it is a test: no link of any round is made. Audited (who asked, never the address).
 */
export async function sendTestMail(
  db: DatabaseExecutor,
  orgId: string,
  opts: { to: string; send: SendMail; previewLink: string },
  actor: Actor,
  now: Date,
): Promise<void> {
  await requireLiveOrg(db, orgId);
  const org = await getOrganization(db, orgId);
  const { timeZone } = await readCheckinSettings(db, orgId);
  const mail = roundMail('first', { orgName: org.name, week: weekOf(now), timeZone, link: opts.previewLink });
  const intro = 'This is a test of the check-in mail: its link opens a preview, and no answer can be given with it.';
  await opts.send({
    to: opts.to,
    subject: `[Test] ${mail.subject}`,
    text: `${intro}\n\n${mail.text}`,
    html: mail.html.replace('<body>\n', `<body>\n<p><em>${intro}</em></p>\n`),
    fromName: mail.fromName,
  });
  await db.transaction((tx) => recordAudit(tx, orgId, actor, { action: 'checkin_mail.tested', target: { kind: 'checkin_round', id: null } }, now));
}

/** The week whose round a links file is for: this week's, started now (without mail) when it has not started. */
async function currentRound(db: DatabaseExecutor, orgId: string, keys: RoundOptions['keys'], now: Date): Promise<string> {
  const week = weekOf(now);
  if (!(await findRound(db, orgId, week))) {
    await startRound(db, orgId, week, { mails: false, firstDue: now, reminderDue: null }, now);
    await makeRoundKeys(db, orgId, week, keys);
  }
  return week;
}

/**
 * New links for some people of the round, each person's one among as many new links as their
 * slot has people, all written in one statement in random order; the others are never handed out.
 * So a re-send audited by name does not single out its link among the links made with it.
 */
async function makeLinksFor(
  tx: Queryable,
  orgId: string,
  week: string,
  people: readonly { teamSlot: string }[],
  slotSize: (slot: string) => number,
): Promise<string[]> {
  const links: { hashHex: string; teamSlot: string }[] = [];
  const mine: string[] = [];
  const perSlot = new Map<string, number>();
  for (const p of people) perSlot.set(p.teamSlot, (perSlot.get(p.teamSlot) ?? 0) + 1);
  for (const p of people) {
    const token = newLinkToken();
    mine.push(token);
    links.push({ hashHex: tokenHash(token).toString('hex'), teamSlot: p.teamSlot });
  }
  // Fill each slot up to its size with links nobody gets: a slot re-sent for one person still makes a slot's worth.
  for (const [slot, n] of perSlot) {
    for (let i = n; i < Math.max(n, slotSize(slot)); i++) links.push({ hashHex: tokenHash(newLinkToken()).toString('hex'), teamSlot: slot });
  }
  await insertLinks(tx, orgId, week, shuffled(links));
  return mine;
}

export interface ResentLink {
  week: string;
  /** Without SMTP: the new link, shown once to whoever asked; with it, null (it goes by mail). */
  link: string | null;
}

/**
 * A new link for one person of this week's round, who lost theirs: their earlier link keeps
 * working (nothing says which link was theirs), and their key still takes no more answers than it
 * was made for. With SMTP the link goes by mail through the outbox; without, it is returned once.
 */
export async function resendCheckinLink(
  db: DatabaseExecutor,
  orgId: string,
  respondentId: string,
  opts: Pick<RoundOptions, 'linkFor' | 'keys'> & { mails: boolean },
  actor: Actor,
  now: Date,
): Promise<ResentLink> {
  await requireLiveOrg(db, orgId);
  await getRespondent(db, orgId, respondentId);
  const week = weekOf(now);
  if (!(await findRound(db, orgId, week))) {
    throw new ApiError('invalid_transition', "This week's round has not started yet: everyone of the roster gets their link when it starts.");
  }
  return db.transaction(async (tx) => {
    const slot = await memberSlot(tx, orgId, week, respondentId);
    if (slot === null) {
      throw new ApiError(
        'invalid_transition',
        "This person is not on this week's round (added since it started, or removed): they get a link from the next round.",
      );
    }
    const sizes = new Map((await roundSlots(tx, orgId, week)).map((s) => [s.teamSlot, s.respondents]));
    const [token] = await makeLinksFor(tx, orgId, week, [{ teamSlot: slot }], (s) => sizes.get(s) ?? 1);
    if (opts.mails) await insertOutbox(tx, orgId, week, [sealedMail(orgId, respondentId, 'resent', token!, now, now)]);
    await recordAudit(tx, orgId, actor, { action: 'checkin_link.resent', target: { kind: 'respondent', id: respondentId } }, now);
    return { week, link: opts.mails ? null : opts.linkFor(orgId, token!) };
  });
}

/** A cell of the links file: quoted when needed, and never read as a formula by a spreadsheet (a leading =, +, -, @ or tab gets a quote mark). */
export const csvCell = (v: string) => (/[",\n\r]/.test(v) || /^[=+\-@\t]/.test(v) ? `"${v.replace(/^([=+\-@\t])/, "'$1").replace(/"/g, '""')}"` : v);

/** The week's links as the file every face hands out (console download, operator CLI): a header, then email,team,link per row. */
export const linksCsv = (links: readonly { email: string; team: string | null; link: string }[], eol = '\r\n') =>
  `${['email,team,link', ...links.map((l) => [l.email, l.team ?? '', l.link].map(csvCell).join(','))].join(eol)}${eol}`;

export interface LinksFile {
  week: string;
  /** Whether these are new links for everyone of the round (the first file's were handed out already). */
  renewed: boolean;
  links: { email: string; team: string | null; link: string }[];
}

/**
 * Without SMTP_URL: the week's links for the organization's own mail tool (starting the week's
 * round when it has not started). The first file hands out the links the round made, taking them
 * out of the outbox. Once handed out they are nowhere in the service: a later file makes a new
 * link for everyone of the round, only when asked to (`renew`), and says so first; the earlier
 * file's links keep working. With SMTP_URL the links go by mail and no file is made: a file would
 * let its holder answer in others' places. Whoever holds the file can answer in someone's place,
 * though still learn no answer.
 */
export async function exportWeekLinks(
  db: DatabaseExecutor,
  orgId: string,
  opts: Pick<RoundOptions, 'linkFor' | 'keys'> & { mails: boolean; renew?: boolean },
  actor: Actor,
  now: Date,
): Promise<LinksFile> {
  await requireLiveOrg(db, orgId);
  if (opts.mails) {
    throw new ApiError(
      'invalid_transition',
      "This server mails the check-in links (SMTP_URL is set), so it makes no links file: a file would let whoever holds it answer in the place of others. Re-send one person's link instead.",
    );
  }
  const week = await currentRound(db, orgId, opts.keys, now);
  return db.transaction(async (tx) => {
    const people = await roundPeople(tx, orgId, week);
    // Links made before (a first file, or mails of a round started with SMTP) are nowhere in the service now.
    const renewed = (await weekLinkCount(tx, orgId, week)) > 0;
    if (renewed && people.length > 0 && !opts.renew) {
      throw new ApiError(
        'invalid_transition',
        `This week's links were handed out already. A new file makes a new link for each of the ${people.length} people of this week's round; the links of the earlier file keep working, and each team's key still takes no more answers than the team has people. Ask for new links to make them (--new in the CLI, renew=true in the operator API).`,
      );
    }
    const sizes = new Map((await roundSlots(tx, orgId, week)).map((s) => [s.teamSlot, s.respondents]));
    const tokens = await makeLinksFor(
      tx,
      orgId,
      week,
      people.map((p) => ({ teamSlot: p.team_slot })),
      (s) => sizes.get(s) ?? 0,
    );
    const links = people.map((p, i) => ({ email: p.email, team: p.team_name, link: opts.linkFor(orgId, tokens[i]!) }));
    await recordAudit(
      tx,
      orgId,
      actor,
      { action: 'checkin_links.exported', target: { kind: 'checkin_round', id: week }, details: { links: links.length, renewed } },
      now,
    );
    return { week, renewed, links };
  });
}

/** What a links file would do now, said before it is made: whether the round started, whether its links were handed out, its people. */
export async function linksFileState(
  db: DatabaseExecutor,
  orgId: string,
  now: Date,
): Promise<{ week: string; started: boolean; handedOut: boolean; people: number }> {
  const week = weekOf(now);
  const round = await findRound(db, orgId, week);
  if (!round) return { week, started: false, handedOut: false, people: 0 };
  const people = (await roundSlots(db, orgId, week)).reduce((n, s) => n + s.respondents, 0);
  return { week, started: true, handedOut: (await weekLinkCount(db, orgId, week)) > 0, people };
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
