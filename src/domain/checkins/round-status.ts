import type { Queryable } from '../database.js';
import { roundStatusRows } from '../../db/repositories/checkins.js';
import { addWeeks, checkinClosesAt, weekOf } from './week.js';

/**
 * Each round's status (CONTRACT.md section 11 amended, *Rounds you can see*): how many mails the
 * relay took, how many wait, how many it refused and its last reason, the reminders, and when the
 * links close. Every count is per round, never per person: nothing here says whose mail went or
 * failed, and nothing is written by an opening or an answer (the counts move only while mailing).
 */
export interface RoundStatus {
  week: string;
  startedAt: string;
  /** 'mail': the round mails its links; 'file': its links were handed out as a file (no SMTP); null: started before rounds were counted. */
  delivery: 'mail' | 'file' | null;
  people: number;
  /** First and re-sent links the relay took; null: not counted (a round started before migration 0027). */
  mailed: number | null;
  waiting: number;
  /** Mails the relay refused at their last try; they are tried again at each run until the links close. */
  failed: number;
  reminded: number | null;
  remindersWaiting: number;
  reminderDue: string | null;
  /** The relay's last refusal, any address in it replaced, and when. */
  lastError: string | null;
  lastErrorAt: string | null;
  closesAt: string;
  open: boolean;
}

/** The rounds of the last `weeks` weeks, newest first. */
export async function roundStatuses(db: Queryable, orgId: string, now: Date, weeks = 8): Promise<RoundStatus[]> {
  const rows = await roundStatusRows(db, orgId, addWeeks(weekOf(now), -(weeks - 1)));
  return rows.map((r) => {
    const closesAt = checkinClosesAt(r.week);
    return {
      week: r.week,
      startedAt: r.startedAt,
      delivery: r.byMail === null ? null : r.byMail ? 'mail' : 'file',
      people: r.people,
      mailed: r.mailed,
      waiting: r.waiting,
      failed: r.refused,
      reminded: r.reminded,
      remindersWaiting: r.remindersWaiting,
      reminderDue: r.reminderDue,
      lastError: r.lastError,
      lastErrorAt: r.lastErrorAt,
      closesAt: closesAt.toISOString(),
      open: now < closesAt,
    };
  });
}

const ADDRESS = /[^\s<>"'(),;:]+@[^\s<>"'(),;:]+/g;
// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what this removes
const CONTROL = /[\u0000-\u001f\u007f-\u009f]+/g;

/**
 * The relay's reason for refusing a mail, as the round keeps it: its message (an SMTP reply such
 * as "550 5.1.1 <x@y>: Recipient address rejected", or a connection error), with every address in
 * it (the recipients', or any other) replaced by "[address]", control characters as spaces, at
 * most 500 characters. The round's status shows it to the organization's admins; it never says
 * whose mail it was.
 */
export function relayReason(err: unknown, recipients: readonly string[] = []): string {
  let text = err instanceof Error ? err.message : typeof err === 'string' ? err : 'The relay refused the mail.';
  for (const r of recipients) if (r) text = text.split(r).join('[address]');
  text = text.replace(ADDRESS, '[address]').replace(CONTROL, ' ').replace(/\s+/g, ' ').trim();
  if (text === '') text = 'The relay refused the mail.';
  return [...text].length > 500 ? `${[...text].slice(0, 499).join('')}…` : text;
}
