import { readFileSync } from 'node:fs';
import type { Command } from 'commander';
import type { Static } from 'typebox';
import type {
  ParticipationSchema,
  ResentLinkSchema,
  RosterReplacedSchema,
  RosterSchema,
  RoundSentSchema,
  RoundStatusesSchema,
  WeekLinksSchema,
} from '../../contract/schemas/admin-checkins.js';
import { linksCsv } from '../../domain/checkins/rounds.js';
import { withOperator } from '../operator.js';
import { printTable } from '../table.js';
import { JSON_HELP, say } from '../output.js';

const org = (id: string) => `/admin/v1/organizations/${encodeURIComponent(id)}`;
const few = (n: number | null) => (n === null ? '<5' : String(n));

/**
 * `climate-pulse respondents add|list|move|remove|replace` and `climate-pulse checkins links|participation`:
 * the check-ins' roster and rounds (CONTRACT.md section 12), through the operator API like every
 * operator command, so they work while the server holds the embedded directory.
 */
export function registerRespondents(program: Command) {
  const respondents = program.command('respondents').description('the check-in roster: add, list, move, remove people, or replace it from a CSV file');

  respondents
    .command('add')
    .description('add a person to the roster (a team of that name is made when missing)')
    .requiredOption('--org <id>', 'organization id')
    .requiredOption('--email <email>', "the person's email address")
    .option('--team <name>', 'team name (none: no team)')
    .option('--json', JSON_HELP)
    .action(async (opts: { org: string; email: string; team?: string; json?: boolean }) => {
      await withOperator(async (op) => {
        const r = await op.call<{ id: string }>('POST', `${org(opts.org)}/respondents`, { email: opts.email, team: opts.team ?? null });
        say(opts, `added ${opts.email} (${r.id}) to the roster of ${opts.org}`, { id: r.id, email: opts.email, team: opts.team ?? null, orgId: opts.org });
      });
    });

  respondents
    .command('list')
    .description('list the roster, and which teams answer as a team (5 or more people)')
    .requiredOption('--org <id>', 'organization id')
    .option('--json', 'print JSON instead of a table')
    .action(async (opts: { org: string; json?: boolean }) => {
      await withOperator(async (op) => {
        const r = await op.call<Static<typeof RosterSchema>>('GET', `${org(opts.org)}/respondents`);
        if (opts.json) return void console.log(JSON.stringify(r, null, 2));
        printTable([
          ['ID', 'EMAIL', 'TEAM', 'ANSWERS AS'],
          ...r.items.map((p) => [p.id, p.email, p.teamName ?? '', p.answersWithTeam ? 'team' : 'organization (no team)']),
        ]);
      });
    });

  respondents
    .command('move')
    .description("change a person's team (from the next round)")
    .requiredOption('--org <id>', 'organization id')
    .option('--team <name>', 'the new team (none: no team)')
    .argument('<respondent>', 'the respondent id (rsp_…)')
    .option('--json', JSON_HELP)
    .action(async (id: string, opts: { org: string; team?: string; json?: boolean }) => {
      await withOperator(async (op) => {
        await op.call('PATCH', `${org(opts.org)}/respondents/${encodeURIComponent(id)}`, { team: opts.team ?? null });
        say(opts, `moved ${id} to ${opts.team ?? 'no team'}`, { id, team: opts.team ?? null, orgId: opts.org });
      });
    });

  respondents
    .command('remove')
    .description("remove a person from the roster from the next round (this week's link keeps working; answers already given stay, tied to no one)")
    .requiredOption('--org <id>', 'organization id')
    .argument('<respondent>', 'the respondent id (rsp_…)')
    .option('--json', JSON_HELP)
    .action(async (id: string, opts: { org: string; json?: boolean }) => {
      await withOperator(async (op) => {
        await op.call('DELETE', `${org(opts.org)}/respondents/${encodeURIComponent(id)}`);
        say(opts, `removed ${id} from the roster of ${opts.org}`, { id, orgId: opts.org, removed: true });
      });
    });

  respondents
    .command('resend')
    .description('a new link of this week for a person who lost theirs (by mail with SMTP_URL, else printed); their earlier link keeps working')
    .requiredOption('--org <id>', 'organization id')
    .argument('<respondent>', 'the respondent id (rsp_…)')
    .option('--json', JSON_HELP)
    .action(async (id: string, opts: { org: string; json?: boolean }) => {
      await withOperator(async (op) => {
        const r = await op.call<Static<typeof ResentLinkSchema>>('POST', `${org(opts.org)}/respondents/${encodeURIComponent(id)}/resend-link`);
        const value = { id, week: r.week, link: r.link };
        if (r.link === null) say(opts, `a new link of the week of ${r.week} goes to ${id} by mail within a minute; their earlier link keeps working`, value);
        else {
          // A secret shown once: alone on stdout (inside the JSON with --json), its sentence on stderr.
          say(opts, r.link, value);
          console.error(`the new link of the week of ${r.week} for ${id}, shown only now; their earlier link keeps working`);
        }
      });
    });

  respondents
    .command('replace')
    .description(
      'replace the roster with a CSV file (a header row naming the email and team columns, other columns ignored; or email,team lines), checked whole before anything changes: every bad line is listed',
    )
    .requiredOption('--org <id>', 'organization id')
    .option('--email-column <name>', "the header's name of the email column, when the header does not say it plainly")
    .option('--team-column <name>', "the header's name of the team column ('' for none)")
    .argument('<file>', 'the CSV file')
    .option('--json', JSON_HELP)
    .action(async (file: string, opts: { org: string; emailColumn?: string; teamColumn?: string; json?: boolean }) => {
      const csv = readFileSync(file, 'utf8');
      const body: Record<string, string> = { csv };
      if (opts.emailColumn !== undefined) body.emailColumn = opts.emailColumn;
      if (opts.teamColumn !== undefined) body.teamColumn = opts.teamColumn;
      await withOperator(async (op) => {
        const r = await op.call<Static<typeof RosterReplacedSchema>>('POST', `${org(opts.org)}/roster`, body);
        say(opts, `roster replaced: ${r.added} added, ${r.removed} removed, ${r.moved} moved, ${r.unchanged} unchanged`, r);
      });
    });

  const checkins = program
    .command('checkins')
    .description("the week's check-in rounds: send this week's round now, each round's status, the links without SMTP, participation counts");

  checkins
    .command('send')
    .description("send this week's round now (with SMTP_URL), instead of at its scheduled hour: the round is fixed from then on")
    .requiredOption('--org <id>', 'organization id')
    .option('--json', JSON_HELP)
    .action(async (opts: { org: string; json?: boolean }) => {
      await withOperator(async (op) => {
        const r = await op.call<Static<typeof RoundSentSchema>>('POST', `${org(opts.org)}/checkin-rounds`);
        say(opts, `the round of the week of ${r.week} started: ${r.people} ${r.people === 1 ? 'mail goes' : 'mails go'} out within a minute`, r);
      });
    });

  checkins
    .command('status')
    .description("each round of the last 8 weeks: mails sent, waiting and failed (with the relay's last reason), reminders, when its links close")
    .requiredOption('--org <id>', 'organization id')
    .option('--json', 'print JSON instead of a table')
    .action(async (opts: { org: string; json?: boolean }) => {
      await withOperator(async (op) => {
        const r = await op.call<Static<typeof RoundStatusesSchema>>('GET', `${org(opts.org)}/checkin-rounds`);
        if (opts.json) return void console.log(JSON.stringify(r, null, 2));
        const t = r.thisWeek;
        console.log(
          t.startedAt
            ? `this week (${t.week}): started ${t.startedAt}`
            : `this week (${t.week}): not started; scheduled ${t.scheduledAt} for ${t.people} ${t.people === 1 ? 'person' : 'people'}`,
        );
        const n = (v: number | null) => (v === null ? '-' : String(v));
        printTable([
          ['WEEK', 'STARTED', 'DELIVERY', 'PEOPLE', 'MAILED', 'WAITING', 'FAILED', 'REMINDED', 'CLOSES'],
          ...r.items.map((i) => [
            i.week,
            i.startedAt,
            i.delivery ?? '-',
            String(i.people),
            n(i.mailed),
            String(i.waiting),
            String(i.failed),
            n(i.reminded),
            i.closesAt,
          ]),
        ]);
        for (const i of r.items) if (i.lastError) console.log(`${i.week}: the relay's last refusal (${i.lastErrorAt}): ${i.lastError}`);
      });
    });

  checkins
    .command('links')
    .description(
      "without SMTP_URL: print this week's personal links as CSV (email,team,link) for the organization's own mail tool. The first time, the links the round made; once they were handed out, only with --new: a new link for everyone, the earlier ones still working",
    )
    .requiredOption('--org <id>', 'organization id')
    .option('--new', "when this week's links were handed out already: make a new link for everyone of the round")
    .option('--json', 'print one JSON document ({week, renewed, links: [{email, team, link}]}) instead of CSV')
    .action(async (opts: { org: string; new?: boolean; json?: boolean }) => {
      await withOperator(async (op) => {
        const r = await op.call<Static<typeof WeekLinksSchema>>('POST', `${org(opts.org)}/checkin-links${opts.new ? '?renew=true' : ''}`);
        if (opts.json) console.log(JSON.stringify(r));
        else process.stdout.write(linksCsv(r.links, '\n'));
        console.error(
          `${r.links.length} ${r.renewed ? 'new links (the earlier ones keep working)' : 'links'} of the week of ${r.week}. Whoever holds them can answer in someone's place, though still learn no answer.`,
        );
      });
    });

  checkins
    .command('participation')
    .description('invited, opened and answered per team and week, each only from 5')
    .requiredOption('--org <id>', 'organization id')
    .option('--json', JSON_HELP)
    .action(async (opts: { org: string; json?: boolean }) => {
      await withOperator(async (op) => {
        const r = await op.call<Static<typeof ParticipationSchema>>('GET', `${org(opts.org)}/checkin-participation`);
        if (opts.json) return void console.log(JSON.stringify(r, null, 2));
        printTable([
          ['WEEK', 'TEAM', 'INVITED', 'OPENED', 'ANSWERED'],
          ...r.items.map((c) => [c.week, c.teamName ?? '(no team)', few(c.invited), few(c.opened), few(c.answered)]),
        ]);
      });
    });
}
