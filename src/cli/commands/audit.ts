import { createWriteStream, type WriteStream } from 'node:fs';
import { once } from 'node:events';
import { Option, type Command } from 'commander';
import type { AuditEvent, AuditEventList, Retention } from '../../contract/schemas/admin-audit.js';
import { loadConfig } from '../../config.js';
import { checkExportFormat, checkExportRange, exportAuditLog, operatorActor } from '../../domain/audit.js';
import { downloadThroughSocket, IN_PROCESS_ADDRESS, runningServerSocket, withOperator } from '../operator.js';
import { withDatabase } from '../db.js';
import { CliError } from '../errors.js';
import { JSON_HELP, say } from '../output.js';

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

/**
 * Where an export goes: a new file (never over an existing one), or standard output. The file is
 * made at the first chunk, so an export refused before its first line (an unknown organization, a
 * bad range) leaves none.
 */
function exportSink(file: string | undefined): { write(chunk: string | Buffer): Promise<void>; end(): Promise<void> } {
  if (file === undefined) {
    return {
      write: (chunk) => new Promise<void>((resolve, reject) => void process.stdout.write(chunk, (err) => (err ? reject(err) : resolve()))),
      end: async () => undefined,
    };
  }
  let out: WriteStream | undefined;
  const open = async (): Promise<WriteStream> => {
    if (out) return out;
    const s = createWriteStream(file, { flags: 'wx', mode: 0o600 });
    const [err] = await Promise.race([once(s, 'open').then(() => [null]), once(s, 'error')]);
    if (err) throw new CliError(`cannot write ${file}: ${(err as Error).message}`);
    out = s;
    return s;
  };
  return {
    async write(chunk) {
      const s = await open();
      if (!s.write(chunk)) await once(s, 'drain');
    },
    async end() {
      const s = await open();
      s.end();
      await once(s, 'finish');
    },
  };
}

const orgOf = (opts: { org?: string }): string => {
  if (!opts.org) throw new CliError("required option '--org <id>' not specified");
  return opts.org;
};

/** `audit --org ID`: the organization's audit log, newest first, one line per event; `audit export`, `audit retention`. */
export function registerAudit(program: Command) {
  const audit = program
    .command('audit')
    .description("print an organization's audit log, newest first, one line per event: time, actor, action, target, address, details")
    .option('--org <id>', 'organization id (deleted organizations keep their log); required')
    .option('--limit <n>', 'at most this many events, newest first', '50')
    .addOption(new Option('--actor <kind>', 'only changes by this kind of actor').choices(['member', 'operator', 'key']))
    .option('--action <action>', 'only events of this action (key.created, organization.updated, ...)')
    .option('--json', 'print one JSON object per line instead')
    .action(async (opts: { org?: string; limit: string; actor?: string; action?: string; json?: boolean }) => {
      const org = orgOf(opts);
      if (!/^\d{1,7}$/.test(opts.limit) || Number(opts.limit) < 1) throw new CliError('--limit must be a whole number, at least 1');
      let left = Number(opts.limit);
      await withOperator(async (op) => {
        let cursor: string | null = null;
        do {
          const query = new URLSearchParams({ limit: String(Math.min(left, PAGE)) });
          if (cursor) query.set('cursor', cursor);
          if (opts.actor) query.set('actorKind', opts.actor);
          if (opts.action) query.set('action', opts.action);
          const page: AuditEventList = await op.call<AuditEventList>('GET', `/admin/v1/organizations/${encodeURIComponent(org)}/audit-events?${query}`);
          for (const e of page.items) console.log(opts.json ? JSON.stringify(e) : auditLine(e));
          left -= page.items.length;
          cursor = page.nextCursor;
        } while (cursor && left > 0);
      });
    });

  audit
    .command('export')
    .description(
      "write the organization's audit log over a range, oldest first, as JSON lines or CSV (no cell read as a formula), streamed; the export is recorded in the log",
    )
    .addOption(
      new Option('--format <format>', 'jsonl: one event per line; csv: a header row, then one event per row').choices(['jsonl', 'csv']).default('jsonl'),
    )
    .option('--from <date-time>', 'the first instant (inclusive, RFC 3339); default: the beginning of the log')
    .option('--to <date-time>', 'the end (exclusive, RFC 3339); default: now')
    .option('--output <file>', 'a new file to write (never overwritten); default: standard output')
    .option('--json', 'the same as --format jsonl: one JSON document per event, one a line (what scripts read)')
    .action(async (_opts: unknown, cmd: Command) => {
      const opts = cmd.optsWithGlobals<{ org?: string; format: string; from?: string; to?: string; output?: string; json?: boolean }>();
      if (opts.json && cmd.getOptionValueSource('format') === 'cli' && opts.format !== 'jsonl')
        throw new CliError('--json writes JSON lines: leave out --format csv');
      if (opts.json) opts.format = 'jsonl';
      const org = orgOf(opts);
      const format = checkExportFormat(opts.format);
      const socket = await runningServerSocket(loadConfig());
      const sink = exportSink(opts.output);
      if (socket) {
        const query = new URLSearchParams({ format, ...(opts.from ? { from: opts.from } : {}), ...(opts.to ? { to: opts.to } : {}) });
        await downloadThroughSocket(socket, `/admin/v1/organizations/${encodeURIComponent(org)}/audit-events/export?${query}`, (chunk) => sink.write(chunk));
      } else {
        // Without a server holding DATA_DIR, on the domain directly: an in-process answer would be held whole.
        await withDatabase(async (db) => {
          const now = new Date();
          const range = checkExportRange({ from: opts.from, to: opts.to }, now);
          for await (const chunk of await exportAuditLog(db, org, { format, range, viewer: false }, operatorActor(IN_PROCESS_ADDRESS), now))
            await sink.write(chunk);
        });
      }
      await sink.end();
    });

  audit
    .command('retention')
    .description('show, or change, how many days the organization keeps its audit log and its webhook delivery log')
    .option('--audit-days <n>', 'days an audit entry is kept (30-3650)')
    .option('--delivery-days <n>', 'days a finished webhook delivery is kept (1-365)')
    .option('--json', JSON_HELP)
    .action(async (_opts: unknown, cmd: Command) => {
      const opts = cmd.optsWithGlobals<{ org?: string; auditDays?: string; deliveryDays?: string; json?: boolean }>();
      const org = orgOf(opts);
      const days = (v: string | undefined, name: string) => {
        if (v === undefined) return undefined;
        if (!/^\d{1,5}$/.test(v)) throw new CliError(`${name} must be a whole number of days`);
        return Number(v);
      };
      const patch = { auditDays: days(opts.auditDays, '--audit-days'), deliveryDays: days(opts.deliveryDays, '--delivery-days') };
      const path = `/admin/v1/organizations/${encodeURIComponent(org)}/retention`;
      const r = await withOperator((op) =>
        patch.auditDays === undefined && patch.deliveryDays === undefined
          ? op.call<Retention>('GET', path)
          : op.call<Retention>('PATCH', path, Object.fromEntries(Object.entries(patch).filter(([, v]) => v !== undefined))),
      );
      say(opts, `audit log: ${r.auditDays} days\nwebhook delivery log: ${r.deliveryDays} days`, {
        orgId: org,
        auditDays: r.auditDays,
        deliveryDays: r.deliveryDays,
      });
    });
}
