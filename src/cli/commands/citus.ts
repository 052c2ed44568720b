import type { Command } from 'commander';
import { CitusMissingError, citusVersion, distributeOnCitus } from '../../db/citus.js';
import { withDatabase } from '../db.js';
import { CliError } from '../errors.js';
import { JSON_HELP, say } from '../output.js';

export function registerCitus(program: Command) {
  const citus = program.command('citus').description('run the schema on a Citus cluster (docs/scaling.md)');
  citus
    .command('distribute')
    .description(
      'on the Citus coordinator (DATABASE_URL): migrate, then make the reference tables and distribute every organization table by org_id, colocated; again after a migration that adds a table',
    )
    .option('--shard-count <n>', 'shards per distributed table (Citus default: 32)', (v) => {
      if (!/^\d+$/.test(v) || Number(v) < 1) throw new CliError(`--shard-count ${JSON.stringify(v)} must be a positive integer`);
      return Number(v);
    })
    .option('--json', JSON_HELP)
    .action(async (opts: { shardCount?: number; json?: boolean }) => {
      await withDatabase(async (db) => {
        if (db.kind !== 'pg') throw new CliError('citus distribute needs DATABASE_URL naming the Citus coordinator');
        try {
          const steps = await distributeOnCitus(db, { shardCount: opts.shardCount });
          const version = await citusVersion(db);
          say(opts, [`citus ${version}`, ...steps.map((s) => `${s.table}: ${s.role}${s.state === 'made' ? '' : ' (already)'}`)].join('\n'), {
            citus: version,
            tables: steps,
          });
        } catch (err) {
          if (err instanceof CitusMissingError) throw new CliError(err.message);
          throw err;
        }
      });
    });
}
