import type { Command } from 'commander';
import { loadConfig } from '../../config.js';
import { getOrg } from '../../db/repositories/orgs.js';
import {
  deleteEndpoint,
  enableEndpoint,
  findDeliveryById,
  findEndpointById,
  listDeliveries,
  listEndpoints,
  replayDelivery,
} from '../../db/repositories/webhooks.js';
import type { Queryable } from '../../db/executor.js';
import { addEndpoint, parseEventTypes, sendPing, WEBHOOK_EVENT_TYPES } from '../../domain/webhooks.js';
import { withDatabase } from '../db.js';
import { CliError } from '../errors.js';

async function requireOrg(db: Queryable, orgId: string) {
  if (!(await getOrg(db, orgId))) throw new CliError(`no organization ${JSON.stringify(orgId)} (or it is deleted)`);
}

async function requireEndpoint(db: Queryable, id: string) {
  const endpoint = await findEndpointById(db, id);
  if (!endpoint) throw new CliError(`no webhook endpoint ${JSON.stringify(id)}`);
  return endpoint;
}

function printTable(rows: string[][]) {
  const widths = rows[0].map((_, i) => Math.max(...rows.map((row) => row[i].length)));
  for (const row of rows) console.log(row.map((c, i) => c.padEnd(widths[i])).join('  ').trimEnd());
}

export function registerWebhooks(program: Command) {
  const webhooks = program.command('webhooks').description("manage an organization's webhook endpoints and deliveries");

  webhooks
    .command('add')
    .description('add an endpoint; its signing secret (whsec_…) is printed once')
    .requiredOption('--org <id>', 'organization id')
    .requiredOption('--url <url>', 'https:// URL of a public host (http:// to loopback only with WEBHOOK_ALLOW_PRIVATE=true, for tests)')
    .option('--events <types>', `comma-separated event types (default: all of ${WEBHOOK_EVENT_TYPES.join(', ')})`)
    .option('--json', 'print the endpoint and its secret as JSON')
    .action(async (opts: { org: string; url: string; events?: string; json?: boolean }) => {
      await withDatabase(async (db) => {
        await requireOrg(db, opts.org);
        const endpoint = await addEndpoint(db, opts.org, {
          url: opts.url,
          eventTypes: parseEventTypes(opts.events),
          allowPrivate: loadConfig().webhookAllowPrivate,
        });
        const events = endpoint.eventTypes ?? [...WEBHOOK_EVENT_TYPES];
        if (opts.json) {
          console.log(JSON.stringify({ id: endpoint.id, url: endpoint.url, events, secret: endpoint.secret }));
        } else {
          console.log(endpoint.secret);
        }
        console.error(
          `added endpoint ${endpoint.id} for ${opts.org}: ${endpoint.url} (${events.join(', ')}). ` +
            `The secret is shown only now: store it safely. Try it with: climate-pulse webhooks test ${endpoint.id}`,
        );
      });
    });

  webhooks
    .command('list')
    .description("list an organization's endpoints (never their secrets)")
    .requiredOption('--org <id>', 'organization id')
    .option('--json', 'print JSON instead of a table')
    .action(async (opts: { org: string; json?: boolean }) => {
      await withDatabase(async (db) => {
        await requireOrg(db, opts.org);
        const rows = (await listEndpoints(db, opts.org)).map((e) => ({
          id: e.id,
          url: e.url,
          events: e.eventTypes ?? [...WEBHOOK_EVENT_TYPES],
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
    .action(async (id: string) => {
      await withDatabase(async (db) => {
        const endpoint = await requireEndpoint(db, id);
        await deleteEndpoint(db, endpoint.orgId, id);
        console.log(`removed ${id} (${endpoint.url}) of ${endpoint.orgId}`);
      });
    });

  webhooks
    .command('enable')
    .description('enable an endpoint that was disabled (after it answered 410); replay its failed deliveries if needed')
    .argument('<id>', 'endpoint id (whe_…)')
    .action(async (id: string) => {
      await withDatabase(async (db) => {
        const endpoint = await requireEndpoint(db, id);
        await enableEndpoint(db, endpoint.orgId, id);
        console.log(`enabled ${id} (${endpoint.url}) of ${endpoint.orgId}`);
      });
    });

  webhooks
    .command('test')
    .description('send a signed ping event to an endpoint now, once, and print the answer')
    .argument('<id>', 'endpoint id (whe_…)')
    .action(async (id: string) => {
      const { webhookTimeoutMs, webhookAllowPrivate } = loadConfig();
      await withDatabase(async (db) => {
        await requireEndpoint(db, id);
        const ping = await sendPing(db, id, { timeoutMs: webhookTimeoutMs, allowPrivate: webhookAllowPrivate });
        const r = ping.result;
        const what = r.kind === 'ok' || r.kind === 'gone' ? `HTTP ${r.statusCode}` : 'error' in r ? r.error : r.kind;
        if (ping.outcome === 'succeeded') {
          console.log(`ping ${ping.eventId} delivered to ${ping.endpoint.url}: ${what} (delivery ${ping.deliveryId})`);
          return;
        }
        const disabled = ping.outcome === 'endpoint_disabled' ? '; the endpoint is now disabled' : '';
        throw new CliError(`ping ${ping.eventId} to ${ping.endpoint.url} failed: ${what}${disabled} (delivery ${ping.deliveryId})`);
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
      await withDatabase(async (db) => {
        await requireOrg(db, opts.org);
        const rows = await listDeliveries(db, opts.org, { status: opts.failed ? 'failed' : undefined, limit });
        if (opts.json) {
          console.log(JSON.stringify(rows, null, 2));
          return;
        }
        printTable([
          ['ID', 'EVENT', 'TYPE', 'ENDPOINT', 'STATUS', 'ATTEMPTS', 'LAST RESULT', 'CREATED'],
          ...rows.map((d) => [
            d.id, d.eventId, d.type, d.endpointId, d.status, String(d.attempts),
            d.status === 'succeeded' ? `HTTP ${d.lastStatusCode}` : (d.lastError ?? '-'), d.createdAt,
          ]),
        ]);
      });
    });

  webhooks
    .command('replay')
    .description('send a failed delivery again (same webhook-id, full retry schedule) from the running servers')
    .argument('<delivery-id>', 'delivery id (whd_…)')
    .action(async (id: string) => {
      await withDatabase(async (db) => {
        const delivery = await findDeliveryById(db, id);
        if (!delivery) throw new CliError(`no webhook delivery ${JSON.stringify(id)}`);
        if (delivery.status !== 'failed') throw new CliError(`delivery ${id} is ${delivery.status}; only failed deliveries are replayed`);
        const endpoint = await requireEndpoint(db, delivery.endpointId);
        if (!endpoint.enabled) {
          throw new CliError(`endpoint ${endpoint.id} is disabled (${endpoint.disabledReason}); enable it first: climate-pulse webhooks enable ${endpoint.id}`);
        }
        if (!(await replayDelivery(db, delivery.orgId, id))) throw new CliError(`delivery ${id} changed meanwhile; list it again`);
        console.log(`replaying ${id} (event ${delivery.eventId}, ${delivery.type}) to ${endpoint.url}`);
      });
    });
}
