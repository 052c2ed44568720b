import type { DatabaseExecutor } from '../../domain/database.js';
import type { CommentReleases } from '../../domain/comments.js';
import type { TeamNames } from '../../domain/pulses.js';

export type { App } from '../../http/types.js';

/** What route handlers may use; built once in buildApp. */
export interface RouteDeps {
  db: DatabaseExecutor;
  comments: CommentReleases;
  teamNames: TeamNames;
  now: () => Date;
  idempotencyRetentionHours: number;
}
