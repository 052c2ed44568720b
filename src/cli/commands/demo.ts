import type { Command } from 'commander';
import { loadConfig, type Config } from '../../config.js';
import { thresholdsFrom } from '../../domain/alert-engine.js';
import { createDemo, type DemoAlertSettings } from '../../domain/demo.js';
import { withDatabase } from '../db.js';
import { JSON_HELP, say } from '../output.js';

export const baseUrlOf = (config: Pick<Config, 'host' | 'port'>) =>
  `http://${config.host === '0.0.0.0' || config.host === '::' ? '127.0.0.1' : config.host}:${config.port}`;

export const demoAlertSettings = (config: Config): DemoAlertSettings => ({
  thresholds: thresholdsFrom(config),
  closeDelayMinutes: config.alertsCloseDelayMinutes,
});

export function demoInstructions(baseUrl: string, demo: { orgId: string; key: string; pulses: number; alerts: number }): string {
  return [
    `Demo organization ${demo.orgId} created with ${demo.pulses} pulses and ${demo.alerts} alert${demo.alerts === 1 ? '' : 's'} from the alert engine.`,
    `API key (shown once): ${demo.key}`,
    `Try it:`,
    `  curl -s -H "Authorization: Bearer ${demo.key}" ${baseUrl}/v1/stats`,
  ].join('\n');
}

export function registerDemo(program: Command) {
  program
    .command('demo')
    .description('create a demo organization with 120 days of realistic data and print its API key')
    .option('--json', JSON_HELP)
    .action(async (opts: { json?: boolean }) => {
      const config = loadConfig();
      await withDatabase(async (db) => {
        const demo = await createDemo(db, new Date(), demoAlertSettings(config));
        say(opts, demoInstructions(baseUrlOf(config), demo), { orgId: demo.orgId, key: demo.key, pulses: demo.pulses, alerts: demo.alerts });
      });
    });
}
