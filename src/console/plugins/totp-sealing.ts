import type { FastifyInstance } from 'fastify';
import { sealClearTotpSecrets } from '../../domain/totp.js';
import type { ConsoleDeps } from './session.js';

/**
 * Migration 0025's second half (issue 52, L4): when the console starts, every two-factor secret
 * still stored in clear is sealed (SQL cannot: the seal key is derived from a service secret here).
 * A failure leaves the start alone: a secret met in clear is sealed when it is next used.
 */
export function registerTotpSealing(scope: FastifyInstance, deps: Pick<ConsoleDeps, 'db'>) {
  scope.addHook('onReady', async () => {
    try {
      const sealed = await sealClearTotpSecrets(deps.db);
      if (sealed > 0) scope.log.info({ sealed }, 'sealed two-factor secrets stored in clear');
    } catch (err) {
      scope.log.warn(
        { reason: err instanceof Error ? err.message : String(err) },
        'sealing two-factor secrets stored in clear failed; each is sealed when next used',
      );
    }
  });
}
