import type { Command } from 'commander';
import type { Delivery as DeliveryListing, Endpoint as EndpointView } from '../../contract/schemas/admin-webhooks.js';
import { parseEventTypes, WEBHOOK_EVENT_TYPES } from '../../domain/webhook-deliveries.js';
import { withOperator } from '../operator.js';
import { printTable } from '../table.js';
import { CliError } from '../errors.js';
import { loadConfig } from '../../config.js';
import { cliCommand } from '../hints.js';
import { JSON_HELP, say } from '../output.js';

const org = (id: string) => `/admin/v1/organizations/${encodeURIComponent(id)}`;
const endpoint = (id: string) => `/admin/v1/webhook-endpoints/${encodeURIComponent(id)}`;

const UNITS: Record<string, number> = { m: 60_000, h: 3_600_000, d: 86_400_000 };

/** `--since`: a time as written (the API checks it), or `30m`, `6h`, `2d` back from `now`. */
export function sinceTime(text: string, now: Date): string {
  const back = /^\s*(\d{1,6})\s*([mhd])\s*$/.exec(text);
  if (!back) return text.trim();
  return new Date(now.getTime() - Number(back[1]) * UNITS[back[2]]).toISOString();
}

export function registerWebhooks(program: Command) {
  const webhooks = program.command('webhooks').description("manage an organization's webhook endpoints and deliveries");

  webhooks
    .command('add')
    .description('add an endpoint; its signing secret (whsec_…) is printed once')
    .requiredOption('--org <id>', 'organization id')
    .requiredOption('--url <url>', 'https:// URL (http:// only to 127.0.0.0/8, ::1 or localhost)')
    .option('--events <types>', `comma-separated event types (default: all of ${WEBHOOK_EVENT_TYPES.join(', ')})`)
    .option('--json', 'print the endpoint and its secret as JSON')
    .action(async (opts: { org: string; url: string; events?: string; json?: boolean }) => {
      const eventTypes = parseEventTypes(opts.events);
      await withOperator(async (op) => {
        const e = await op.call<EndpointView & { secret: string }>('POST', `${org(opts.org)}/webhook-endpoints`, { url: opts.url, eventTypes });
        if (opts.json) console.log(JSON.stringify({ id: e.id, url: e.url, events: e.eventTypes, secret: e.secret }));
        else console.log(e.secret);
        console.error(
          `added endpoint ${e.id} for ${opts.org}: ${e.url} (${e.eventTypes.join(', ')}). ` +
            `The secret is shown only now: store it safely. Try it with: ${cliCommand(loadConfig())} webhooks test ${e.id}`,
        );
      });
    });

  webhooks
    .command('list')
    .description("list an organization's endpoints (never their secrets)")
    .requiredOption('--org <id>', 'organization id')
    .option('--json', 'print JSON instead of a table')
    .action(async (opts: { org: string; json?: boolean }) => {
      await withOperator(async (op) => {
        const { items } = await op.call<{ items: EndpointView[] }>('GET', `${org(opts.org)}/webhook-endpoints`);
        const rows = items.map((e) => ({
          id: e.id,
          url: e.url,
          events: e.eventTypes,
          enabled: e.enabled,
          disabledReason: e.disabledReason,
          createdAt: e.createdAt,
        }));
        if (opts.json) {
          console.log(JSON.stringify(rows, null, 2));
          return;
        }
        printTable([
          ['ID', 'URL', 'EVENTS', 'ENABLED', 'CREATED'],
          ...rows.map((r) => [r.id, r.url, r.events.join(','), r.enabled ? 'yes' : `no (${r.disabledReason})`, r.createdAt]),
        ]);
      });
    });

  webhooks
    .command('remove')
    .description('remove an endpoint and its deliveries')
    .argument('<id>', 'endpoint id (whe_…)')
    .option('--json', JSON_HELP)
    .action(async (id: string, opts: { json?: boolean }) => {
      await withOperator(async (op) => {
        const e = await op.call<EndpointView>('GET', endpoint(id));
        await op.call('DELETE', `${org(e.orgId)}/webhook-endpoints/${encodeURIComponent(id)}`);
        say(opts, `removed ${id} (${e.url}) of ${e.orgId}`, { id, url: e.url, orgId: e.orgId, removed: true });
      });
    });

  webhooks
    .command('enable')
    .description('enable an endpoint that was disabled (after it answered 410); replay its failed deliveries if needed')
    .argument('<id>', 'endpoint id (whe_…)')
    .option('--json', JSON_HELP)
    .action(async (id: string, opts: { json?: boolean }) => {
      await withOperator(async (op) => {
        const e = await op.call<EndpointView>('POST', `${endpoint(id)}/enable`);
        say(opts, `enabled ${id} (${e.url}) of ${e.orgId}`, { id, url: e.url, orgId: e.orgId, enabled: e.enabled });
      });
    });

  webhooks
    .command('disable')
    .description('stop sending to an endpoint: no new events for it, its pending deliveries fail (resend them after enable)')
    .argument('<id>', 'endpoint id (whe_…)')
    .option('--json', JSON_HELP)
    .action(async (id: string, opts: { json?: boolean }) => {
      await withOperator(async (op) => {
        const e = await op.call<EndpointView>('POST', `${endpoint(id)}/disable`);
        say(opts, `disabled ${id} (${e.url}) of ${e.orgId}: ${e.disabledReason}`, {
          id,
          url: e.url,
          orgId: e.orgId,
          enabled: e.enabled,
          disabledReason: e.disabledReason,
        });
      });
    });

  webhooks
    .command('rotate-secret')
    .description('give an endpoint a new signing secret (printed once); the old one stays valid for 24 hours')
    .argument('<id>', 'endpoint id (whe_…)')
    .option('--json', 'print the endpoint and its new secret as JSON')
    .action(async (id: string, opts: { json?: boolean }) => {
      await withOperator(async (op) => {
        const e = await op.call<EndpointView & { secret: string }>('POST', `${endpoint(id)}/rotate-secret`);
        if (opts.json) console.log(JSON.stringify({ id: e.id, url: e.url, secret: e.secret, previousSecretExpiresAt: e.previousSecretExpiresAt }));
        else console.log(e.secret);
        console.error(
          `new secret for ${e.id} (${e.url}). The secret is shown only now: store it safely. ` +
            `Until ${e.previousSecretExpiresAt} every delivery is signed with the old and the new secret; after that with the new one only.`,
        );
      });
    });

  webhooks
    .command('resend-failed')
    .description('send again every failed delivery whose event was written since a time (same webhook-id, full retry schedule)')
    .requiredOption('--org <id>', 'organization id')
    .requiredOption('--since <time>', 'an RFC 3339 time (2026-11-20T09:00:00Z), or a duration back from now (30m, 6h, 2d)')
    .option('--json', JSON_HELP)
    .action(async (opts: { org: string; since: string; json?: boolean }) => {
      const since = sinceTime(opts.since, new Date());
      await withOperator(async (op) => {
        const r = await op.call<{ since: string; resent: number; skipped: number }>('POST', `${org(opts.org)}/webhook-deliveries/resend-failed`, { since });
        const skipped = r.skipped > 0 ? `; ${r.skipped} stay failed because their endpoint is disabled (enable it, then resend)` : '';
        say(opts, `resending ${r.resent} failed ${r.resent === 1 ? 'delivery' : 'deliveries'} of ${opts.org} since ${r.since}${skipped}`, {
          orgId: opts.org,
          since: r.since,
          resent: r.resent,
          skipped: r.skipped,
        });
      });
    });

  webhooks
    .command('test')
    .description('send a signed ping event to an endpoint now, once, and print the answer')
    .argument('<id>', 'endpoint id (whe_…)')
    .option('--json', JSON_HELP)
    .action(async (id: string, opts: { json?: boolean }) => {
      await withOperator(async (op) => {
        const ping = await op.call<{ eventId: string; deliveryId: string; outcome: string; result: string; url: string }>('POST', `${endpoint(id)}/test`);
        if (ping.outcome === 'succeeded') {
          say(opts, `ping ${ping.eventId} delivered to ${ping.url}: ${ping.result} (delivery ${ping.deliveryId})`, ping);
          return;
        }
        const disabled = ping.outcome === 'endpoint_disabled' ? '; the endpoint is now disabled' : '';
        throw new CliError(`ping ${ping.eventId} to ${ping.url} failed: ${ping.result}${disabled} (delivery ${ping.deliveryId})`);
      });
    });

  webhooks
    .command('deliveries')
    .description("list an organization's deliveries, newest first")
    .requiredOption('--org <id>', 'organization id')
    .option('--failed', 'only deliveries that failed for good')
    .option('--limit <n>', 'at most this many (1-1000)', '50')
    .option('--json', 'print JSON instead of a table')
    .action(async (opts: { org: string; failed?: boolean; limit: string; json?: boolean }) => {
      const limit = Number(opts.limit);
      if (!Number.isInteger(limit) || limit < 1 || limit > 1000) throw new CliError('--limit must be an integer from 1 to 1000');
      await withOperator(async (op) => {
        const query = new URLSearchParams({ limit: String(limit), ...(opts.failed ? { failed: 'true' } : {}) });
        const { items: rows } = await op.call<{ items: DeliveryListing[] }>('GET', `${org(opts.org)}/webhook-deliveries?${query}`);
        if (opts.json) {
          console.log(JSON.stringify(rows, null, 2));
          return;
        }
        printTable([
          ['ID', 'EVENT', 'TYPE', 'ENDPOINT', 'STATUS', 'ATTEMPTS', 'LAST RESULT', 'CREATED'],
          ...rows.map((d) => [
            d.id,
            d.eventId,
            d.type,
            d.endpointId,
            d.status,
            String(d.attempts),
            d.status === 'succeeded' ? `HTTP ${d.lastStatusCode}` : (d.lastError ?? '-'),
            d.createdAt,
          ]),
        ]);
      });
    });

  webhooks
    .command('replay')
    .description('send a failed delivery again (same webhook-id, full retry schedule) from the running servers')
    .argument('<delivery-id>', 'delivery id (whd_…)')
    .option('--json', JSON_HELP)
    .action(async (id: string, opts: { json?: boolean }) => {
      await withOperator(async (op) => {
        const r = await op.call<{ id: string; eventId: string; type: string; url: string }>(
          'POST',
          `/admin/v1/webhook-deliveries/${encodeURIComponent(id)}/replay`,
        );
        say(opts, `replaying ${id} (event ${r.eventId}, ${r.type}) to ${r.url}`, { id, eventId: r.eventId, type: r.type, url: r.url });
      });
    });
}
