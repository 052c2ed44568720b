import { Option, type Command } from 'commander';
import type { CreatedInvitation, Invitation, InvitationList, Member, MemberList } from '../../contract/schemas/admin-members.js';
import { withOperator } from '../operator.js';
import { JSON_HELP, say } from '../output.js';
import { printTable } from '../table.js';

const org = (id: string) => `/admin/v1/organizations/${encodeURIComponent(id)}`;
/** `--teams a,b`: a manager's team ids. */
const splitTeams = (v: string) =>
  v
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);

/** `climate-pulse members invite|list|remove|invitations list|invitations revoke`: the console's members, through the operator API. */
export function registerMembers(program: Command) {
  const members = program.command('members').description("invite, list and remove the organization console's members; list and revoke invitations");

  members
    .command('invite')
    .description('make a single-use console invitation (valid 72 hours) and print its link')
    .requiredOption('--org <id>', 'organization id')
    .requiredOption('--email <email>', "the person's email address")
    .addOption(
      new Option('--role <role>', "owner: everything; admin: keys, webhooks, actions, alerts; viewer: reads only; manager: reads its teams' figures only")
        .choices(['owner', 'admin', 'viewer', 'manager'])
        .default('viewer'),
    )
    .option('--teams <ids>', "a manager's teams: team ids, separated by commas", splitTeams)
    .option('--json', JSON_HELP)
    .action(async (opts: { org: string; email: string; role: string; teams?: string[]; json?: boolean }) => {
      await withOperator(async (op) => {
        const body = { email: opts.email, role: opts.role, ...(opts.teams ? { teams: opts.teams } : {}) };
        const inv = await op.call<CreatedInvitation>('POST', `${org(opts.org)}/invitations`, body);
        say(opts, inv.url, { id: inv.id, email: inv.email, role: inv.role, teams: inv.teams, url: inv.url, expiresAt: inv.expiresAt, orgId: opts.org });
        console.error(`invited ${inv.email} as ${inv.role} of ${opts.org}; the link works once, until ${inv.expiresAt}, and is shown only now.`);
      });
    });

  members
    .command('list')
    .description("list the organization's console members (never a password or secret)")
    .requiredOption('--org <id>', 'organization id')
    .option('--json', 'print JSON instead of a table')
    .action(async (opts: { org: string; json?: boolean }) => {
      await withOperator(async (op) => {
        const { items } = await op.call<MemberList>('GET', `${org(opts.org)}/members`);
        if (opts.json) return void console.log(JSON.stringify(items, null, 2));
        printTable([
          ['ID', 'EMAIL', 'ROLE', 'TEAMS', 'TWO-FACTOR', 'CREATED', 'LAST SIGN-IN'],
          ...items.map((m) => [m.id, m.email, m.role, m.teams.join(',') || '-', m.twoFactor ? 'on' : 'off', m.createdAt, m.lastSignInAt ?? 'never']),
        ]);
      });
    });

  members
    .command('set-role')
    .description("change a member's role, and a manager's teams (the last owner cannot be demoted)")
    .requiredOption('--org <id>', 'organization id')
    .argument('<member>', 'the member id (mem_…), as `members list` shows it')
    .addOption(new Option('--role <role>', 'the new role').choices(['owner', 'admin', 'viewer', 'manager']).makeOptionMandatory())
    .option('--teams <ids>', "a manager's teams: team ids, separated by commas (omitted: a manager keeps theirs)", splitTeams)
    .option('--json', JSON_HELP)
    .action(async (memberId: string, opts: { org: string; role: string; teams?: string[]; json?: boolean }) => {
      await withOperator(async (op) => {
        const body = { role: opts.role, ...(opts.teams ? { teams: opts.teams } : {}) };
        const m = await op.call<Member>('PATCH', `${org(opts.org)}/members/${encodeURIComponent(memberId)}`, body);
        const teams = m.teams.length > 0 ? ` of ${m.teams.join(', ')}` : '';
        say(opts, `${m.email} (${m.id}) is now ${m.role}${teams} in ${opts.org}`, { id: m.id, email: m.email, role: m.role, teams: m.teams, orgId: opts.org });
      });
    });

  members
    .command('remove')
    .description('remove a member; their console sessions end at once (the last owner cannot be removed)')
    .requiredOption('--org <id>', 'organization id')
    .argument('<member>', 'the member id (mem_…), as `members list` shows it')
    .option('--json', JSON_HELP)
    .action(async (memberId: string, opts: { org: string; json?: boolean }) => {
      await withOperator(async (op) => {
        const m = await op.call<Member>('DELETE', `${org(opts.org)}/members/${encodeURIComponent(memberId)}`);
        say(opts, `removed ${m.email} (${m.id}) from ${opts.org}`, { id: m.id, email: m.email, orgId: opts.org, removed: true });
      });
    });

  const invitations = members.command('invitations').description('invitations not yet accepted: list them, revoke one');

  invitations
    .command('list')
    .description('list the pending invitations (neither accepted nor expired), newest first; never a link')
    .requiredOption('--org <id>', 'organization id')
    .option('--json', 'print JSON instead of a table')
    .action(async (opts: { org: string; json?: boolean }) => {
      await withOperator(async (op) => {
        const { items } = await op.call<InvitationList>('GET', `${org(opts.org)}/invitations`);
        if (opts.json) return void console.log(JSON.stringify(items, null, 2));
        printTable([
          ['ID', 'EMAIL', 'ROLE', 'INVITED BY', 'CREATED', 'EXPIRES'],
          ...items.map((i) => [
            i.id,
            i.email,
            i.teams.length > 0 ? `${i.role} of ${i.teams.join(',')}` : i.role,
            i.invitedBy ?? 'operator',
            i.createdAt,
            i.expiresAt,
          ]),
        ]);
      });
    });

  invitations
    .command('revoke')
    .description('revoke a pending invitation: its link opens nothing from now on')
    .requiredOption('--org <id>', 'organization id')
    .argument('<invitation>', 'the invitation id (inv_…), as `members invitations list` shows it')
    .option('--json', JSON_HELP)
    .action(async (invitationId: string, opts: { org: string; json?: boolean }) => {
      await withOperator(async (op) => {
        const i = await op.call<Invitation>('DELETE', `${org(opts.org)}/invitations/${encodeURIComponent(invitationId)}`);
        say(opts, `revoked the invitation of ${i.email} (${i.role}, ${i.id}) to ${opts.org}`, {
          id: i.id,
          email: i.email,
          role: i.role,
          orgId: opts.org,
          revoked: true,
        });
      });
    });
}
