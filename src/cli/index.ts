import { Command } from 'commander';
import { ConfigError } from '../config.js';
import { DataDirLockedError, DataDirUnwritableError } from '../db/data-dir-lock.js';
import { DataDirInitError } from '../db/pglite-init.js';
import { DatasetError } from '../domain/dataset.js';
import { registerAlerts } from './commands/alerts.js';
import { registerCitus } from './commands/citus.js';
import { registerDemo } from './commands/demo.js';
import { registerImportPulses } from './commands/import-pulses.js';
import { registerKeys } from './commands/keys.js';
import { registerLoad } from './commands/load-dataset.js';
import { registerMigrate } from './commands/migrate.js';
import { registerOrgs } from './commands/orgs.js';
import { registerPlans } from './commands/plans.js';
import { registerPulses } from './commands/pulses.js';
import { registerServe } from './commands/serve.js';
import { registerWebhooks } from './commands/webhooks.js';
import { WebhookError } from '../domain/webhooks.js';
import { CliError } from './errors.js';

const program = new Command()
  .name('climate-pulse')
  .description('Climate Pulse REST API: server and operator tools')
  .showHelpAfterError();

registerServe(program);
registerMigrate(program);
registerLoad(program);
registerKeys(program);
registerDemo(program);
registerImportPulses(program);
registerAlerts(program);
registerWebhooks(program);
registerCitus(program);
registerOrgs(program);
registerPlans(program);
registerPulses(program);

try {
  await program.parseAsync(process.argv);
} catch (err) {
  if (
    err instanceof CliError ||
    err instanceof ConfigError ||
    err instanceof DatasetError ||
    err instanceof DataDirLockedError ||
    err instanceof DataDirUnwritableError ||
    err instanceof WebhookError ||
    err instanceof DataDirInitError
  ) {
    console.error(`climate-pulse: ${err.message}`);
  } else {
    console.error('climate-pulse: unexpected error:', err);
  }
  process.exitCode = 1;
}
