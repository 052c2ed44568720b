import { resolve } from 'node:path';
import type { Command } from 'commander';
import { loadConfig, type Config } from '../../config.js';
import { lockHolder, stopHint } from '../../db/data-dir-lock.js';
import { cliCommand, maskedNote } from '../hints.js';
import { CopyRefusedError, copyDatabase, tablesHoldingData } from '../../db/copy.js';
import { migrate } from '../../db/migrate.js';
import { PgExecutor } from '../../db/pg.js';
import { isInitialized } from '../../db/pglite-init.js';
import { listOrganizations } from '../../domain/orgs.js';
import { withDatabase } from '../db.js';
import { CliError } from '../errors.js';
import { JSON_HELP } from '../output.js';
import { runningServerSocket } from '../operator.js';
import { printTable } from '../table.js';

/** The URL as it may be printed: without its password. */
function shown(url: URL): string {
  const u = new URL(url);
  if (u.password) u.password = '***';
  return u.toString();
}

function targetUrl(text: string): URL {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new CliError('--to must be a postgres:// URL of the target database');
  }
  if (url.protocol !== 'postgres:' && url.protocol !== 'postgresql:') throw new CliError('--to must be a postgres:// URL of the target database');
  return url;
}

/**
 * A failure of the target (refused or timed-out connection, no TLS where the URL asks for it, wrong
 * password, unknown database, a read-only or unprivileged role) as one line about the target. Only
 * a programming error (TypeError and its kind) is left to print whole.
 */
async function onTarget<T>(url: URL, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    if (err instanceof CliError || err instanceof CopyRefusedError) throw err;
    if (!(err instanceof Error) || err instanceof TypeError || err instanceof RangeError || err instanceof ReferenceError || err instanceof SyntaxError)
      throw err;
    const code = (err as { code?: string }).code;
    const sqlstate = code && /^[0-9A-Z]{5}$/.test(code) && !/^(28|3D)/.test(code) ? ` (SQLSTATE ${code})` : '';
    throw new CliError(`cannot use the target database ${shown(url)}: ${err.message.split('\n')[0]}${sqlstate}; nothing was copied`);
  }
}

/**
 * What `db copy` ends with (issue 54, item 1): the commands that serve the copy and work on it,
 * each naming the target database, so that nothing run as printed reaches the source. The keys,
 * members and organizations moved with the data: the keys already issued work on the copy.
 */
export function nextAfterCopy(url: URL, source: Pick<Config, 'databaseUrl' | 'dataDir'>, orgId = 'ORG_ID'): string {
  const target = { databaseUrl: url.toString(), dataDir: source.dataDir };
  const cli = cliCommand(target);
  const note = maskedNote(target);
  return [
    `Next: serve the copy (its keys, members and organizations came with it), and name it in every command:`,
    `  ${cli} serve`,
    `  ${cli} orgs list`,
    `  ${cli} keys create --org ${orgId}`,
    ...(note ? [note] : []),
    source.databaseUrl
      ? '  the source database is left as it was: stop the servers on it before serving the copy.'
      : `  the embedded database in ${resolve(source.dataDir)} is left as it was: keep it as a backup, or remove it once the copy serves.`,
  ].join('\n');
}

/** `db copy --to URL`: the move from the embedded database (or one PostgreSQL) to PostgreSQL or Citus (docs/scaling.md). */
export function registerDb(program: Command) {
  const db = program.command('db').description('move the database (docs/scaling.md, "Moving up")');
  db.command('copy')
    .description(
      'copy every table of this database (DATA_DIR, or DATABASE_URL) into a migrated, empty PostgreSQL database, in one transaction there, comparing rows and checksums per table; the embedded database needs its server stopped',
    )
    .requiredOption('--to <url>', 'postgres:// URL of the target database (an empty one is migrated first; one that holds data is refused)')
    .option('--json', JSON_HELP)
    .action(async (opts: { to: string; json?: boolean }) => {
      const url = targetUrl(opts.to);
      const config = loadConfig();
      if (await runningServerSocket(config)) {
        const holder = lockHolder(config.dataDir);
        const who = holder ? ` (process ${holder.pid}, ${holder.command})` : '';
        const how = holder ? ` (${stopHint(holder.pid)})` : '';
        throw new CliError(
          `a server is running on the embedded database in ${config.dataDir}${who}: stop it first${how}; db copy moves the whole database, and writes made while it copies would not move; nothing was copied`,
        );
      }
      if (!config.databaseUrl && !isInitialized(config.dataDir)) {
        throw new CliError(`there is no embedded database in ${resolve(config.dataDir)} to copy (set DATA_DIR, or DATABASE_URL for a PostgreSQL source)`);
      }
      const started = performance.now();
      await withDatabase(async (source) => {
        const target = new PgExecutor({ connectionString: url.toString(), max: 2, application: 'climate-pulse db copy' });
        try {
          // A target that holds data is refused before anything, migrations included, touches it.
          const holding = await onTarget(url, () => tablesHoldingData(target));
          if (holding.length) {
            throw new CliError(
              `the target database ${shown(url)} already holds data (${holding.slice(0, 4).join(', ')}${holding.length > 4 ? ', ...' : ''}): db copy fills only a migrated, empty database; nothing was copied`,
            );
          }
          await onTarget(url, () => migrate(target));
          const outcome = await onTarget(url, () => copyDatabase(source, target));
          const rows = outcome.tables.reduce((n, t) => n + t.rows, 0);
          const seconds = Number(((performance.now() - started) / 1000).toFixed(1));
          const { items } = await listOrganizations(source, { limit: 10 });
          const live = items.filter((o) => o.deletedAt === null);
          const next = nextAfterCopy(url, config, (live.find((o) => o.id.startsWith('org_demo_')) ?? live[0])?.id);
          if (opts.json) {
            console.log(JSON.stringify({ target: shown(url), tables: outcome.tables, rows, seconds, match: true, next }));
            return;
          }
          printTable([['TABLE', 'ROWS', 'CHECKSUM'], ...outcome.tables.map((t) => [t.table, String(t.rows), t.checksum])]);
          console.log(
            `copied ${rows} rows in ${outcome.tables.length} tables to ${shown(url)} in ${seconds.toFixed(1)} s: rows and checksums match on both sides`,
          );
          console.log(next);
        } catch (err) {
          if (err instanceof CopyRefusedError) throw new CliError(err.message);
          throw err;
        } finally {
          await target.close();
        }
      });
    });
}
