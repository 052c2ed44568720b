import type { Command } from 'commander';
import { runPrimary } from '../../cluster.js';
import { loadConfig } from '../../config.js';
import { migrate } from '../../db/migrate.js';
import { openDatabase } from '../../db/open.js';
import { countOrgs } from '../../db/repositories/orgs.js';
import { createDemo } from '../../domain/demo.js';
import { closeOnSignals, startServer } from '../../server.js';
import { demoAlertSettings, demoInstructions } from './demo.js';

export function registerServe(program: Command) {
  program
    .command('serve')
    .description('apply pending migrations, then serve the API')
    .option('--demo-if-empty', 'first create a demo organization when the database holds none (what `npm start` does)')
    .action(async (opts: { demoIfEmpty?: boolean }) => {
      const config = loadConfig();
      if (runPrimary(config, (line) => console.log(line))) return;
      const db = await openDatabase(config);
      let demo: Awaited<ReturnType<typeof createDemo>> | undefined;
      try {
        await migrate(db);
        if (opts.demoIfEmpty && (await countOrgs(db)) === 0) demo = await createDemo(db, new Date(), demoAlertSettings(config));
      } catch (err) {
        await db.close();
        throw err;
      }
      const server = await startServer(config, { db });
      closeOnSignals(server);
      console.log(`climate-pulse listening on ${server.address} (${server.db.kind === 'pg' ? 'PostgreSQL' : `embedded database in ${config.dataDir}`})`);
      if (server.metricsAddress) console.log(`metrics on ${server.metricsAddress}`);
      if (server.adminAddress) console.log(`operator API on ${server.adminAddress}/admin/v1 (Authorization: Bearer $ADMIN_TOKEN)`);
      if (demo) console.log(demoInstructions(server.address.replace('0.0.0.0', '127.0.0.1'), demo));
    });
}
