import { Argument, type Command } from 'commander';
import type { MemberList } from '../../contract/schemas/admin-members.js';
import type { OperatorPasskey, OperatorPasskeyList, PasskeySettings } from '../../contract/schemas/admin-passkeys.js';
import { CliError } from '../errors.js';
import { withOperator, type Operator } from '../operator.js';
import { JSON_HELP, say } from '../output.js';
import { printTable } from '../table.js';

const org = (id: string) => `/admin/v1/organizations/${encodeURIComponent(id)}`;
const MEMBER_HELP = 'the member: their id (mem_…) or email address, as `members list` shows them';

/** The member `--member` names (an id, or an address of the organization's members): its id and address. */
async function memberNamed(op: Operator, orgId: string, named: string): Promise<{ id: string; email: string }> {
  const { items } = await op.call<MemberList>('GET', `${org(orgId)}/members`);
  const m = named.includes('@') ? items.find((x) => x.email.toLowerCase() === named.toLowerCase()) : items.find((x) => x.id === named);
  if (!m) throw new CliError(`no member ${JSON.stringify(named)} in ${orgId} (see: members list --org ${orgId})`);
  return { id: m.id, email: m.email };
}

const passkeysOf = (orgId: string, memberId: string) => `${org(orgId)}/members/${encodeURIComponent(memberId)}/passkeys`;

/**
 * `climate-pulse passkeys list|remove|require` (issue 55, item 6): a member's passkeys and the
 * organization's "passkeys required for owners and admins", through the operator API: the way
 * back in for a member, or a sole owner, who lost every passkey (docs/console.md, "Passkeys").
 */
export function registerPasskeys(program: Command) {
  const passkeys = program.command('passkeys').description("list and remove a console member's passkeys; require passkeys for owners and admins, or stop");

  passkeys
    .command('list')
    .description("list a member's passkeys, oldest first (never a public key or the whole credential id)")
    .requiredOption('--org <id>', 'organization id')
    .requiredOption('--member <member>', MEMBER_HELP)
    .option('--json', JSON_HELP)
    .action(async (opts: { org: string; member: string; json?: boolean }) => {
      await withOperator(async (op) => {
        const m = await memberNamed(op, opts.org, opts.member);
        const { items } = await op.call<OperatorPasskeyList>('GET', passkeysOf(opts.org, m.id));
        if (opts.json) return void console.log(JSON.stringify({ orgId: opts.org, memberId: m.id, email: m.email, items }));
        if (items.length === 0) return void console.log(`${m.email} (${m.id}) has no passkey in ${opts.org}`);
        console.log(`${m.email} (${m.id}) has ${items.length === 1 ? '1 passkey' : `${items.length} passkeys`} in ${opts.org}:`);
        printTable([
          ['ID', 'NAME', 'CREATED', 'LAST USED', 'SYNCED', 'CREDENTIAL'],
          ...items.map((p) => [p.id, p.name, p.createdAt, p.lastUsedAt ?? 'never', p.backedUp ? 'yes' : 'no', `${p.credentialStart}…`]),
        ]);
      });
    });

  passkeys
    .command('remove')
    .description(
      'remove a passkey (a lost or stolen device): it signs in nowhere from then on; even the last one of an owner or admin while passkeys are required',
    )
    .requiredOption('--org <id>', 'organization id')
    .requiredOption('--member <member>', MEMBER_HELP)
    .argument('<passkey>', 'the passkey id (pk_…), as `passkeys list` shows it')
    .option('--json', JSON_HELP)
    .action(async (passkeyId: string, opts: { org: string; member: string; json?: boolean }) => {
      await withOperator(async (op) => {
        const m = await memberNamed(op, opts.org, opts.member);
        const p = await op.call<OperatorPasskey>('DELETE', `${passkeysOf(opts.org, m.id)}/${encodeURIComponent(passkeyId)}`);
        say(opts, `removed the passkey "${p.name}" (${p.id}) of ${m.email} (${m.id}) in ${opts.org}`, {
          id: p.id,
          name: p.name,
          orgId: opts.org,
          memberId: m.id,
          removed: true,
        });
      });
    });

  passkeys
    .command('require')
    .description('require passkeys for owners and admins (on), stop requiring them (off), or, with neither, print whether they are required')
    .requiredOption('--org <id>', 'organization id')
    .addArgument(new Argument('[state]', 'on or off').choices(['on', 'off']))
    .option('--json', JSON_HELP)
    .action(async (state: 'on' | 'off' | undefined, opts: { org: string; json?: boolean }) => {
      await withOperator(async (op) => {
        const url = `${org(opts.org)}/passkey-settings`;
        const s = state === undefined ? await op.call<PasskeySettings>('GET', url) : await op.call<PasskeySettings>('PATCH', url, { required: state === 'on' });
        const now = s.required ? 'are required for owners and admins' : 'are not required';
        const sentence = state === undefined ? `passkeys ${now} in ${opts.org}` : `passkeys ${now} in ${opts.org} from now on`;
        say(opts, sentence, { orgId: opts.org, required: s.required });
      });
    });
}
