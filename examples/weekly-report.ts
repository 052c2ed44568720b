/**
 * Weekly report: for each team, the pulse count and average level of the last four closed ISO
 * weeks (Monday to Sunday, UTC), and the alerts raised for those weeks.
 *
 *   npm start                                   # prints a demo key
 *   CP_API_KEY=cp_live_... npx tsx examples/weekly-report.ts
 *
 * CP_BASE_URL (default http://127.0.0.1:3000) names the service.
 */
import { fileURLToPath } from 'node:url';
import { ClimatePulseClient, ClimatePulseError, type Alert, type Team } from '@climate-pulse/client';

const DAY = 86_400_000;
const WEEKS = 4;

export interface Week {
  label: string; // ISO week, e.g. 2026-W47
  from: string; // Monday 00:00 UTC, inclusive
  to: string; // the next Monday, exclusive
}

export function isoWeekLabel(monday: Date): string {
  const thursday = new Date(monday.getTime() + 3 * DAY);
  const year = thursday.getUTCFullYear();
  const week = Math.floor((thursday.getTime() - Date.UTC(year, 0, 1)) / DAY / 7) + 1;
  return `${year}-W${String(week).padStart(2, '0')}`;
}

/** The last `n` ISO weeks that have ended before `now`, oldest first. */
export function closedWeeks(now: Date, n = WEEKS): Week[] {
  const today = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate());
  const thisMonday = today - ((now.getUTCDay() + 6) % 7) * DAY;
  return Array.from({ length: n }, (_, i) => {
    const monday = new Date(thisMonday - (n - i) * 7 * DAY);
    return { label: isoWeekLabel(monday), from: monday.toISOString(), to: new Date(monday.getTime() + 7 * DAY).toISOString() };
  });
}

async function weekOfTeam(client: ClimatePulseClient, team: Team, week: Week) {
  let count = 0;
  let sum = 0;
  for await (const pulse of client.pulses.list({ subteamId: team.id, from: week.from, to: week.to, limit: 200 })) {
    count++;
    sum += pulse.level;
  }
  return { count, avg: count ? Math.round((sum / count) * 100) / 100 : null };
}

/** The report's lines: a header, then one line per team. */
export async function weeklyReport(client: ClimatePulseClient, now = new Date()): Promise<string[]> {
  const weeks = closedWeeks(now);
  const [org, teams, alerts] = await Promise.all([client.org.get(), client.teams.list(), client.alerts.list({ limit: 50 })]);
  const labels = new Set(weeks.map((w) => w.label));
  const recent = alerts.filter((a) => a.weekISO !== null && labels.has(a.weekISO));
  const alertText = (xs: Alert[]) =>
    xs.length ? xs.map((a) => `${a.weekISO} ${a.type}: ${a.message}`).join('; ') : 'none';

  const lines = [`${org.name}: weeks ${weeks[0].label} to ${weeks[weeks.length - 1].label} (pulses, average level; alerts)`];
  const width = Math.max(...teams.map((t) => t.name.length));
  for (const team of teams) {
    const stats = await Promise.all(weeks.map((week) => weekOfTeam(client, team, week)));
    const cells = weeks.map((w, i) => `${w.label} ${String(stats[i].count).padStart(4)} x ${stats[i].avg?.toFixed(2) ?? ' -- '}`);
    lines.push(`${team.name.padEnd(width)}  ${cells.join(' | ')} | alerts: ${alertText(recent.filter((a) => a.subteamName === team.name))}`);
  }
  const orgWide = recent.filter((a) => a.subteamName === null);
  if (orgWide.length) lines.push(`(no team)  alerts: ${alertText(orgWide)}`);
  return lines;
}

async function main() {
  const apiKey = process.env.CP_API_KEY;
  if (!apiKey) {
    console.error('Set CP_API_KEY to an API key (npm start prints one for the demo organization).');
    process.exit(2);
  }
  const client = new ClimatePulseClient({ baseUrl: process.env.CP_BASE_URL ?? 'http://127.0.0.1:3000', apiKey });
  try {
    for (const line of await weeklyReport(client)) console.log(line);
  } catch (e) {
    if (!(e instanceof ClimatePulseError)) throw e;
    console.error(`${e.status} ${e.code}: ${e.message}${e.requestId ? ` (request ${e.requestId})` : ''}`);
    process.exit(1);
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) await main();
