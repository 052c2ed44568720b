import { Counter, Gauge, type Registry } from 'prom-client';
import type { DatabaseExecutor } from '../db/executor.js';
import { claimDueDeliveries, oldestPendingSeconds } from '../db/repositories/webhooks.js';
import { deliver, type DeliveryOutcome } from '../domain/webhooks.js';

export interface WebhookWorkerOptions {
  pollMs: number;
  timeoutMs: number;
  retryScheduleMs: number[];
  /** Deliveries claimed per round (sent concurrently). */
  batchSize?: number;
  registry?: Registry;
  log?: { warn(obj: object, msg: string): void };
}

/**
 * Delivers the webhook outbox. Every server process runs one: each round claims due deliveries
 * in a short transaction (FOR UPDATE SKIP LOCKED, leased past the timeout), sends them outside
 * any transaction, and records each outcome. A full batch starts the next round at once.
 */
export class WebhookWorker {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private readonly stop = new AbortController();
  private readonly outcomes?: Counter<'outcome'>;
  private readonly batchSize: number;
  private readonly leaseMs: number;

  constructor(
    private readonly db: DatabaseExecutor,
    private readonly opts: WebhookWorkerOptions,
  ) {
    this.batchSize = opts.batchSize ?? 20;
    // A claim outlives the attempt's timeout; after that, another process may take the delivery over.
    this.leaseMs = opts.timeoutMs + 10_000;
    if (opts.registry) {
      this.outcomes = new Counter({
        name: 'webhook_deliveries_total',
        help: 'Webhook delivery attempts by outcome: succeeded, retry, failed (final), endpoint_disabled (410), released (abandoned at shutdown).',
        labelNames: ['outcome'],
        registers: [opts.registry],
      });
      for (const outcome of ['succeeded', 'retry', 'failed', 'endpoint_disabled'] as const) this.outcomes.inc({ outcome }, 0);
      new Gauge({
        name: 'webhook_oldest_pending_seconds',
        help: 'Age of the oldest webhook delivery not yet delivered or failed (0 when none).',
        registers: [opts.registry],
        collect: async function (this: Gauge) {
          this.set(await oldestPendingSeconds(db));
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

  /** One round; true when it claimed a full batch (more may be due). */
  async round(): Promise<boolean> {
    let claimed;
    try {
      claimed = await this.db.transaction((tx) => claimDueDeliveries(tx, this.batchSize, this.leaseMs));
    } catch (err) {
      this.opts.log?.warn({ err }, 'webhook claim failed');
      return false;
    }
    await Promise.all(
      claimed.map(async (d) => {
        try {
          const { outcome } = await deliver(this.db, d, {
            timeoutMs: this.opts.timeoutMs,
            scheduleMs: this.opts.retryScheduleMs,
            stop: this.stop.signal,
          });
          this.count(outcome);
        } catch (err) {
          // The outcome could not be recorded: the lease expires and the delivery is tried again.
          this.opts.log?.warn({ err, deliveryId: d.id }, 'webhook delivery outcome not recorded');
        }
      }),
    );
    return claimed.length === this.batchSize;
  }

  private count(outcome: DeliveryOutcome) {
    this.outcomes?.inc({ outcome });
  }

  /** Stops polling, abandons attempts in flight (they are due again at once, for any process) and waits for them. */
  async close() {
    this.stop.abort();
    clearTimeout(this.timer);
    await this.running;
  }
}
