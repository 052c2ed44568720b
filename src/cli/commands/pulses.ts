import type { Command } from 'commander';
import type { ModerationResult } from '../../contract/schemas/admin-pulses.js';
import { withOperator } from '../operator.js';
import { CliError } from '../errors.js';
import { JSON_HELP, say } from '../output.js';

export function registerPulses(program: Command) {
  const pulses = program.command('pulses').description('pulses: moderation');
  pulses
    .command('moderate')
    .description('set the moderation status of a pulse (CLEAN or FLAGGED); prints what changed')
    .requiredOption('--org <id>', 'organization id')
    .argument('<pulse-id>', 'pulse id')
    .argument('<status>', 'CLEAN or FLAGGED')
    .option('--json', JSON_HELP)
    .action(async (pulseId: string, status: string, opts: { org: string; json?: boolean }) => {
      const moderationStatus = status.toUpperCase();
      if (moderationStatus !== 'CLEAN' && moderationStatus !== 'FLAGGED') throw new CliError(`status must be CLEAN or FLAGGED, not ${JSON.stringify(status)}`);
      await withOperator(async (op) => {
        const r = await op.call<ModerationResult>('PATCH', `/admin/v1/organizations/${encodeURIComponent(opts.org)}/pulses/${encodeURIComponent(pulseId)}`, {
          moderationStatus,
        });
        say(
          opts,
          r.changed
            ? `pulse ${r.pulseId} of ${opts.org}: ${r.previous} -> ${r.current}`
            : `pulse ${r.pulseId} of ${opts.org} is already ${r.current}; nothing changed`,
          { ...r, orgId: opts.org },
        );
      });
    });
}
