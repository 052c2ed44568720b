import type { Command } from 'commander';
import { loadConfig } from '../../config.js';
import { migrate } from '../../db/migrate.js';
import { openDatabase } from '../../db/open.js';

export function registerMigrate(program: Command) {
  program
    .command('migrate')
    .description('apply pending migrations and exit')
    .action(async () => {
      const db = await openDatabase(loadConfig());
      try {
        const ran = await migrate(db);
        console.log(ran.length ? `applied: ${ran.join(', ')}` : 'database is up to date');
      } finally {
        await db.close();
      }
    });
}
