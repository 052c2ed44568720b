import type { Command } from 'commander';
import { loadConfig } from '../../config.js';
import { migrate } from '../../db/migrate.js';
import { openDatabase } from '../../db/open.js';
import { JSON_HELP, say } from '../output.js';

export function registerMigrate(program: Command) {
  program
    .command('migrate')
    .description('apply pending migrations and exit')
    .option('--json', JSON_HELP)
    .action(async (opts: { json?: boolean }) => {
      const db = await openDatabase(loadConfig());
      try {
        const ran = await migrate(db);
        say(opts, ran.length ? `applied: ${ran.join(', ')}` : 'database is up to date', { applied: ran });
      } finally {
        await db.close();
      }
    });
}
