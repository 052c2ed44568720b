import crypto, { createHash } from 'node:crypto';
import { promisify } from 'node:util';
import zlib from 'node:zlib';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { named } from '../../http/plugin.js';

/** Answers smaller than this are sent as they are: compressing them saves less than it costs. */
export const COMPRESS_MIN_BYTES = 1024;

const gzip = promisify(zlib.gzip);
const brotli = promisify(zlib.brotliCompress);

type Coding = 'br' | 'gzip';

/**
 * Bodies up to this size are compressed synchronously. zlib's asynchronous call builds a stream and
 * crosses to the thread pool: 220-270 µs of CPU for an 8 KB page against 45-75 µs in place (gzip 6,
 * measured on this 2-core machine), which made the gzip page cost more than the page itself. In
 * place, a 64 KB body holds the event loop for about half a millisecond; larger ones go to the pool.
 */
export const COMPRESS_IN_PLACE_MAX_BYTES = 64 * 1024;

const brotliOptions = (size: number) => ({
  params: {
    [zlib.constants.BROTLI_PARAM_QUALITY]: 4,
    [zlib.constants.BROTLI_PARAM_SIZE_HINT]: size,
    [zlib.constants.BROTLI_PARAM_MODE]: zlib.constants.BROTLI_MODE_TEXT,
  },
});

/** gzip level 6 (zlib's default) and brotli quality 4: about 0.2 ms for a 33 KB page of 200 pulses, 6-7 % of its size. */
const GZIP_OPTIONS = { level: 6 };
const ENCODERS: Record<Coding, { inPlace(body: Buffer): Buffer; pooled(body: Buffer): Promise<Buffer> }> = {
  gzip: { inPlace: (body) => zlib.gzipSync(body, GZIP_OPTIONS), pooled: (body) => gzip(body, GZIP_OPTIONS) },
  br: { inPlace: (body) => zlib.brotliCompressSync(body, brotliOptions(body.length)), pooled: (body) => brotli(body, brotliOptions(body.length)) },
};

/**
 * The coding to use for an `Accept-Encoding` header (RFC 9110 12.5.3): the highest q-value among
 * br and gzip (`*` stands for both), brotli on a tie; null for identity.
 */
export function negotiateEncoding(header: string | undefined): Coding | null {
  if (!header) return null;
  const q: Partial<Record<Coding | '*', number>> = {};
  for (const part of header.split(',')) {
    const [name, ...params] = part.trim().toLowerCase().split(';');
    let weight = 1;
    for (const p of params) {
      const m = /^\s*q\s*=\s*([01](?:\.\d{0,3})?)\s*$/.exec(p);
      if (m) weight = Number(m[1]);
    }
    if (name === 'br' || name === 'gzip' || name === '*') q[name] = weight;
    else if (name === 'x-gzip' && q.gzip === undefined) q.gzip = weight;
  }
  const weight = (c: Coding) => q[c] ?? q['*'] ?? 0;
  const best = weight('br') >= weight('gzip') ? 'br' : 'gzip';
  return weight(best) > 0 ? best : null;
}

/** One-shot hashing (Node 20.12+) skips the Hash object; older Node 20 releases take the long way. */
const oneShot = (crypto as { hash?: (alg: string, data: string | Buffer, enc: 'base64url') => string }).hash;

/** A strong validator of the identity representation: a hash of the exact bytes (a string is hashed as its UTF-8). */
export const etagOf = (body: string | Buffer) =>
  (oneShot ? oneShot('sha256', body, 'base64url') : createHash('sha256').update(body).digest('base64url')).slice(0, 27);

/** The entity-tag of one representation: a compressed one is a different representation, so it gets its own tag. */
const tagFor = (hash: string, coding: Coding | null) => `"${hash}${coding ? `-${coding}` : ''}"`;

/**
 * If-None-Match (RFC 9110 13.1.2) uses the weak comparison: `W/` is ignored, and a tag of any
 * coding of the same bytes matches, because the client's copy is still current.
 */
export function noneMatchHits(header: string | undefined, hash: string): boolean {
  if (!header) return false;
  if (header.trim() === '*') return true;
  for (const raw of header.split(',')) {
    const m = /^\s*(?:W\/)?"([^"]*)"\s*$/.exec(raw);
    if (m && m[1].replace(/-(?:gzip|br)$/, '') === hash) return true;
  }
  return false;
}

