import type { Config } from '../config.js';
import type { DatabaseExecutor } from './executor.js';
import { PgExecutor } from './pg.js';
import { lockDataDir } from './data-dir-lock.js';
import { PgliteExecutor } from './pglite.js';

export async function openDatabase(config: Pick<Config, 'databaseUrl' | 'dataDir' | 'dbPoolMax' | 'dbStatementTimeoutMs'>): Promise<DatabaseExecutor> {
  if (config.databaseUrl) {
    return new PgExecutor({
      connectionString: config.databaseUrl,
      max: config.dbPoolMax,
      statementTimeoutMs: config.dbStatementTimeoutMs,
    });
  }
  // Taken before PGlite touches the directory: a second process stops here and changes nothing.
  const release = lockDataDir(config.dataDir);
  try {
    const db = await PgliteExecutor.open(config.dataDir);
    const close = db.close.bind(db);
    // Released at close, or at exit for a process that never closes it; the exit listener goes with
    // the close, so that a process opening many (the CLI run in-process by the tests) keeps none.
    const onExit = () => release();
    process.once('exit', onExit);
    db.close = async () => {
      try {
        await close();
      } finally {
        process.removeListener('exit', onExit);
        release();
      }
    };
    return db;
  } catch (err) {
    release();
    throw err;
  }
}
