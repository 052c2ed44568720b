import { Option, type Command } from 'commander';
import type { CreatedKey, KeyListing } from '../../contract/schemas/admin-keys.js';
import { withOperator } from '../operator.js';
import { printTable } from '../table.js';
import { CliError } from '../errors.js';
import { loadConfig } from '../../config.js';
import { cliCommand } from '../hints.js';
import { JSON_HELP, say } from '../output.js';

const org = (id: string) => `/admin/v1/organizations/${encodeURIComponent(id)}`;

/** `--expires 2027-01-01` (midnight UTC) or a full RFC 3339 date-time. */
export function parseExpiry(text: string): string {
  const t = /^\d{4}-\d\d-\d\d$/.test(text) ? `${text}T00:00:00Z` : text;
  if (!/^\d{4}-\d\d-\d\dT\d\d:\d\d(:\d\d(\.\d+)?)?(Z|[+-]\d\d:\d\d)$/i.test(t) || Number.isNaN(Date.parse(t))) {
    throw new CliError(`--expires ${JSON.stringify(text)} is not a date (2027-01-31) or a date-time with an offset (2027-01-31T12:00:00Z)`);
  }
  return new Date(t).toISOString();
}

export function registerKeys(program: Command) {
  const keys = program.command('keys').description('create, list and revoke API keys');

  keys
    .command('create')
    .description('create an API key for an organization; its secret is printed once')
    .requiredOption('--org <id>', 'organization id')
    .option('--name <name>', 'a label for the key')
    .addOption(new Option('--scope <scope>', 'read: GET only (POST and PATCH are refused with 403)').choices(['read_write', 'read']).default('read_write'))
    .option('--expires <date>', 'refuse the key after this date (YYYY-MM-DD, midnight UTC) or date-time')
    .option('--json', JSON_HELP)
    .action(async (opts: { org: string; name?: string; scope: 'read_write' | 'read'; expires?: string; json?: boolean }) => {
      const expiresAt = opts.expires === undefined ? null : parseExpiry(opts.expires);
      await withOperator(async (op) => {
        const key = await op.call<CreatedKey>('POST', `${org(opts.org)}/keys`, { name: opts.name ?? null, scope: opts.scope, expiresAt });
        say(opts, key.key, { id: key.id, prefix: key.prefix, key: key.key, scope: key.scope, expiresAt: key.expiresAt, orgId: opts.org });
        const what = [key.scope === 'read' ? 'read-only ' : '', 'key ', key.prefix, '…'].join('');
        const until = key.expiresAt ? `, expiring ${key.expiresAt}` : '';
        console.error(
          `created ${what} (${key.id}) for ${opts.org}${until}. It is shown only now: store it safely. Revoke with: ${cliCommand(loadConfig())} keys revoke --org ${opts.org} ${key.id}`,
        );
      });
    });

  keys
    .command('list')
    .description("list an organization's keys (never their secrets)")
    .requiredOption('--org <id>', 'organization id')
    .option('--json', 'print JSON instead of a table')
    .action(async (opts: { org: string; json?: boolean }) => {
      await withOperator(async (op) => {
        const { items } = await op.call<{ items: KeyListing[] }>('GET', `${org(opts.org)}/keys`);
        const rows = items.map((k) => ({
          id: k.id,
          prefix: k.prefix,
          name: k.name,
          scope: k.scope,
          createdAt: k.createdAt,
          expiresAt: k.expiresAt,
          lastUsedAt: k.lastUsedAt,
          revoked: k.revokedAt !== null,
        }));
        if (opts.json) {
          console.log(JSON.stringify(rows, null, 2));
          return;
        }
        const table = [
          ['ID', 'PREFIX', 'NAME', 'SCOPE', 'CREATED', 'EXPIRES', 'LAST USED', 'REVOKED'],
          ...rows.map((r) => [r.id, r.prefix, r.name ?? '-', r.scope, r.createdAt, r.expiresAt ?? 'never', r.lastUsedAt ?? 'never', r.revoked ? 'yes' : 'no']),
        ];
        printTable(table);
      });
    });

  keys
    .command('revoke')
    .description('revoke one key of an organization, by its id or an unambiguous start of its prefix; servers refuse it within 5 seconds')
    .requiredOption('--org <id>', "organization id (another organization's keys are never touched)")
    .argument('<key>', 'the key id (key_…) or its display prefix, as `keys list` shows them')
    .option('--json', JSON_HELP)
    .action(async (idOrPrefix: string, opts: { org: string; json?: boolean }) => {
      await withOperator(async (op) => {
        const k = await op.call<KeyListing>('DELETE', `${org(opts.org)}/keys/${encodeURIComponent(idOrPrefix)}`);
        say(opts, `revoked ${k.prefix} (${k.id}) of ${opts.org}`, { id: k.id, prefix: k.prefix, orgId: opts.org, revokedAt: k.revokedAt });
      });
    });
}
