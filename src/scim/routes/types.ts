import type { DatabaseExecutor } from '../../domain/database.js';

export interface ScimDeps {
  db: DatabaseExecutor;
  now: () => Date;
  /** `PUBLIC_BASE_URL` (else the listener's) + `/scim/v2`: every `location` and `$ref`. */
  baseUrl: string;
  bodyLimitBytes: number;
  bulkMaxOperations: number;
  maxResults: number;
}
