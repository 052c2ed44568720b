import { loadConfig } from '../config.js';
import type { DatabaseExecutor } from '../db/executor.js';
import { migrate } from '../db/migrate.js';
import { openDatabase } from '../db/open.js';

/** Opens the configured database (taking the embedded-mode lock), migrates it, runs `fn`, closes it. */
export async function withDatabase<T>(fn: (db: DatabaseExecutor) => Promise<T>): Promise<T> {
  const db = await openDatabase(loadConfig());
  try {
    await migrate(db);
    return await fn(db);
  } finally {
    await db.close();
  }
}
