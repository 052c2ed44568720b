import { chmodSync, unlinkSync } from 'node:fs';
import type { FastifyBaseLogger, FastifyInstance } from 'fastify';
import type { Config } from '../config.js';
import type { DatabaseExecutor } from '../db/executor.js';
import { trackConnections, type ConnectionDrain } from '../http/drain.js';
import { answerNodeErrorsInContractShape } from '../http/node-server.js';
import { buildAdminApp } from './app.js';
import { removeStaleImportFiles } from './routes/pulses.js';
import { adminSocketPath } from './socket.js';

export interface AdminListeners {
  /** http://host:port of the TCP listener, when ADMIN_PORT and ADMIN_TOKEN are set. */
  address?: string;
  /** The Unix socket in DATA_DIR (embedded mode). */
  socketPath?: string;
  /** One per listener, for the shutdown (server.ts). */
  drains: ConnectionDrain[];
  close(): Promise<void>;
}

/**
 * The operator API's listeners (CONTRACT.md section 10), never the public port: TCP on
 * ADMIN_HOST:ADMIN_PORT only when ADMIN_TOKEN is set (every request must carry it), and in
 * embedded mode a Unix socket inside DATA_DIR, mode 0600, for the CLI (the file mode is its
 * access control). The server holds DATA_DIR's lock, so a socket file already there is stale.
 */
export async function startAdminListeners(config: Config, db: DatabaseExecutor, log: FastifyBaseLogger): Promise<AdminListeners> {
  const apps: FastifyInstance[] = [];
  const out: AdminListeners = { drains: [], close: async () => void (await Promise.all(apps.map((a) => a.close()))) };
  const loggerInstance = log.child({ listener: 'admin' });
  // What a killed process's import left in the temporary directory goes before anything is served.
  const stale = await removeStaleImportFiles();
  if (stale.length) loggerInstance.info({ removed: stale }, 'removed the temporary files of imports and backups that did not finish');
  // The public listener's kind of limits, fitted to imports that legitimately stream for minutes.
  const limits = {
    maxConnections: config.adminMaxConnections,
    headersTimeoutMs: config.adminHeadersTimeoutMs,
    bodyIdleTimeoutMs: config.adminBodyIdleTimeoutMs,
    // Held connections that never send a head (no token seen yet) cannot lock the token holder out.
    displaceHeadless: true,
    log: loggerInstance,
  };
  try {
    if (config.adminPort !== undefined && config.adminToken) {
      const tcp = await buildAdminApp(config, { db, token: config.adminToken, loggerInstance });
      apps.push(tcp);
      // Malformed requests and oversized headers get the contract's error shape, as on the public port.
      answerNodeErrorsInContractShape(tcp.server, limits);
      out.drains.push(trackConnections(tcp.server));
      out.address = await tcp.listen({ port: config.adminPort, host: config.adminHost });
    } else if (config.adminPort !== undefined) {
      log.warn('ADMIN_PORT is set without ADMIN_TOKEN (at least 32 characters): the operator API is not served on TCP');
    }
    if (!config.databaseUrl) {
      const path = adminSocketPath(config.dataDir);
      try {
        unlinkSync(path);
      } catch {
        /* none left behind */
      }
      const local = await buildAdminApp(config, { db, loggerInstance });
      apps.push(local);
      answerNodeErrorsInContractShape(local.server, limits);
      out.drains.push(trackConnections(local.server));
      try {
        await local.listen({ path });
        chmodSync(path, 0o600);
        out.socketPath = path;
      } catch (err) {
        // A path too long for a socket (about 100 bytes), say: the API still serves; operator commands then need it stopped.
        log.error({ path, reason: (err as Error).message }, 'operator socket not served; operator commands will need the server stopped');
      }
    }
  } catch (err) {
    await out.close();
    throw err;
  }
  return out;
}
