import { Option, type Command } from 'commander';
import { withOperator } from '../operator.js';
import { printTable } from '../table.js';
import { JSON_HELP, say } from '../output.js';

/**
 * `climate-pulse scim`: an organization's SCIM tokens and how its users find their team (issue
 * 56), the operator API's other face (src/admin/routes/scim.ts), as `keys` is for API keys.
 */
const org = (id: string) => `/admin/v1/organizations/${encodeURIComponent(id)}`;

interface Created {
  id: string;
  token: string;
  prefix: string;
  name: string | null;
  createdAt: string;
}
interface Listing {
  id: string;
  prefix: string;
  name: string | null;
  createdAt: string;
  createdBy: string | null;
  expiresAt: string | null;
  revokedAt: string | null;
  state: string;
}

export function registerScim(program: Command) {
  const scim = program.command('scim').description("SCIM provisioning: an organization's tokens for its identity provider, and how teams are found");

  scim
    .command('create')
    .description('create a SCIM token for an organization; its secret is printed once')
    .requiredOption('--org <id>', 'organization id')
    .option('--name <name>', 'a label for the token (the identity provider it is for)')
    .option('--json', JSON_HELP)
    .action(async (opts: { org: string; name?: string; json?: boolean }) => {
      await withOperator(async (op) => {
        const t = await op.call<Created>('POST', `${org(opts.org)}/scim-tokens`, { name: opts.name ?? null });
        say(opts, t.token, { id: t.id, prefix: t.prefix, token: t.token, orgId: opts.org });
        console.error(`created SCIM token ${t.prefix}… (${t.id}) for ${opts.org}. It is shown only now: give it to the identity provider (docs/scim.md).`);
      });
    });

  scim
    .command('list')
    .description("list an organization's SCIM tokens (never their secrets)")
    .requiredOption('--org <id>', 'organization id')
    .option('--json', 'print JSON instead of a table')
    .action(async (opts: { org: string; json?: boolean }) => {
      await withOperator(async (op) => {
        const { items } = await op.call<{ items: Listing[] }>('GET', `${org(opts.org)}/scim-tokens`);
        if (opts.json) {
          console.log(JSON.stringify(items, null, 2));
          return;
        }
        printTable([
          ['ID', 'PREFIX', 'NAME', 'CREATED', 'BY', 'STATE', 'STOPS'],
          ...items.map((t) => [t.id, t.prefix, t.name ?? '-', t.createdAt, t.createdBy ?? '-', t.state, t.revokedAt ?? t.expiresAt ?? '-']),
        ]);
      });
    });

  scim
    .command('roll')
    .description('replace a SCIM token: a new one is printed once, the old one stops at the chosen time')
    .requiredOption('--org <id>', 'organization id')
    .argument('<token>', 'the token id (stk_…) or its display prefix')
    .addOption(new Option('--old-expires <when>', 'when the old token stops working').choices(['now', '1h', '24h', '7d']).default('24h'))
    .option('--json', JSON_HELP)
    .action(async (idOrPrefix: string, opts: { org: string; oldExpires: string; json?: boolean }) => {
      await withOperator(async (op) => {
        const t = await op.call<Created & { oldTokenId: string; oldExpiresAt: string }>(
          'POST',
          `${org(opts.org)}/scim-tokens/${encodeURIComponent(idOrPrefix)}/roll`,
          { expiresIn: opts.oldExpires },
        );
        say(opts, t.token, { id: t.id, prefix: t.prefix, token: t.token, oldTokenId: t.oldTokenId, oldExpiresAt: t.oldExpiresAt, orgId: opts.org });
        console.error(`rolled: new SCIM token ${t.prefix}… (${t.id}); ${t.oldTokenId} stops at ${t.oldExpiresAt}. The new one is shown only now.`);
      });
    });

  scim
    .command('revoke')
    .description('revoke a SCIM token; /scim/v2 refuses it within 5 seconds')
    .requiredOption('--org <id>', 'organization id')
    .argument('<token>', 'the token id (stk_…) or its display prefix')
    .option('--json', JSON_HELP)
    .action(async (idOrPrefix: string, opts: { org: string; json?: boolean }) => {
      await withOperator(async (op) => {
        const t = await op.call<Listing>('DELETE', `${org(opts.org)}/scim-tokens/${encodeURIComponent(idOrPrefix)}`);
        say(opts, `revoked ${t.prefix} (${t.id}) of ${opts.org}`, { id: t.id, prefix: t.prefix, orgId: opts.org, revokedAt: t.revokedAt });
      });
    });

  scim
    .command('teams')
    .description("show, or set, how SCIM users find their team: by their Groups, or by the enterprise extension's department")
    .requiredOption('--org <id>', 'organization id')
    .addOption(new Option('--from <source>', 'set it').choices(['groups', 'department']))
    .option('--json', JSON_HELP)
    .action(async (opts: { org: string; from?: string; json?: boolean }) => {
      await withOperator(async (op) => {
        const s = opts.from
          ? await op.call<{ teamFrom: string }>('PUT', `${org(opts.org)}/scim-settings`, { teamFrom: opts.from })
          : await op.call<{ teamFrom: string }>('GET', `${org(opts.org)}/scim-settings`);
        say(opts, `teams of ${opts.org} come from SCIM's ${s.teamFrom === 'groups' ? 'Groups' : 'department'}`, { orgId: opts.org, teamFrom: s.teamFrom });
      });
    });
}
