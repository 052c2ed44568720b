import type { Config } from '../config.js';
import type { DatabaseExecutor } from './executor.js';
import { PgExecutor } from './pg.js';
import { PgliteExecutor } from './pglite.js';

export async function openDatabase(config: Pick<Config, 'databaseUrl' | 'dataDir' | 'dbPoolMax' | 'dbStatementTimeoutMs'>): Promise<DatabaseExecutor> {
  if (config.databaseUrl) {
    return new PgExecutor({
      connectionString: config.databaseUrl,
      max: config.dbPoolMax,
      statementTimeoutMs: config.dbStatementTimeoutMs,
    });
  }
  return PgliteExecutor.open(config.dataDir);
}
