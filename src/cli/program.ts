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
import { registerScim } from './commands/scim.js';
import { registerLoad } from './commands/load-dataset.js';
import { registerMembers } from './commands/members.js';
import { registerSso } from './commands/sso.js';
import { registerRespondents } from './commands/respondents.js';
import { registerMigrate } from './commands/migrate.js';
import { registerOrgs } from './commands/orgs.js';
import { registerPasskeys } from './commands/passkeys.js';
import { registerPlans } from './commands/plans.js';
import { registerPulses } from './commands/pulses.js';
import { registerServe } from './commands/serve.js';
import { registerWebhooks } from './commands/webhooks.js';

/** Exit codes of every command (docs/decisions.md, "Issue 54: one CLI shape"). */
export const EXIT = { done: 0, refused: 1, usage: 2 } as const;

/**
 * A commander command whose own refusals (an unknown command or option, a missing or invalid
 * argument, a command group run without its subcommand) exit 2, the usage code, not commander's 1:
 * 1 is kept for a command that ran and refused with a reason. Its subcommands are of the same kind.
 */
export class CliCommand extends Command {
  override createCommand(name?: string): Command {
    return new CliCommand(name);
  }

  /** Commander's one exit path (help and --version are 0 and stay so). */
  _exit(exitCode: number, code: string, message: string): never {
    const usage = exitCode !== 0 && code.startsWith('commander.') ? EXIT.usage : exitCode;
    return (Command.prototype as unknown as { _exit(e: number, c: string, m: string): never })._exit.call(this, usage, code, message);
  }
}

/**
 * The CLI's commands on a new commander program. A new one per run: commander keeps the values an
 * option took on the command that parsed it. `src/cli/index.ts` runs it on `process.argv`; the
 * tests run it in their own process too (test/helpers/cli.ts, `runCliInProcess`).
 */
export function buildProgram(): Command {
  const program = new CliCommand().name('climate-pulse').description('Climate Pulse REST API: server and operator tools').showHelpAfterError();
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
  registerSso(program);
  registerRespondents(program);
  registerAudit(program);
  registerScim(program);
  registerPasskeys(program);
  return program;
}

/**
 * One print path for a command that failed: an error whose message is the whole story is one line;
 * anything else is a bug, shown whole. The exit code is then 1.
 */
export function printCliError(err: unknown, print: (...args: unknown[]) => void = console.error): void {
  if (err instanceof PlainError) print(`climate-pulse: ${err.message}`);
  else print('climate-pulse: unexpected error:', err);
}
