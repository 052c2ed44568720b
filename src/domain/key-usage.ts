import type { Queryable } from '../db/executor.js';
import { touchApiKeys } from '../db/repositories/api-keys.js';

/**
 * Records when keys were last used without a database write per request: uses are kept in
 * memory (one entry per key) and written in one statement every `everyMs` and at shutdown.
 */
export class KeyUsageRecorder {
  private pending = new Map<string, { orgId: string; keyId: string; at: Date }>();
  private readonly timer: NodeJS.Timeout;

  constructor(
    private readonly db: Queryable,
    everyMs = 5_000,
    private readonly onError: (err: unknown) => void = () => {},
  ) {
    this.timer = setInterval(() => void this.flush(), everyMs);
    this.timer.unref();
  }

  used(orgId: string, keyId: string, at = new Date()) {
    this.pending.set(`${orgId}\u0000${keyId}`, { orgId, keyId, at });
  }

  async flush(): Promise<void> {
    if (this.pending.size === 0) return;
    const batch = [...this.pending.values()];
    this.pending = new Map();
    try {
      await touchApiKeys(this.db, batch);
    } catch (err) {
      this.onError(err); // last-used is advisory: a lost batch is not worth failing requests for
    }
  }

  async close(): Promise<void> {
    clearInterval(this.timer);
    await this.flush();
  }
}
