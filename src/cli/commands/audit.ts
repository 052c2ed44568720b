import { Option, type Command } from 'commander';
import type { AuditEvent, AuditEventList } from '../../contract/schemas/admin-audit.js';
import { withOperator } from '../operator.js';
import { CliError } from '../errors.js';

/** The operator API's page size at most; a larger --limit follows the cursor. */
const PAGE = 100;

/** Text that came from users (a key's name, a member's email) printed without its control characters. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what this escapes
const printable = (s: string) => s.replace(/[\u0000-\u001f\u007f-\u009f]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);

/** One line: time, actor, action, target, address, details (JSON). */
export function auditLine(e: AuditEvent): string {
  const actor = e.actor.kind === 'operator' ? 'operator' : `${e.actor.kind}:${e.actor.label}`;
  const target = e.target.id === null ? e.target.kind : `${e.target.kind}:${e.target.id}`;
  return printable([e.createdAt, actor, e.action, target, e.address ?? '-', JSON.stringify(e.details)].join('  '));
}

/** `audit --org ID`: the organization's audit log, newest first, one line per event. */
export function registerAudit(program: Command) {
  program
    .command('audit')
    .description("print an organization's audit log, newest first, one line per event: time, actor, action, target, address, details")
    .requiredOption('--org <id>', 'organization id (deleted organizations keep their log)')
    .option('--limit <n>', 'at most this many events, newest first', '50')
    .addOption(new Option('--actor <kind>', 'only changes by this kind of actor').choices(['member', 'operator', 'key']))
    .option('--action <action>', 'only events of this action (key.created, organization.updated, ...)')
    .option('--json', 'print one JSON object per line instead')
    .action(async (opts: { org: string; limit: string; actor?: string; action?: string; json?: boolean }) => {
      if (!/^\d{1,7}$/.test(opts.limit) || Number(opts.limit) < 1) throw new CliError('--limit must be a whole number, at least 1');
      let left = Number(opts.limit);
      await withOperator(async (op) => {
        let cursor: string | null = null;
        do {
          const query = new URLSearchParams({ limit: String(Math.min(left, PAGE)) });
          if (cursor) query.set('cursor', cursor);
          if (opts.actor) query.set('actorKind', opts.actor);
          if (opts.action) query.set('action', opts.action);
          const page: AuditEventList = await op.call<AuditEventList>('GET', `/admin/v1/organizations/${encodeURIComponent(opts.org)}/audit-events?${query}`);
          for (const e of page.items) console.log(opts.json ? JSON.stringify(e) : auditLine(e));
          left -= page.items.length;
          cursor = page.nextCursor;
        } while (cursor && left > 0);
      });
    });
}
