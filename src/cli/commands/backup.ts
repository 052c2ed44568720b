import { createWriteStream, existsSync, readdirSync, readFileSync, renameSync, rmSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { Writable } from 'node:stream';
import type { Command } from 'commander';
import { loadConfig } from '../../config.js';
import { checkRestoreTarget, isEmptyOrMissing, unpackBackup } from '../../db/backup.js';
import { lockDataDir } from '../../db/data-dir-lock.js';
import { sql } from '../../db/executor.js';
import { openDatabase } from '../../db/open.js';
import { backupDatabase } from '../../domain/backup.js';
import { CliError } from '../errors.js';
import { JSON_HELP, say } from '../output.js';
import { cliCommand } from '../hints.js';
import { backupThroughSocket, runningServerSocket } from '../operator.js';

const EMBEDDED_ONLY = "for the embedded database (DATA_DIR) only; with DATABASE_URL use PostgreSQL's own tools (pg_dump), or db copy";

/** Writes to FILE through a temporary file next to it (0600: a backup holds every secret), renamed into place when whole. */
async function writeFileWhole(file: string, write: (out: Writable) => Promise<void>): Promise<number> {
  const tmp = `${file}.part-${process.pid}`;
  try {
    await write(createWriteStream(tmp, { flags: 'wx', mode: 0o600 }));
    renameSync(tmp, file);
  } catch (err) {
    rmSync(tmp, { force: true });
    throw err;
  }
  return statSync(file).size;
}

/** `backup FILE` / `restore FILE`: the embedded database, backed up while its server runs, and unpacked into a new DATA_DIR. */
export function registerBackup(program: Command) {
  program
    .command('backup')
    .argument('<file>', 'the backup to write (a gzipped tar; must not exist)')
    .description('write a consistent backup of the embedded database in DATA_DIR, through the running server when there is one')
    .option('--json', JSON_HELP)
    .action(async (file: string, opts: { json?: boolean }) => {
      const config = loadConfig();
      if (config.databaseUrl) throw new CliError(`backup is ${EMBEDDED_ONLY}`);
      if (existsSync(file)) throw new CliError(`${file} exists; name a new file for the backup`);
      const socket = await runningServerSocket(config);
      let bytes: number;
      if (socket) bytes = await writeFileWhole(file, (out) => backupThroughSocket(socket, out));
      else {
        if (!existsSync(config.dataDir)) throw new CliError(`there is no embedded database in ${resolve(config.dataDir)} to back up`);
        const db = await openDatabase(config);
        try {
          bytes = await writeFileWhole(file, (out) =>
            backupDatabase(db, out, { secret: config.commentCursorSecret, releaseDelayHours: config.commentsReleaseDelayHours, now: new Date() }),
          );
        } finally {
          await db.close();
        }
      }
      say(opts, `backed up the embedded database in ${resolve(config.dataDir)} to ${file} (${bytes} bytes${socket ? ', through the running server' : ''})`, {
        dataDir: resolve(config.dataDir),
        file,
        bytes,
        throughServer: Boolean(socket),
      });
    });

  program
    .command('restore')
    .argument('<file>', 'a backup written by climate-pulse backup')
    .description('unpack a backup into DATA_DIR, which must be new or empty; then serve it')
    .option('--json', JSON_HELP)
    .action(async (file: string, opts: { json?: boolean }) => {
      const config = loadConfig();
      if (config.databaseUrl) throw new CliError(`restore is ${EMBEDDED_ONLY}`);
      if (!existsSync(file)) throw new CliError(`${file} does not exist`);
      const dir = resolve(config.dataDir);
      const existed = checkRestoreTarget(dir);
      if (!isEmptyOrMissing(dir)) throw new CliError(`${dir} is not empty; restore into a new or empty DATA_DIR (nothing was changed)`);
      const release = lockDataDir(dir);
      let files: number;
      try {
        files = await unpackBackup(file, dir);
      } finally {
        release();
      }
      // Opened once, as serve will: the files make a database this PGlite reads, and it says what it holds.
      let db: Awaited<ReturnType<typeof openDatabase>>;
      try {
        db = await openDatabase(config);
      } catch (err) {
        const version = readFileSync(join(dir, 'PG_VERSION'), 'utf8').trim();
        if (existed) for (const e of readdirSync(dir)) rmSync(join(dir, e), { recursive: true, force: true });
        else rmSync(dir, { recursive: true, force: true });
        const reason = ((err as Error).message ?? String(err)).split('\n')[0];
        throw new CliError(`${file} holds a database this PGlite cannot open (PostgreSQL ${version} files: ${reason}); nothing was restored`);
      }
      try {
        const [r] = await db.query<{ n: string }>(sql('restore.orgs', 'SELECT count(*)::text AS n FROM organizations'));
        const cli = cliCommand(config);
        say(
          opts,
          `restored ${file} into ${dir}: ${files} files, ${r.n} organization${r.n === '1' ? '' : 's'}\n` +
            `Next: serve it (${cli} serve), then work on it with the same prefix, for instance: ${cli} orgs list`,
          { file, dataDir: dir, files, organizations: Number(r.n), next: [`${cli} serve`, `${cli} orgs list`] },
        );
      } finally {
        await db.close();
      }
    });
}
