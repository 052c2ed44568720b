import { Type } from 'typebox';
import { AdminNoQuerySchema, adminResponses } from '../../contract/schemas/admin-common.js';
import { backupDatabase, requireBackupable } from '../../domain/backup.js';
import type { AdminRouteDeps, App } from './types.js';

/** `climate-pulse backup FILE` while an embedded server holds DATA_DIR: the snapshot comes through the socket. */
export function registerBackupRoutes(app: App, { db, config, now }: AdminRouteDeps) {
  app.post(
    '/backup',
    {
      schema: {
        operationId: 'backupDatabase',
        summary: 'A consistent backup of the embedded database (`climate-pulse backup FILE`)',
        description:
          'The answer is a gzipped tar of the data directory as one instant of the database, taken while it serves (requests wait only for the checkpoint that starts it; the files stream as they are read, with the WAL that replays the writes made meanwhile; a reader that takes nothing for a minute ends it), which `climate-pulse restore FILE` unpacks into a new DATA_DIR. It holds every secret of the service: keep it like the data directory. On PostgreSQL (DATABASE_URL) it is 400 invalid_request: use pg_dump.',
        tags: ['database'],
        querystring: AdminNoQuerySchema,
        response: adminResponses(Type.String({ description: 'The gzipped tar.' }), 'The backup.', { mediaType: 'application/gzip' }),
      },
    },
    async (request, reply) => {
      requireBackupable(db);
      reply.hijack();
      const out = reply.raw;
      out.writeHead(200, {
        'content-type': 'application/gzip',
        'x-request-id': request.id,
        'x-content-type-options': 'nosniff',
        'cache-control': 'no-store',
      });
      try {
        await backupDatabase(db, out, { secret: config.commentCursorSecret, releaseDelayHours: config.commentsReleaseDelayHours, now: now() });
      } catch (err) {
        // The status is sent: a backup cut short ends the connection without the closing chunk.
        request.log.error({ err }, 'backup failed');
        out.destroy(err as Error);
      }
    },
  );
}
