import cluster from 'node:cluster';
import type { DatabaseExecutor } from '../domain/database.js';
import { listOrganizations } from '../domain/orgs.js';

/**
 * What a server prints at start when it made no demo, so that whoever started it is never left
 * without a way in (issue 42): the organizations the database holds and the commands that make a
 * key or a console invitation (they work while the server runs: through its operator socket on
 * the embedded database, beside it on PostgreSQL). Printed on PostgreSQL too, with or without
 * `--demo-if-empty`, and once per start: by a single process, or by the first worker of `WORKERS`.
 * The commands name the demo organization when there is one (a restart after the README's
 * operator section holds others, listed first as the newest), else the newest one. The last two
 * lines are the way to the check-ins (issue 45): the People page, and the week's links.
 */
export async function printWayIn(
  db: DatabaseExecutor,
  base: string,
  opts: WayInOptions = { mails: false },
  log: (text: string) => void = (t) => console.log(t),
): Promise<void> {
  if (cluster.isWorker && cluster.worker?.id !== 1) return;
  log(await wayIn(db, base, opts));
}

/**
 * The way to this week's check-in (CONTRACT.md section 12), printed on the first run after the
 * console's invitation: the People page, where the new owner puts themself on the roster, and the
 * Check-ins page, where the week's link is. Without SMTP_URL that page offers the links as a CSV
 * file (the CLI prints them too); with it, the link comes by mail once the round's hour has passed.
 */
export function checkinWayIn(base: string, orgId: string, opts: WayInOptions): string {
  const cli = opts.cli ?? 'npx climate-pulse';
  const people = `${base}/console/people`;
  return [
    `Check-ins: add yourself to the roster on the console's People page, ${people}, and answer this week's check-in:`,
    opts.mails
      ? "  your personal link comes by mail (SMTP_URL) within a minute once the round's hour has passed (set on that page; Monday 09:00 UTC at first)."
      : `  without SMTP_URL no mail goes; download the week's links on the Check-ins page, ${base}/console/checkins (CSV), or print them: ${cli} checkins links --org ${orgId}`,
  ].join('\n');
}

/**
 * `cli`: the command the hints name, with the variable that chose this database (src/cli/hints.ts,
 * `cliCommand`); `note`: a line after them when that variable's password is shown as `***`.
 */
export interface WayInOptions {
  mails: boolean;
  cli?: string;
  note?: string;
}

export async function wayIn(db: DatabaseExecutor, base: string, opts: WayInOptions = { mails: false }): Promise<string> {
  const cli = opts.cli ?? 'npx climate-pulse';
  const { items, nextCursor } = await listOrganizations(db, { limit: 10 });
  const live = items.filter((o) => o.deletedAt === null);
  const example = (live.find((o) => o.id.startsWith('org_demo_')) ?? live[0])?.id ?? 'ORG_ID';
  return [
    `Organizations: ${live.length === 0 ? 'none live' : live.map((o) => `${o.id} (${o.name})`).join(', ')}${nextCursor ? `, and more (${cli} orgs list)` : ''}.`,
    `  a new API key:           ${cli} keys create --org ${example}`,
    `  a console invitation:    ${cli} members invite --org ${example} --email you@example.com --role owner`,
    `  the console:             ${base}/console`,
    `  the check-in roster:     ${base}/console/people`,
    opts.mails
      ? '  check-in links:          by mail (SMTP_URL), each week at the hour set on that page'
      : `  check-in links:          ${cli} checkins links --org ${example}`,
    ...(opts.note ? [opts.note] : []),
  ].join('\n');
}
