import type { Command } from 'commander';
import { withOperator } from '../operator.js';
import { CliError } from '../errors.js';
import { JSON_HELP, say } from '../output.js';

export function registerPlans(program: Command) {
  const plans = program.command('plans').description('plans: whether the REST API is included, and the per-key rate limit');
  plans
    .command('set')
    .description('create or change a plan; running servers apply it within 5 seconds')
    .argument('<name>', 'plan name')
    .requiredOption('--rest-api <yes|no>', 'whether the plan includes the REST API')
    .requiredOption('--rate-limit <n>', 'requests per minute per key')
    .option('--json', JSON_HELP)
    .action(async (name: string, opts: { restApi: string; rateLimit: string; json?: boolean }) => {
      const restApi = { yes: true, true: true, no: false, false: false }[opts.restApi.toLowerCase()];
      if (restApi === undefined) throw new CliError('--rest-api must be yes or no');
      if (!/^\d{1,10}$/.test(opts.rateLimit) || Number(opts.rateLimit) < 1 || Number(opts.rateLimit) > 2_147_483_647) {
        throw new CliError('--rate-limit must be a whole number of requests per minute, at least 1');
      }
      await withOperator(async (op) => {
        const plan = await op.call<{ name: string; restApi: boolean; rateLimitPerMinute: number; created: boolean }>(
          'PUT',
          `/admin/v1/plans/${encodeURIComponent(name)}`,
          { restApi, rateLimitPerMinute: Number(opts.rateLimit) },
        );
        const api = plan.restApi ? 'with the REST API' : 'without the REST API';
        say(opts, `${plan.created ? 'created' : 'changed'} plan ${plan.name}: ${api}, ${plan.rateLimitPerMinute} requests a minute per key`, plan);
      });
    });
}
