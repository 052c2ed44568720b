import { readFile } from 'node:fs/promises';
import type { Command } from 'commander';
import { loadConfig } from '../../config.js';
import { migrate } from '../../db/migrate.js';
import { openDatabase } from '../../db/open.js';
import { loadDataset } from '../../domain/dataset.js';
import { CliError } from '../errors.js';

export function registerLoad(program: Command) {
  program
    .command('load')
    .description('load a dataset file (plans, organizations and their data) in one transaction')
    .argument('<file>', 'dataset JSON file')
    .action(async (file: string) => {
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
        console.log(JSON.stringify({ loaded: summary }));
      } finally {
        await db.close();
      }
    });
}
