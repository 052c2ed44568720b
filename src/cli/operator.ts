import { createReadStream, statSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { connect } from 'node:net';
import { createInterface } from 'node:readline';
import { pipeline } from 'node:stream/promises';
import { trustedAdminSocket } from '../admin/socket.js';
import { loadConfig, type Config } from '../config.js';
import type { ImportProgress, ImportSummary } from '../domain/import.js';
import { withDatabase } from './db.js';
import { CliError } from './errors.js';

/**
 * The CLI's operator commands are the operator API's other face (CONTRACT.md section 10): each
 * one is a request to that API. With an embedded server running (it holds DATA_DIR and serves
 * the API on the socket inside it) the request goes through that socket, so nothing needs the
 * server stopped; otherwise the CLI opens the database itself and answers the same request with
 * the same app in this process. Either way the same routes call the same domain operations.
 */
export interface Operator {
  readonly via: 'socket' | 'direct';
  call<T = unknown>(method: 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE', path: string, body?: unknown): Promise<T>;
}

const errorOf = (status: number, text: string): CliError => {
  try {
    const body = JSON.parse(text) as { error?: { message?: string } };
    if (body.error?.message) return new CliError(body.error.message);
  } catch {
    /* not JSON */
  }
  return new CliError(`the operator API answered ${status}`);
};

/** Whether a server answers on the socket (a stale socket file of a crashed server does not). */
export function socketAnswers(path: string): Promise<boolean> {
  return new Promise((resolve) => {
    const s = connect(path);
    s.once('connect', () => {
      s.destroy();
      resolve(true);
    });
    s.once('error', () => resolve(false));
  });
}

function socketRequest(
  socketPath: string,
  method: string,
  path: string,
  opts: { body?: string | NodeJS.ReadableStream; headers?: Record<string, string | number> },
  onResponse: (status: number, res: NodeJS.ReadableStream) => Promise<unknown>,
): Promise<unknown> {
  return new Promise((resolve, reject) => {
    let answered = false;
    const req = httpRequest({ socketPath, method, path, headers: opts.headers }, (res) => {
      answered = true;
      // An answer before the whole body was sent is a refusal (a file over a limit): stop sending.
      if (typeof opts.body === 'object') (opts.body as NodeJS.ReadableStream & { destroy(): void }).destroy();
      onResponse(res.statusCode ?? 0, res).then(resolve, reject);
    });
    req.on('error', (err) => {
      // Once the server has answered, its answer says what happened (the connection then closes under the upload).
      if (!answered) reject(new CliError(`the running server's operator socket ${socketPath} failed: ${err.message}`));
    });
    if (opts.body === undefined) req.end();
    else if (typeof opts.body === 'string') req.end(opts.body);
    else opts.body.pipe(req);
  });
}

async function readAll(res: NodeJS.ReadableStream): Promise<string> {
  let text = '';
  for await (const chunk of res) text += chunk;
  return text;
}

function socketOperator(socketPath: string): Operator {
  return {
    via: 'socket',
    async call<T>(method: string, path: string, body?: unknown) {
      const payload = body === undefined ? undefined : JSON.stringify(body);
      return (await socketRequest(
        socketPath,
        method,
        path,
        { body: payload, headers: payload === undefined ? {} : { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) } },
        async (status, res) => {
          const text = await readAll(res);
          if (status >= 400) throw errorOf(status, text);
          return JSON.parse(text) as T;
        },
      )) as T;
    },
  };
}

/**
 * The running embedded server's socket, when one answers (never in PostgreSQL mode). A socket or
 * DATA_DIR of another user is refused before connecting: its owner could answer in the server's place.
 */
export async function runningServerSocket(config: Config): Promise<string | null> {
  if (config.databaseUrl) return null;
  const path = trustedAdminSocket(config.dataDir);
  return path && (await socketAnswers(path)) ? path : null;
}

/**
 * The client address of the CLI's in-process requests (the operator on this host): what the audit
 * log records for them, and for the one operation the CLI runs on the domain directly (import-pulses
 * without a server). Over the socket there is no address.
 */
export const IN_PROCESS_ADDRESS = '127.0.0.1';

export async function withOperator<T>(fn: (op: Operator) => Promise<T>): Promise<T> {
  const config = loadConfig();
  const socket = await runningServerSocket(config);
  if (socket) return fn(socketOperator(socket));
  return withDatabase(async (db) => {
    // Loaded only for a direct operation: commands through the socket or on the domain start faster.
    const { buildAdminApp } = await import('../admin/app.js');
    const app = await buildAdminApp(config, { db, compileOnFirstUse: true });
    try {
      return await fn({
        via: 'direct',
        async call<R>(method: 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE', path: string, body?: unknown) {
          const res = await app.inject({ method, url: path, remoteAddress: IN_PROCESS_ADDRESS, ...(body === undefined ? {} : { payload: body as object }) });
          if (res.statusCode >= 400) throw errorOf(res.statusCode, res.body);
          return res.json() as R;
        },
      });
    } finally {
      await app.close();
    }
  });
}

export class RemoteImportFailed extends CliError {
  constructor(
    message: string,
    readonly summary?: ImportSummary,
  ) {
    super(message);
  }
}

/**
 * `import-pulses` through the running server: the file is streamed as the body; the server runs
 * the importer (one transaction) and streams back progress lines, then the summary.
 */
export async function importThroughSocket(
  socketPath: string,
  opts: { orgId: string; file: string; format: 'ndjson' | 'csv'; onError: 'abort' | 'skip'; progress: ImportProgress },
): Promise<ImportSummary> {
  const size = statSync(opts.file).size;
  const query = new URLSearchParams({ format: opts.format, onError: opts.onError });
  const path = `/admin/v1/organizations/${encodeURIComponent(opts.orgId)}/pulses/import?${query}`;
  return (await socketRequest(
    socketPath,
    'POST',
    path,
    {
      body: createReadStream(opts.file),
      headers: { 'content-type': opts.format === 'csv' ? 'text/csv' : 'application/x-ndjson', 'content-length': size },
    },
    async (status, res) => {
      if (status >= 400) throw errorOf(status, await readAll(res));
      let outcome: { summary?: ImportSummary; error?: { message: string } } | undefined;
      for await (const text of createInterface({ input: res as NodeJS.ReadableStream & AsyncIterable<string>, crlfDelay: Infinity })) {
        if (!text.trim()) continue;
        const msg = JSON.parse(text) as {
          progress?: { bytes: number; total: number; rows: number; moved?: number; staged?: number };
          summary?: ImportSummary;
          error?: { message: string };
        };
        const p = msg.progress;
        if (p) opts.progress(p.bytes, p.total, p.rows, p.staged === undefined ? undefined : { moved: p.moved ?? 0, staged: p.staged });
        else outcome = msg;
      }
      if (!outcome) throw new CliError('the server ended the import without an outcome; nothing was written');
      if (outcome.error) throw new RemoteImportFailed(outcome.error.message, outcome.summary);
      return outcome.summary!;
    },
  )) as ImportSummary;
}

/** `backup FILE` through the running server: the snapshot is the answer's body, written to `out` as it comes. */
export async function backupThroughSocket(socketPath: string, out: NodeJS.WritableStream): Promise<void> {
  await socketRequest(socketPath, 'POST', '/admin/v1/backup', {}, async (status, res) => {
    if (status >= 400) throw errorOf(status, await readAll(res));
    await pipeline(res, out);
  });
}

/** A GET through the running server whose answer is a file (an export): each chunk is handed to `take` as it comes. */
export async function downloadThroughSocket(socketPath: string, path: string, take: (chunk: Buffer) => Promise<void>): Promise<void> {
  await socketRequest(socketPath, 'GET', path, {}, async (status, res) => {
    if (status >= 400) throw errorOf(status, await readAll(res));
    for await (const chunk of res) await take(Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk as string));
  });
}
