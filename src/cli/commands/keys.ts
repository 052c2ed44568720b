import type { Command } from 'commander';
import { listApiKeys, revokeApiKeysByPrefix } from '../../db/repositories/api-keys.js';
import { getOrg } from '../../db/repositories/orgs.js';
import { createApiKey } from '../../domain/keys.js';
import { withDatabase } from '../db.js';
import { CliError } from '../errors.js';

export function registerKeys(program: Command) {
  const keys = program.command('keys').description('create, list and revoke API keys');

  keys
    .command('create')
    .description('create an API key for an organization; its secret is printed once')
    .requiredOption('--org <id>', 'organization id')
    .option('--name <name>', 'a label for the key')
    .action(async (opts: { org: string; name?: string }) => {
      await withDatabase(async (db) => {
        if (!(await getOrg(db, opts.org))) throw new CliError(`no organization ${JSON.stringify(opts.org)} (or it is deleted)`);
        const key = await createApiKey(db, opts.org, { name: opts.name ?? null });
        console.log(key.secret);
        console.error(`created key ${key.prefix}… for ${opts.org}. It is shown only now: store it safely. Revoke with: climate-pulse keys revoke ${key.prefix}`);
      });
    });

  keys
    .command('list')
    .description("list an organization's keys (never their secrets)")
    .requiredOption('--org <id>', 'organization id')
    .option('--json', 'print JSON instead of a table')
    .action(async (opts: { org: string; json?: boolean }) => {
      await withDatabase(async (db) => {
        if (!(await getOrg(db, opts.org))) throw new CliError(`no organization ${JSON.stringify(opts.org)} (or it is deleted)`);
        const rows = (await listApiKeys(db, opts.org)).map((k) => ({
          prefix: k.prefix,
          name: k.name,
          createdAt: k.createdAt,
          lastUsedAt: k.lastUsedAt,
          revoked: k.revokedAt !== null,
        }));
        if (opts.json) {
          console.log(JSON.stringify(rows, null, 2));
          return;
        }
        const table = [['PREFIX', 'NAME', 'CREATED', 'LAST USED', 'REVOKED'], ...rows.map((r) => [r.prefix, r.name ?? '-', r.createdAt, r.lastUsedAt ?? 'never', r.revoked ? 'yes' : 'no'])];
        const widths = table[0].map((_, i) => Math.max(...table.map((row) => row[i].length)));
        for (const row of table) console.log(row.map((c, i) => c.padEnd(widths[i])).join('  ').trimEnd());
      });
    });

  keys
    .command('revoke')
    .description('revoke the key(s) with this display prefix; running servers refuse them within 5 seconds')
    .argument('<prefix>', 'the display prefix shown by `keys list`')
    .action(async (prefix: string) => {
      await withDatabase(async (db) => {
        const revoked = await revokeApiKeysByPrefix(db, prefix);
        if (revoked.length === 0) throw new CliError(`no key with prefix ${JSON.stringify(prefix)}`);
        for (const k of revoked) console.log(`revoked ${prefix} (${k.id}) of ${k.orgId}`);
      });
    });
}
