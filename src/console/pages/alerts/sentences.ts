import type { Alert } from '../../../contract/schemas/alerts.js';
import { parseIsoWeek, ymd } from '../../../domain/time.js';
import { html, type Safe } from '../../html.js';
import type { Speaker } from '../../words.js';

/**
 * Alerts as people read them (CONTRACT.md section 11, *Insight*): one sentence per team and week.
 * The engine raises LOW_MOOD, MOOD_DROP and PARTICIPATION_DROP of one group and week as separate
 * alerts (the API lists each); here they are one line, in words, not codes. An alert the engine did
 * not write (imported, or a message this release does not know) keeps its own line and its message.
 */

export interface AlertLine {
  /** The alerts of the line, newest first: a change (read, unread) applies to each. */
  alerts: Alert[];
  unread: boolean;
  /** The newest alert's time. */
  createdAt: string;
  sentence: Safe;
  /** A short plain text of the line (for a button's name). */
  label: string;
}

type Subject = { kind: 'team'; name: string } | { kind: 'org' } | { kind: 'no_team' };

interface Parsed {
  subject: Subject;
  type: 'MOOD_DROP' | 'LOW_MOOD' | 'PARTICIPATION_DROP';
  n: string;
  avg?: string;
  low?: string;
  diff?: string;
  base?: string;
  pct?: string;
  usual?: string;
  /** "N" of "in N of the previous 4 weeks", or null for "its 4-week average". */
  weeks?: string | null;
}

const NUM = String.raw`(-?\d+\.\d\d)`;
const BASELINE = String.raw`(?:its 4-week (?:average)|its average in (\d) of the previous 4 weeks)`;
const REST: Record<Parsed['type'], RegExp> = {
  MOOD_DROP: new RegExp(String.raw`^averaged ${NUM} in \d{4}-W\d\d, ${NUM} below ${BASELINE} of ${NUM} \((\d+) pulses\)\.$`),
  LOW_MOOD: new RegExp(String.raw`^averaged ${NUM} in \d{4}-W\d\d \((\d+) pulses\), at or below the low-mood level of ${NUM}\.$`),
  PARTICIPATION_DROP: new RegExp(String.raw`^fell to (\d+) pulses in \d{4}-W\d\d, at most (\d+)% of ${BASELINE} of ${NUM} pulses a week\.$`),
};

/** An engine's alert read back into its figures (src/domain/alert-engine.ts writes these messages); null for any other. */
export function parseAlert(a: Alert): Parsed | null {
  const type = a.type as Parsed['type'];
  if (!(type in REST) || a.weekISO === null) return null;
  const word = type === 'PARTICIPATION_DROP' ? 'Participation' : 'Mood';
  const subjects: [Subject, string][] = a.subteamName
    ? [[{ kind: 'team', name: a.subteamName }, `in ${a.subteamName}`]]
    : [
        [{ kind: 'org' }, 'across the organization'],
        [{ kind: 'no_team' }, 'among pulses without a team'],
      ];
  for (const [subject, words] of subjects) {
    const prefix = `${word} ${words} `;
    if (!a.message.startsWith(prefix)) continue;
    const m = REST[type].exec(a.message.slice(prefix.length));
    if (!m) return null;
    if (type === 'MOOD_DROP') return { subject, type, avg: m[1], diff: m[2], weeks: m[3] ?? null, base: m[4], n: m[5] };
    if (type === 'LOW_MOOD') return { subject, type, avg: m[1], n: m[2], low: m[3] };
    return { subject, type, n: m[1], pct: m[2], weeks: m[3] ?? null, usual: m[4] };
  }
  return null;
}

const subjectKey = (s: Subject) => (s.kind === 'team' ? `team:${s.name}` : s.kind);

/** "the usual of N of the 4 weeks before" takes N; 0 is "the usual of the 4 weeks before" (its 4-week average). */
const weeksOf = (weeks: string | null | undefined) => (weeks ? Number(weeks) : 0);

/** The alerts (newest first) as lines, newest first: those of one group and week merged into one sentence (`console.alerts.sentence`). */
export function alertLines(alerts: readonly Alert[], speaker: Speaker): AlertLine[] {
  const { t } = speaker;
  const groups = new Map<string, { alerts: Alert[]; parsed: Parsed[] }>();
  for (const a of alerts) {
    const p = parseAlert(a);
    const key = p ? `${a.weekISO}|${subjectKey(p.subject)}` : `alert|${a.id}`;
    const g = groups.get(key) ?? { alerts: [], parsed: [] };
    g.alerts.push(a);
    if (p) g.parsed.push(p);
    groups.set(key, g);
  }
  return [...groups.values()].map(({ alerts: as, parsed }) => {
    const first = as[0];
    const line = { alerts: as, unread: as.some((a) => a.readAt === null), createdAt: first.createdAt };
    if (parsed.length === 0) {
      return { ...line, sentence: html`<bdi>${first.message}</bdi>`, label: t('console.alerts.otherLabel', { message: first.message.slice(0, 80) }) };
    }
    const num = (v: string) => speaker.number(Number(v), 2);
    const find = (type: Parsed['type']) => parsed.find((p) => p.type === type);
    const low = find('LOW_MOOD');
    const drop = find('MOOD_DROP');
    const part = find('PARTICIPATION_DROP');
    const mood = drop ?? low;
    const subject = parsed[0].subject;
    const monday = parseIsoWeek(first.weekISO!);
    const who = { day: monday ? speaker.day(ymd(monday)) : first.weekISO!, subject: subject.kind, team: subject.kind === 'team' ? subject.name : '' };
    const values = {
      ...who,
      mood: low && drop ? 'both' : low ? 'low' : drop ? 'drop' : 'none',
      avg: mood ? num(mood.avg!) : '',
      answers: mood ? Number(mood.n) : 0,
      low: low ? num(low.low!) : '',
      diff: drop ? num(drop.diff!) : '',
      base: drop ? num(drop.base!) : '',
      dropWeeks: weeksOf(drop?.weeks),
      part: part ? 'yes' : 'no',
      fell: part ? speaker.number(Number(part.n)) : '',
      pct: part ? speaker.percent(Number(part.pct) / 100) : '',
      partWeeks: weeksOf(part?.weeks),
      usual: part ? num(part.usual!) : '',
    };
    return {
      ...line,
      sentence: speaker.rich('console.alerts.sentence', values, { bdi: (chunks) => html`<bdi>${chunks}</bdi>` }),
      label: t('console.alerts.lineLabel', who),
    };
  });
}
