import { readFile } from 'node:fs/promises';
import { Option, type Command } from 'commander';
import type { SsoDomain, SsoSettings } from '../../contract/schemas/admin-sso.js';
import { withOperator } from '../operator.js';
import { JSON_HELP, say } from '../output.js';
import { printTable } from '../table.js';
import { CliError } from '../errors.js';

const sso = (id: string) => `/admin/v1/organizations/${encodeURIComponent(id)}/sso`;

/** A group mapping as typed: 'group=role' or 'group=manager:team_a,team_b'. */
function groupRole(text: string, list: Array<{ group: string; role: string; teams: string[] }> = []) {
  const eq = text.lastIndexOf('=');
  if (eq < 1) throw new CliError(`--group ${JSON.stringify(text)}: the form is group=role, or group=manager:team_a,team_b`);
  const [role, teams] = text.slice(eq + 1).split(':');
  list.push({
    group: text.slice(0, eq).trim(),
    role: role.trim(),
    teams: teams
      ? teams
          .split(',')
          .map((t) => t.trim())
          .filter(Boolean)
      : [],
  });
  return list;
}

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of process.stdin) chunks.push(c as Buffer);
  return Buffer.concat(chunks).toString('utf8').trim();
}

/** Our SAML service provider's metadata URL (the entity id), from the OIDC redirect URI the API answers (same base, same organization). */
const samlMetadataUrl = (s: SsoSettings) => s.redirectUri.replace(/\/console\/sso\/([^/]+)\/oidc\/callback$/, '/console/sso/saml/$1/metadata');

const summary = (s: SsoSettings) =>
  [
    `kind: ${s.kind}`,
    ...(s.kind === 'saml'
      ? [`SP metadata URL (entity id): ${samlMetadataUrl(s)}`, `groups attribute: ${s.groupsClaim}`]
      : [`issuer: ${s.issuer ?? '-'}`, `client id: ${s.clientId ?? '-'} (secret ${s.clientSecretSet ? 'set' : 'missing'})`, `groups claim: ${s.groupsClaim}`]),
    ...s.groupRoles.map((g) => `  ${g.group} = ${g.role}${g.teams.length ? `: ${g.teams.join(', ')}` : ''}`),
    `people in no group: ${s.defaultRole ?? 'refused'}`,
    `required: ${s.required ? `yes (break-glass owner: ${s.breakGlassMemberId ?? 'none'})` : 'no'}`,
    `longest session: ${s.sessionMaxHours} h`,
    ...(s.kind === 'saml' ? [] : [`redirect URI: ${s.redirectUri}`, `back-channel logout URI: ${s.backchannelLogoutUri}`]),
  ].join('\n');

