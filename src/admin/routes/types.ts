import type { Config } from '../../config.js';
import type { DatabaseExecutor } from '../../domain/database.js';

export type { App } from '../../http/types.js';

export interface AdminRouteDeps {
  db: DatabaseExecutor;
  now: () => Date;
  config: Config;
}
