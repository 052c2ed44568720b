import type { Command } from 'commander';
import { loadConfig } from '../../config.js';
import { lastClosedWeek, type AlertRunReport } from '../../domain/alert-engine.js';
import { isoWeekLabel, parseIsoWeek, WEEK_MS } from '../../domain/time.js';
import type { Alert } from '../../contract/schemas/alerts.js';
import { withOperator } from '../operator.js';
import { CliError } from '../errors.js';
import { JSON_HELP, say } from '../output.js';

function week(label: string, option: string): Date {
  const monday = parseIsoWeek(label);
  if (!monday) throw new CliError(`${option} ${JSON.stringify(label)} is not an ISO week like 2026-W47`);
  return monday;
}

/** The weeks a run evaluates: --week W, --since W (through the latest closed week), or the latest closed week. */
export function weeksToRun(opts: { week?: string; since?: string }, now: Date, closeDelayMinutes: number): Date[] {
  if (opts.week !== undefined && opts.since !== undefined) throw new CliError('give --week or --since, not both');
  const last = lastClosedWeek(now, closeDelayMinutes);
  const notClosed = (w: Date, option: string) =>
    new CliError(
      `${option} ${isoWeekLabel(w)} is not closed yet: the latest closed week is ${isoWeekLabel(last)} (weeks close at Monday 00:00 UTC plus ALERTS_CLOSE_DELAY_MINUTES=${closeDelayMinutes})`,
    );
  if (opts.week !== undefined) {
    const w = week(opts.week, '--week');
    if (w > last) throw notClosed(w, '--week');
    return [w];
  }
  if (opts.since !== undefined) {
    const first = week(opts.since, '--since');
    if (first > last) throw notClosed(first, '--since');
    const out: Date[] = [];
    for (let t = first.getTime(); t <= last.getTime(); t += WEEK_MS) out.push(new Date(t));
    return out;
  }
  return [last];
}

export function registerAlerts(program: Command) {
  const alerts = program.command('alerts').description('the alert engine');
  alerts
    .command('run')
    .description('evaluate closed ISO weeks and raise their alerts (each at most once); prints what it raised')
    .option('--week <week>', 'one closed ISO week, like 2026-W47 (default: the latest closed week)')
    .option('--since <week>', 'every closed week from this one through the latest (backfill after an import)')
    .option('--org <id>', 'only this organization (default: every organization with pulses)')
    .option('--json', JSON_HELP)
    .action(async (opts: { week?: string; since?: string; org?: string; json?: boolean }) => {
      const config = loadConfig();
      const weeks = weeksToRun(opts, new Date(), config.alertsCloseDelayMinutes);
      await withOperator(async (op) => {
        const report = await op.call<AlertRunReport>('POST', '/admin/v1/alerts/run', {
          weeks: weeks.map(isoWeekLabel),
          ...(opts.org !== undefined ? { orgId: opts.org } : {}),
        });
        if (opts.json) return void console.log(JSON.stringify(report));
        for (const a of report.raised) {
          console.log(`${a.weekISO}\t${a.orgId}\t${a.type}\t${a.id}\t${a.message}`);
        }
        const span = weeks.length === 1 ? report.weeks[0] : `${report.weeks[0]}..${report.weeks[report.weeks.length - 1]}`;
        console.log(
          `raised ${report.raised.length} alert${report.raised.length === 1 ? '' : 's'} for ${span} in ${report.organizations} organization${report.organizations === 1 ? '' : 's'}`,
        );
      });
    });

  alerts
    .command('mark-read')
    .description('set the read marker of an alert (readAt: the first time is kept), or clear it with --unread')
    .requiredOption('--org <id>', 'organization id')
    .option('--unread', 'clear the read marker instead')
    .argument('<alert-id>', 'alert id')
    .option('--json', JSON_HELP)
    .action(async (alertId: string, opts: { org: string; unread?: boolean; json?: boolean }) => {
      await withOperator(async (op) => {
        const a = await op.call<Alert>('PATCH', `/admin/v1/organizations/${encodeURIComponent(opts.org)}/alerts/${encodeURIComponent(alertId)}`, {
          read: !opts.unread,
        });
        say(opts, a.readAt ? `alert ${a.id} of ${opts.org} read at ${a.readAt}` : `alert ${a.id} of ${opts.org} is unread`, {
          id: a.id,
          orgId: opts.org,
          readAt: a.readAt,
        });
      });
    });
}
