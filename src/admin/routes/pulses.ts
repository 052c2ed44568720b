import { createWriteStream } from 'node:fs';
import { lstat, mkdtemp, readdir, rm } from 'node:fs/promises';
import type { IncomingMessage } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { operatorActor } from '../../domain/audit.js';
import { ingestPulses } from '../../domain/ingest.js';
import { ImportAborted, importPulses, LineLengthGuard, type ImportSummary } from '../../domain/import.js';
import { requireLiveOrg } from '../../domain/orgs.js';
import { moderatePulse } from '../../domain/moderation.js';
import { requireJsonObject, toApiError } from '../../http/plugins/index.js';
import { ApiError } from '../../contract/errors.js';
import { AdminNoQuerySchema, OrgIdParamsSchema, OrgItemParamsSchema, adminResponses } from '../../contract/schemas/admin-common.js';
import { ImportQuerySchema, IngestBodySchema, IngestResultSchema, ModerateBodySchema, ModerationResultSchema } from '../../contract/schemas/admin-pulses.js';
import { Type } from 'typebox';
import type { AdminRouteDeps, App } from './types.js';

/** 1,000 pulses with comments of up to 10,000 characters. */
const INGEST_BODY_LIMIT = 16 * 1024 * 1024;

export function registerPulseRoutes(app: App, { db, now, config }: AdminRouteDeps) {
  app.post(
    '/organizations/:orgId/pulses',
    {
      bodyLimit: INGEST_BODY_LIMIT,
      preValidation: requireJsonObject,
      schema: {
        operationId: 'ingestPulses',
        summary: 'Ingest 1-1000 pulses in one transaction',
        description:
          "Idempotent by pulse id: a pulse whose id exists with the same fields is left as it is (counted in unchanged; its moderation status is the moderation's and is not compared); with other fields the batch is 409 pulse_conflict naming it. A batch that breaks a rule writes nothing and names the first bad value (pulses[3].level). Written through the same path as import-pulses: rollups, frozen weeks, alerts and webhooks see these pulses as imported ones.",
        tags: ['pulses'],
        querystring: AdminNoQuerySchema,
        params: OrgIdParamsSchema,
        body: IngestBodySchema,
        response: adminResponses(IngestResultSchema, 'What the batch did.', {
          conflict: 'pulse_conflict: a pulse of the batch has the id of an existing pulse with other fields; nothing was written.',
        }),
      },
    },
    async (request) => ingestPulses(db, request.params.orgId, request.body.pulses, operatorActor(request.ip), now()),
  );

  app.patch(
    '/organizations/:orgId/pulses/:pulseId',
    {
      preValidation: requireJsonObject,
      schema: {
        operationId: 'moderatePulse',
        summary: 'Set the moderation status of a pulse',
        description:
          'Changes the status a pulse has now; GET /v1/pulses keeps showing the status the pulse arrived with until a release of its week covers it, then the status it had at that release, so a moderation never shows there. A released comment leaves every answer while its pulse is not CLEAN and returns when it is CLEAN again (docs/privacy.md).',
        tags: ['pulses'],
        querystring: AdminNoQuerySchema,
        params: OrgItemParamsSchema('pulseId', 'Pulse id.'),
        body: ModerateBodySchema,
        response: adminResponses(ModerationResultSchema, 'The status before and after.'),
      },
    },
    async (request) => moderatePulse(db, request.params.orgId, request.params.pulseId, request.body.moderationStatus, operatorActor(request.ip), now()),
  );

  // The file import of `climate-pulse import-pulses` while an embedded server holds the database:
  // the file is the body (NDJSON or CSV), the importer runs here, in one transaction, and the answer
  // streams its progress as NDJSON lines, then the summary (docs/decisions.md, issue 18). The body
  // is bounded (IMPORT_MAX_BYTES, IMPORT_MAX_LINE_BYTES) as it arrives, before any answer is sent,
  // so a refusal is a plain 400; its temporary copy goes whatever happens (docs/security.md).
  app.register(async (scope: App) => {
    scope.addContentTypeParser(['application/x-ndjson', 'text/csv'], (_request, payload, done) => done(null, payload));
    scope.post(
      '/organizations/:orgId/pulses/import',
      {
        schema: {
          operationId: 'importPulses',
          summary: 'Import a file of pulses (NDJSON or CSV) in one transaction',
          description:
            'The body is the file (Content-Type application/x-ndjson or text/csv), at most IMPORT_MAX_BYTES (400 payload_too_large), with no NDJSON line or CSV record over IMPORT_MAX_LINE_BYTES (400 invalid_request naming its line). The answer is NDJSON: {"progress":{bytes,total,rows}} lines while the import runs (with moved and staged while rows out of time order move in, the last phase), then {"summary":{...}} or {"error":{code,message},"summary"?:{...}}; nothing is written unless the last line is a summary.',
          tags: ['pulses'],
          querystring: ImportQuerySchema,
          params: OrgIdParamsSchema,
          response: adminResponses(Type.String({ description: 'NDJSON lines.' }), 'Progress lines, then the outcome.', { mediaType: 'application/x-ndjson' }),
        },
      },
      async (request, reply) => {
        const { orgId } = request.params;
        const type = String(request.headers['content-type'] ?? '')
          .split(';')[0]
          .trim()
          .toLowerCase();
        if (type !== 'application/x-ndjson' && type !== 'text/csv') {
          throw new ApiError('invalid_json', "Content-Type must be 'application/x-ndjson' or 'text/csv'.");
        }
        if (Number(request.headers['content-length'] ?? 0) > config.importMaxBytes) throw refuse(request.raw, tooLarge(config.importMaxBytes));
        await requireLiveOrg(db, orgId);
        const format = request.query.format ?? (type === 'text/csv' ? 'csv' : 'ndjson');
        const dir = await mkdtemp(join(tmpdir(), `${TEMP_PREFIX}${process.pid}-`)); // 0700
        const removeDir = () => rm(dir, { recursive: true, force: true });
        const file = join(dir, `upload.${format}`);
        try {
          await receive(request.raw, file, new LineLengthGuard(format, config.importMaxLineBytes), config.importMaxBytes);
          reply.hijack();
          const out = reply.raw;
          // A client gone before the outcome: the import stops and writes nothing.
          const cancel = new AbortController();
          out.once('close', () => out.writableFinished || cancel.abort(new Error('the client closed the connection')));
          out.writeHead(200, {
            'content-type': 'application/x-ndjson',
            'x-request-id': request.id,
            'x-content-type-options': 'nosniff',
            'cache-control': 'no-store',
          });
          const line = (o: unknown) => out.write(`${JSON.stringify(o)}\n`);
          let outcome: unknown;
          try {
            const summary = await importPulses(
              db,
              {
                orgId,
                file,
                format,
                onError: request.query.onError ?? 'abort',
                maxLineBytes: config.importMaxLineBytes,
                signal: cancel.signal,
                progress: (bytes, total, rows, moving) => line({ progress: { bytes, total, rows, ...moving } }),
              },
              operatorActor(request.ip),
              now(),
            );
            outcome = { summary };
          } catch (err) {
            if (cancel.signal.aborted) request.log.info({ orgId }, 'import stopped: the client closed the connection; nothing was written');
            else {
              const apiError = toApiError(err as Parameters<typeof toApiError>[0]);
              if (apiError.statusCode >= 500) request.log.error({ err }, 'import failed');
              // An import refused in abort mode also lists its bad rows.
              outcome = {
                error: { code: apiError.code, message: apiError.message },
                ...(err instanceof ImportAborted ? { summary: err.summary satisfies ImportSummary } : {}),
              };
            }
          }
          await removeDir(); // before the outcome: a client that has it finds nothing left behind
          if (outcome) line(outcome);
          out.end();
        } finally {
          await removeDir();
        }
      },
    );
  });
}

