import { Command } from 'commander';
import { PlainError } from '../contract/errors.js';
import { registerAlerts } from './commands/alerts.js';
import { registerAudit } from './commands/audit.js';
import { registerBackup } from './commands/backup.js';
import { registerCitus } from './commands/citus.js';
import { registerDb } from './commands/db.js';
import { registerDemo } from './commands/demo.js';
import { registerImportPulses } from './commands/import-pulses.js';
import { registerKeys } from './commands/keys.js';
import { registerLoad } from './commands/load-dataset.js';
import { registerMembers } from './commands/members.js';
import { registerRespondents } from './commands/respondents.js';
import { registerMigrate } from './commands/migrate.js';
import { registerOrgs } from './commands/orgs.js';
import { registerPlans } from './commands/plans.js';
import { registerPulses } from './commands/pulses.js';
import { registerServe } from './commands/serve.js';
import { registerWebhooks } from './commands/webhooks.js';

const program = new Command().name('climate-pulse').description('Climate Pulse REST API: server and operator tools').showHelpAfterError();

registerServe(program);
registerMigrate(program);
registerLoad(program);
registerKeys(program);
registerDemo(program);
registerImportPulses(program);
registerAlerts(program);
registerWebhooks(program);
registerCitus(program);
registerDb(program);
registerBackup(program);
registerOrgs(program);
registerPlans(program);
registerPulses(program);
registerMembers(program);
registerRespondents(program);
registerAudit(program);

try {
  await program.parseAsync(process.argv);
} catch (err) {
  // One print path: an error whose message is the whole story is one line; anything else is a bug, shown whole.
  if (err instanceof PlainError) console.error(`climate-pulse: ${err.message}`);
  else console.error('climate-pulse: unexpected error:', err);
  process.exitCode = 1;
}
