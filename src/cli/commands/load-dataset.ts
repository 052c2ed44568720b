import { readFile } from 'node:fs/promises';
import type { Command } from 'commander';
import { loadConfig } from '../../config.js';
import { migrate } from '../../db/migrate.js';
import { openDatabase } from '../../db/open.js';
import { loadDataset } from '../../domain/dataset.js';
import { CliError } from '../errors.js';
import { JSON_HELP, say } from '../output.js';

export function registerLoad(program: Command) {
  program
    .command('load')
    .description('load a dataset file (plans, organizations and their data) in one transaction')
    .argument('<file>', 'dataset JSON file')
    .option('--json', JSON_HELP)
    .action(async (file: string, opts: { json?: boolean }) => {
      let data: unknown;
      try {
        data = JSON.parse(await readFile(file, 'utf8'));
      } catch (err) {
        throw new CliError(`${file}: ${(err as Error).message}`);
      }
      const db = await openDatabase(loadConfig());
      try {
        await migrate(db);
        const summary = await loadDataset(db, data);
        const parts = Object.entries(summary)
          .filter(([, n]) => n > 0)
          .map(([what, n]) => `${n} ${what}`);
        say(opts, `loaded ${file}: ${parts.length ? parts.join(', ') : 'nothing'}`, { loaded: summary });
      } finally {
        await db.close();
      }
    });
}
