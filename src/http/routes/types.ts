import type { FastifyBaseLogger, FastifyInstance, RawReplyDefaultExpression, RawRequestDefaultExpression, RawServerDefault } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { DatabaseExecutor } from '../../domain/database.js';
import type { CommentReleases } from '../../domain/comments.js';
import type { TeamNames } from '../../domain/pulses.js';

export type App = FastifyInstance<RawServerDefault, RawRequestDefaultExpression, RawReplyDefaultExpression, FastifyBaseLogger, TypeBoxTypeProvider>;

/** What route handlers may use; built once in buildApp. */
export interface RouteDeps {
  db: DatabaseExecutor;
  comments: CommentReleases;
  teamNames: TeamNames;
  now: () => Date;
  idempotencyRetentionHours: number;
}
