import type { Command } from 'commander';
import type { AdminOrg as OrgRecord, OrgList } from '../../contract/schemas/admin-orgs.js';
import { withOperator } from '../operator.js';
import { printTable } from '../table.js';
import { CliError } from '../errors.js';
import { JSON_HELP, say } from '../output.js';

const path = (id: string) => `/admin/v1/organizations/${encodeURIComponent(id)}`;

function count(text: string, option: string): number {
  if (!/^\d{1,10}$/.test(text) || Number(text) > 2_147_483_647) throw new CliError(`${option} must be a whole number from 0 to 2147483647`);
  return Number(text);
}

/** One organization in a sentence. */
const described = (o: OrgRecord) =>
  `${o.id} (${o.name}): plan ${o.plan}, ${o.memberCount} ${o.memberCount === 1 ? 'member' : 'members'}, created ${o.createdAt}${o.deletedAt ? `, deleted ${o.deletedAt}` : ''}`;

/** `orgs create|show|update|delete`: the operator API's organizations; a sentence, or the organization as JSON with --json. */
export function registerOrgs(program: Command) {
  const orgs = program.command('orgs').description('create, show, change and delete organizations');

  orgs
    .command('create')
    .description('create an organization')
    .requiredOption('--name <name>', 'display name')
    .requiredOption('--plan <plan>', 'plan name (free, business, enterprise, or one set with `plans set`)')
    .option('--id <id>', 'organization id (default: org_ + 16 random characters)')
    .option('--members <n>', 'member count', '0')
    .option('--json', JSON_HELP)
    .action(async (opts: { name: string; plan: string; id?: string; members: string; json?: boolean }) => {
      const body = { ...(opts.id ? { id: opts.id } : {}), name: opts.name, plan: opts.plan, memberCount: count(opts.members, '--members') };
      await withOperator(async (op) => {
        const o = await op.call<OrgRecord>('POST', '/admin/v1/organizations', body);
        say(opts, `created ${described(o)}`, o);
      });
    });

  orgs
    .command('list')
    .description('list every organization, newest first (deleted ones marked)')
    .option('--json', JSON_HELP)
    .action(async (opts: { json?: boolean }) => {
      await withOperator(async (op) => {
        const all: OrgList['items'] = [];
        for (let cursor: string | null = null, first = true; first || cursor; first = false) {
          const page: OrgList = await op.call<OrgList>('GET', `/admin/v1/organizations?limit=100${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
          all.push(...page.items);
          cursor = page.nextCursor;
        }
        if (opts.json) return void console.log(JSON.stringify(all, null, 2));
        const rows = [['ID', 'NAME', 'PLAN', 'CREATED', 'DELETED'], ...all.map((o) => [o.id, o.name, o.plan, o.createdAt, o.deletedAt ?? '-'])];
        printTable(rows);
      });
    });

  orgs
    .command('show')
    .description('show an organization (deleted ones too)')
    .requiredOption('--org <id>', 'organization id')
    .option('--json', JSON_HELP)
    .action(async (opts: { org: string; json?: boolean }) => {
      await withOperator(async (op) => {
        const o = await op.call<OrgRecord>('GET', path(opts.org));
        say(opts, described(o), o);
      });
    });

  orgs
    .command('update')
    .description("change an organization's name, plan or member count; running servers apply it within 5 seconds")
    .requiredOption('--org <id>', 'organization id')
    .option('--name <name>', 'new display name')
    .option('--plan <plan>', 'new plan')
    .option('--members <n>', 'new member count')
    .option('--json', JSON_HELP)
    .action(async (opts: { org: string; name?: string; plan?: string; members?: string; json?: boolean }) => {
      const body = {
        ...(opts.name !== undefined ? { name: opts.name } : {}),
        ...(opts.plan !== undefined ? { plan: opts.plan } : {}),
        ...(opts.members !== undefined ? { memberCount: count(opts.members, '--members') } : {}),
      };
      if (Object.keys(body).length === 0) throw new CliError('give at least one of --name, --plan, --members');
      await withOperator(async (op) => {
        const o = await op.call<OrgRecord>('PATCH', path(opts.org), body);
        say(opts, `updated ${described(o)}`, o);
      });
    });

  orgs
    .command('delete')
    .description('delete an organization: its keys get 404 org_not_found within 5 seconds; --erase also removes every row of it')
    .requiredOption('--org <id>', 'organization id')
    .option('--erase', 'remove every row of the organization, in one transaction (cannot be undone)')
    .option('--json', JSON_HELP)
    .action(async (opts: { org: string; erase?: boolean; json?: boolean }) => {
      await withOperator(async (op) => {
        const r = await op.call<{ organization: OrgRecord; erased: boolean }>('DELETE', `${path(opts.org)}${opts.erase ? '?erase=true' : ''}`);
        say(opts, `deleted ${r.organization.id}${r.erased ? ', and erased every row of it' : ': its keys get 404 org_not_found within 5 seconds'}`, r);
      });
    });
}
