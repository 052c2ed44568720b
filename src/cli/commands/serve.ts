import type { Command } from 'commander';
import { loadConfig } from '../../config.js';
import { closeOnSignals, startServer } from '../../server.js';

export function registerServe(program: Command) {
  program
    .command('serve')
    .description('apply pending migrations, then serve the API')
    .action(async () => {
      const config = loadConfig();
      const server = await startServer(config);
      closeOnSignals(server);
      console.log(`climate-pulse listening on ${server.address} (${server.db.kind === 'pg' ? 'PostgreSQL' : `embedded database in ${config.dataDir}`})`);
    });
}