const VERSIONED = /^\/(?:api\/)?v1\//;
const COMPRESSIBLE = /^(?:application\/(?:[\w.+-]*\+)?json|text\/|application\/javascript)/;

/**
 * What the caller may keep (docs/decisions.md, issue 21). Per-organization answers are
 * `private, no-cache`: a browser or the caller's own cache may keep them, never a shared cache,
 * and revalidates every use with If-None-Match (a 304 costs no body). Comments are `no-store`:
 * employees' own words are not written to any cache's disk, and a comment that leaves the
 * answers (moderation) must not live on in a copy.
 */
export function cacheControlFor(url: string): string | null {
  if (!VERSIONED.test(url) || url.endsWith('/openapi.json')) return null;
  return url.endsWith('/comments') ? 'no-store' : 'private, no-cache';
}

function addVary(reply: FastifyReply, field: string) {
  const vary = reply.getHeader('vary');
  const list = typeof vary === 'string' ? vary.split(',').map((v) => v.trim()) : [];
  if (list.includes('*') || list.some((v) => v.toLowerCase() === field.toLowerCase())) return;
  reply.header('vary', [...list.filter(Boolean), field].join(', '));
}

/**
 * A callback hook: the work is synchronous (about 5-15 µs, the hash of the body most of it), and
 * so is compression up to COMPRESS_IN_PLACE_MAX_BYTES; only a larger body's compression waits.
 */
function onSend(request: FastifyRequest, reply: FastifyReply, payload: unknown, done: (err: Error | null, payload?: unknown) => void) {
  // Streams (the static files of /docs) keep their own validators and encoding.
  if ((typeof payload !== 'string' && !Buffer.isBuffer(payload)) || reply.getHeader('content-encoding')) return done(null, payload);
  addVary(reply, 'Accept-Encoding');
  const accept = request.headers['accept-encoding'];
  const size = accept === undefined ? 0 : typeof payload === 'string' ? Buffer.byteLength(payload) : payload.length;
  const coding = size >= COMPRESS_MIN_BYTES && COMPRESSIBLE.test(String(reply.getHeader('content-type') ?? '')) ? negotiateEncoding(accept) : null;

  if ((request.method === 'GET' || request.method === 'HEAD') && reply.statusCode === 200) {
    const policy = cacheControlFor(request.routeOptions.url ?? '');
    if (policy) reply.header('cache-control', policy);
    if (!reply.hasHeader('etag') && request.routeOptions.config.validators !== false) {
      const hash = etagOf(payload);
      reply.header('etag', tagFor(hash, coding));
      // HEAD gets the validators only: Fastify's HEAD handling needs the body it measures.
      if (request.method === 'GET' && noneMatchHits(request.headers['if-none-match'], hash)) {
        // The headers of the 200 it stands for (ETag, Cache-Control, Vary, rate limits,
        // X-Request-Id), without the body or the body's own metadata.
        reply.code(304);
        reply.removeHeader('content-type');
        reply.removeHeader('content-length');
        return done(null, null);
      }
    }
  }
  if (!coding) return done(null, payload);
  reply.header('content-encoding', coding);
  reply.removeHeader('content-length');
  const body = typeof payload === 'string' ? Buffer.from(payload) : payload;
  if (body.length > COMPRESS_IN_PLACE_MAX_BYTES) return void ENCODERS[coding].pooled(body).then((b) => done(null, b), done);
  let compressed: Buffer;
  try {
    compressed = ENCODERS[coding].inPlace(body);
  } catch (err) {
    return done(err as Error);
  }
  done(null, compressed);
}

declare module 'fastify' {
  interface FastifyContextConfig {
    /**
     * False: this route's answers get no ETag and no 304 (a face's own choice, set on its routes:
     * the console's pages are no-store and hold the session's token, so no cache can revalidate
     * them, and hashing a year's overview cost more than its queries).
     */
    validators?: false;
  }
}

/**
 * HTTP caching and compression for every answer of the public listener (issue 21): a strong `ETag`
 * on every GET 200 (and 304 for a matching `If-None-Match`) of a route that does not opt out
 * (`config.validators: false`), `Cache-Control` of the versioned API, and gzip or brotli for
 * answers of 1 KiB or more when the client asks (`Vary: Accept-Encoding`). Registered on the
 * root instance before the routes, so it sees the final bytes of every route.
 */
export const caching = named('caching', (app) => {
  app.addHook('onSend', onSend);
});
