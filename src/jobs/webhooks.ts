import { Counter, Gauge, type Registry } from 'prom-client';
import type { DatabaseExecutor } from '../db/executor.js';
import { claimDueDeliveries, oldestPendingSeconds, type ClaimedDelivery } from '../db/repositories/webhooks.js';
import { deliver, type DeliveryOutcome } from '../domain/webhook-deliveries.js';
import { inSpan } from '../telemetry/spans.js';

export interface WebhookWorkerOptions {
  pollMs: number;
  timeoutMs: number;
  retryScheduleMs: number[];
  /** WEBHOOK_ALLOW_PRIVATE (tests only): deliveries may go to loopback over http and to private addresses. */
  allowPrivate?: boolean;
  /** Deliveries in flight at once in this process (default 32). */
  maxInFlight?: number;
  registry?: Registry;
  log?: { warn(obj: object, msg: string): void };
}

/**
 * Delivers the webhook outbox. Every server process runs one: each round claims due deliveries
 * organization by organization (FOR UPDATE SKIP LOCKED, leased for twice the timeout), sends them
 * outside any transaction, and records each outcome. A full round starts the next one at once.
 */
export class WebhookWorker {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private readonly stop = new AbortController();
  private readonly outcomes?: Counter<'outcome'>;
  private readonly maxInFlight: number;
  private readonly inFlight = new Set<Promise<void>>();
  private readonly leaseMs: number;

  constructor(
    private readonly db: DatabaseExecutor,
    private readonly opts: WebhookWorkerOptions,
  ) {
    this.maxInFlight = opts.maxInFlight ?? 32;
    // A claim outlives the attempt's timeout; after that, another process may take the delivery over.
    this.leaseMs = 2 * opts.timeoutMs;
    if (opts.registry) {
      this.outcomes = new Counter({
        name: 'webhook_deliveries_total',
        help: 'Webhook delivery attempts by outcome: succeeded, retry, failed (final), endpoint_disabled (410), released (abandoned at shutdown).',
        labelNames: ['outcome'],
        registers: [opts.registry],
      });
      for (const outcome of ['succeeded', 'retry', 'failed', 'endpoint_disabled', 'released'] as const) this.outcomes.inc({ outcome }, 0);
      new Gauge({
        name: 'webhook_oldest_pending_seconds',
        help: 'Age of the oldest webhook delivery not yet delivered or failed (0 when none).',
        registers: [opts.registry],
        // A scrape while the database is down keeps the last value: the other metrics still answer.
        collect: async function (this: Gauge) {
          this.set(await oldestPendingSeconds(db).catch(async () => (await this.get()).values[0]?.value ?? 0));
        },
      });
    }
  }

  start() {
    this.schedule(0);
  }

  private schedule(ms: number) {
    if (this.stop.signal.aborted) return;
    this.timer = setTimeout(() => {
      this.running = this.round().then((full) => this.schedule(full ? 0 : this.opts.pollMs));
    }, ms);
  }

  /**
   * One round: claims as many due deliveries as there is room for in flight and starts them
   * without waiting, so one slow receiver does not hold up the others. True when it filled the room.
   */
  async round(): Promise<boolean> {
    const room = this.maxInFlight - this.inFlight.size;
    if (room <= 0) return false;
    let claimed: Awaited<ReturnType<typeof claimDueDeliveries>>;
    try {
      claimed = await claimDueDeliveries(this.db, room, this.leaseMs);
    } catch (err) {
      this.opts.log?.warn({ err }, 'webhook claim failed');
      return false;
    }
    for (const d of claimed) {
      const sending: Promise<void> = this.send(d).finally(() => this.inFlight.delete(sending));
      this.inFlight.add(sending);
    }
    return claimed.length === room;
  }

  /** One attempt, in its span: the attempt's number and outcome, never the endpoint's URL or the payload. */
  private async send(d: ClaimedDelivery) {
    try {
      const { outcome } = await inSpan(
        'webhooks.deliver',
        async (span) => {
          const result = await deliver(this.db, d, {
            timeoutMs: this.opts.timeoutMs,
            scheduleMs: this.opts.retryScheduleMs,
            stop: this.stop.signal,
            allowPrivate: this.opts.allowPrivate,
          });
          span?.setAttribute('climate_pulse.webhook.outcome', result.outcome);
          return result;
        },
        { 'climate_pulse.webhook.attempt': d.attempts },
      );
      this.count(outcome);
    } catch (err) {
      // The outcome could not be recorded: the lease expires and the delivery is tried again.
      this.opts.log?.warn({ err, deliveryId: d.id }, 'webhook delivery outcome not recorded');
    }
  }

  private count(outcome: DeliveryOutcome) {
    this.outcomes?.inc({ outcome });
  }

  /** Stops polling, abandons attempts in flight (they are due again at once, for any process) and waits for them. */
  async close() {
    this.stop.abort();
    clearTimeout(this.timer);
    await this.running;
    await Promise.all(this.inFlight);
  }
}