/**
 * Every import's temporary directory, and every backup's (src/db/backup.ts), is named after its
 * process, so a later start knows whose it was.
 */
const TEMP_PREFIX = 'cp-import-';
const TEMP_DIR = /^(?:cp-import|climate-pulse-backup)-(?:(\d+)-)?[A-Za-z0-9]{6}$/;

/** How long a refused upload is still read (and dropped) after the answer, so the client can read it. */
const LINGER_MS = 1_000;

const tooLarge = (max: number) => new ApiError('payload_too_large', `The file is larger than ${max} bytes (IMPORT_MAX_BYTES); nothing was written.`);

/**
 * The answer to an upload refused before its end. The rest of the body is read and dropped for a
 * moment, then the connection is closed: closing at once (Connection: close) would reset it under
 * a client still sending, which then often loses the answer (RFC 9112, section 9.6).
 */
function refuse(body: IncomingMessage, err: ApiError): ApiError {
  body.resume();
  setTimeout(() => body.complete || body.socket?.destroy(), LINGER_MS).unref();
  return err;
}

/**
 * Copies the upload into `file`, checking the caps as bytes arrive: more than maxBytes, or a line
 * (record) over the guard's cap, stops it there with a 400; nothing reads a longer line.
 */
function receive(body: IncomingMessage, file: string, guard: LineLengthGuard, maxBytes: number): Promise<void> {
  const out = createWriteStream(file, { mode: 0o600 });
  let received = 0;
  return new Promise<void>((resolve, reject) => {
    let settled = false;
    const settle = (err?: Error) => {
      if (settled) return;
      settled = true;
      body.off('data', onData);
      if (!err) return void out.end(() => resolve());
      out.destroy();
      reject(err instanceof ApiError ? refuse(body, err) : err);
    };
    const onData = (chunk: Buffer) => {
      received += chunk.length;
      try {
        if (received > maxBytes) throw tooLarge(maxBytes);
        guard.push(chunk);
      } catch (err) {
        return settle(err as Error);
      }
      if (!out.write(chunk)) {
        body.pause();
        out.once('drain', () => settled || body.resume());
      }
    };
    const closed = () => settle(new ApiError('invalid_request', 'The connection closed before the file arrived whole; nothing was written.'));
    body.on('data', onData);
    body.once('end', () => settle());
    body.once('close', closed);
    body.once('error', closed);
    out.once('error', (err) => settle(err));
  });
}