/** `climate-pulse sso show|oidc|require|remove|domains ...`: an organization's single sign-on, through the operator API. */
export function registerSso(program: Command) {
  const cmd = program.command('sso').description("an organization's single sign-on: its OpenID Connect or SAML IdP, groups mapping, enforcement and domains");

  cmd
    .command('show')
    .description('print the settings and the URIs to register at the IdP (never the client secret)')
    .requiredOption('--org <id>', 'organization id')
    .option('--json', JSON_HELP)
    .action(async (opts: { org: string; json?: boolean }) => {
      await withOperator(async (op) => {
        const s = await op.call<SsoSettings>('GET', sso(opts.org));
        say(opts, summary(s), s);
      });
    });

  cmd
    .command('oidc')
    .description('connect (or change) the OpenID Connect IdP; the issuer is checked by discovery first')
    .requiredOption('--org <id>', 'organization id')
    .requiredOption('--issuer <url>', 'the issuer URL')
    .requiredOption('--client-id <id>', 'the client id registered at the IdP')
    .option('--client-secret-stdin', 'read the client secret from standard input (required the first time; never as an argument)')
    .option('--groups-claim <name>', "the ID token claim that lists the person's groups (default 'groups')")
    .option('--group <group=role>', "map a group to a role (repeat it): 'group=admin', or 'group=manager:team_a,team_b'", groupRole)
    .addOption(
      new Option('--default-role <role>', 'the role of people in none of the groups (default: refused)').choices(['admin', 'manager', 'viewer', 'none']),
    )
    .option('--session-max-hours <n>', 'the longest a session through the IdP lasts (1 to 168)', (v) => Number(v))
    .option('--json', JSON_HELP)
    .action(
      async (opts: {
        org: string;
        issuer: string;
        clientId: string;
        clientSecretStdin?: boolean;
        groupsClaim?: string;
        group?: Array<{ group: string; role: string; teams: string[] }>;
        defaultRole?: string;
        sessionMaxHours?: number;
        json?: boolean;
      }) => {
        const clientSecret = opts.clientSecretStdin ? await readStdin() : undefined;
        await withOperator(async (op) => {
          const s = await op.call<SsoSettings>('PUT', `${sso(opts.org)}/oidc`, {
            issuer: opts.issuer,
            clientId: opts.clientId,
            ...(clientSecret ? { clientSecret } : {}),
            ...(opts.groupsClaim ? { groupsClaim: opts.groupsClaim } : {}),
            ...(opts.group ? { groupRoles: opts.group } : {}),
            ...(opts.defaultRole ? { defaultRole: opts.defaultRole === 'none' ? null : opts.defaultRole } : {}),
            ...(opts.sessionMaxHours !== undefined ? { sessionMaxHours: opts.sessionMaxHours } : {}),
          });
          say(opts, summary(s), s);
        });
      },
    );

  cmd
    .command('saml')
    .description('connect (or change) a SAML 2.0 IdP from its metadata, by URL (fetched now, public https only) or from a file; replaces an OpenID Connect IdP')
    .requiredOption('--org <id>', 'organization id')
    .option('--metadata-url <url>', 'where the IdP publishes its metadata')
    .option('--metadata-file <path>', "the IdP's metadata XML, from a file ('-': standard input)")
    .option('--email-attribute <name>', 'the attribute holding the email (default: email, mail, ..., then the NameID)')
    .option('--groups-attribute <name>', 'the attribute holding the groups (default: groups, memberOf, ...)')
    .option('--group <group=role>', "map a group to a role (repeat it): 'group=admin', or 'group=manager:team_a,team_b'", groupRole)
    .addOption(
      new Option('--default-role <role>', 'the role of people in none of the groups (default: refused)').choices(['admin', 'manager', 'viewer', 'none']),
    )
    .option('--session-max-hours <n>', 'the longest a session through the IdP lasts (1 to 168)', (v) => Number(v))
    .option('--json', JSON_HELP)
    .action(
      async (opts: {
        org: string;
        metadataUrl?: string;
        metadataFile?: string;
        emailAttribute?: string;
        groupsAttribute?: string;
        group?: Array<{ group: string; role: string; teams: string[] }>;
        defaultRole?: string;
        sessionMaxHours?: number;
        json?: boolean;
      }) => {
        if (Boolean(opts.metadataUrl) === Boolean(opts.metadataFile))
          throw new CliError('give the IdP metadata by --metadata-url or --metadata-file, one of the two');
        let metadataXml: string | undefined;
        if (opts.metadataFile) {
          try {
            metadataXml = opts.metadataFile === '-' ? await readStdin() : await readFile(opts.metadataFile, 'utf8');
          } catch (err) {
            throw new CliError(`cannot read ${opts.metadataFile}: ${(err as Error).message}`);
          }
        }
        await withOperator(async (op) => {
          const s = await op.call<SsoSettings>('PUT', `${sso(opts.org)}/saml`, {
            ...(metadataXml !== undefined ? { metadataXml } : { metadataUrl: opts.metadataUrl }),
            ...(opts.emailAttribute ? { emailAttribute: opts.emailAttribute } : {}),
            ...(opts.groupsAttribute ? { groupsAttribute: opts.groupsAttribute } : {}),
            ...(opts.group ? { groupRoles: opts.group } : {}),
            ...(opts.defaultRole ? { defaultRole: opts.defaultRole === 'none' ? null : opts.defaultRole } : {}),
            ...(opts.sessionMaxHours !== undefined ? { sessionMaxHours: opts.sessionMaxHours } : {}),
          });
          say(opts, summary(s), s);
        });
      },
    );

  cmd
    .command('require')
    .description('require single sign-on (password and two-factor sign-in stop for every member but the break-glass owner), or stop requiring it')
    .requiredOption('--org <id>', 'organization id')
    .addOption(new Option('--state <on|off>', 'on: required; off: not required').choices(['on', 'off']).makeOptionMandatory())
    .option('--break-glass <member>', 'the owner (mem_…) who keeps a passkey sign-in')
    .option('--json', JSON_HELP)
    .action(async (opts: { org: string; state: 'on' | 'off'; breakGlass?: string; json?: boolean }) => {
      await withOperator(async (op) => {
        const s = await op.call<SsoSettings>('PUT', `${sso(opts.org)}/requirement`, {
          required: opts.state === 'on',
          breakGlassMemberId: opts.breakGlass ?? null,
        });
        say(
          opts,
          s.required
            ? `single sign-on is required for ${opts.org} (break-glass owner: ${s.breakGlassMemberId ?? 'none'})`
            : `single sign-on is not required for ${opts.org}`,
          s,
        );
      });
    });

  cmd
    .command('remove')
    .description('turn single sign-on off (open sessions run to their end; the domains stay)')
    .requiredOption('--org <id>', 'organization id')
    .option('--json', JSON_HELP)
    .action(async (opts: { org: string; json?: boolean }) => {
      await withOperator(async (op) => {
        await op.call('DELETE', sso(opts.org));
        say(opts, `single sign-on of ${opts.org} is off`, { orgId: opts.org, removed: true });
      });
    });

  const domains = cmd.command('domains').description('the sign-in domains: list, add, verify (DNS TXT or on your word), remove');

  domains
    .command('list')
    .requiredOption('--org <id>', 'organization id')
    .option('--json', 'print JSON instead of a table')
    .action(async (opts: { org: string; json?: boolean }) => {
      await withOperator(async (op) => {
        const { items } = await op.call<{ items: SsoDomain[] }>('GET', `${sso(opts.org)}/domains`);
        if (opts.json) return void console.log(JSON.stringify(items, null, 2));
        printTable([
          ['DOMAIN', 'TXT NAME', 'TXT VALUE', 'VERIFIED'],
          ...items.map((d) => [d.domain, d.txtRecordName, d.txtRecordValue, d.verifiedAt ? `${d.verifiedAt} (${d.verifiedBy})` : 'no']),
        ]);
      });
    });

  domains
    .command('add')
    .requiredOption('--org <id>', 'organization id')
    .argument('<domain>', "a domain like 'example.com'")
    .option('--json', JSON_HELP)
    .action(async (domain: string, opts: { org: string; json?: boolean }) => {
      await withOperator(async (op) => {
        const d = await op.call<SsoDomain>('POST', `${sso(opts.org)}/domains`, { domain });
        say(opts, `added ${d.domain}: publish the TXT record ${d.txtRecordName} = ${d.txtRecordValue}, then run \`sso domains verify\``, d);
      });
    });

  domains
    .command('verify')
    .requiredOption('--org <id>', 'organization id')
    .argument('<domain>', 'the domain')
    .addOption(new Option('--by <method>', 'dns: look its TXT record up now; operator: on your word').choices(['dns', 'operator']).default('dns'))
    .option('--json', JSON_HELP)
    .action(async (domain: string, opts: { org: string; by: 'dns' | 'operator'; json?: boolean }) => {
      await withOperator(async (op) => {
        const d = await op.call<SsoDomain>('POST', `${sso(opts.org)}/domains/${encodeURIComponent(domain)}/verify`, { method: opts.by });
        say(opts, `${d.domain} is verified (${d.verifiedBy})`, d);
      });
    });

  domains
    .command('remove')
    .requiredOption('--org <id>', 'organization id')
    .argument('<domain>', 'the domain')
    .option('--json', JSON_HELP)
    .action(async (domain: string, opts: { org: string; json?: boolean }) => {
      await withOperator(async (op) => {
        await op.call('DELETE', `${sso(opts.org)}/domains/${encodeURIComponent(domain)}`);
        say(opts, `removed ${domain} from ${opts.org}`, { orgId: opts.org, domain, removed: true });
      });
    });
}