/** A directory named before process ids whose upload has not changed for this long is stale. */
const UNNAMED_STALE_MS = 60 * 60_000;

/**
 * Removes the temporary directories of imports and backups whose process is gone (killed midway,
 * so its `finally` never ran), and those of the naming before process ids once their upload has not
 * changed for an hour (a process of an earlier version may still be importing one). Directories
 * of live processes (other workers, other servers on this host) are left alone, as is anything
 * not ours.
 */
export async function removeStaleImportFiles(dir = tmpdir()): Promise<string[]> {
  const removed: string[] = [];
  const uid = process.getuid?.();
  for (const name of await readdir(dir).catch(() => [] as string[])) {
    const m = TEMP_DIR.exec(name);
    if (!m || (m[1] && isAlive(Number(m[1])))) continue;
    try {
      const path = join(dir, name);
      const st = await lstat(path);
      if (!st.isDirectory() || (uid !== undefined && st.uid !== uid)) continue;
      if (!m[1] && (await lastChange(path)) > Date.now() - UNNAMED_STALE_MS) continue;
      await rm(path, { recursive: true, force: true });
      removed.push(name);
    } catch {
      /* gone meanwhile, or not ours to remove */
    }
  }
  return removed;
}

async function lastChange(path: string): Promise<number> {
  let latest = (await lstat(path)).mtimeMs;
  for (const entry of await readdir(path)) latest = Math.max(latest, (await lstat(join(path, entry))).mtimeMs);
  return latest;
}

function isAlive(pid: number): boolean {
  if (pid === process.pid) return true;
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM'; // alive, another user's
  }
}
