/** Options of the client's `If-None-Match` cache of GET answers. */
export interface EtagCacheOptions {
  /** How many answers to keep (least recently used go first; default 100). */
  maxEntries?: number;
}

interface Entry {
  etag: string;
  body: string;
  headers: [string, string][];
}

/**
 * Remembers the last GET answer per URL with its `ETag` and asks again with `If-None-Match`:
 * while nothing changed the server answers 304 without a body, and the remembered answer is
 * returned as the 200 it stands for (with the 304's fresh headers, rate limits included).
 * Answers marked `Cache-Control: no-store` (comments) are never kept. Memory only, per client.
 */
export class EtagCache {
  private readonly entries = new Map<string, Entry>();
  private readonly max: number;
  /** Answers served from the cache after a 304, for logging and tests. */
  hits = 0;

  constructor(opts: EtagCacheOptions = {}) {
    this.max = Math.max(1, opts.maxEntries ?? 100);
  }

  get size() {
    return this.entries.size;
  }

  clear() {
    this.entries.clear();
  }

  /** Wraps a `fetch`: GET requests go through the cache, everything else passes by. */
  wrap(inner: (request: Request) => Promise<Response>): (request: Request) => Promise<Response> {
    return async (request: Request) => {
      if (request.method !== 'GET') return inner(request);
      const key = request.url;
      const known = this.entries.get(key);
      if (known && !request.headers.has('if-none-match')) request.headers.set('if-none-match', known.etag);
      const response = await inner(request);
      if (response.status === 304 && known) {
        this.hits++;
        this.entries.delete(key);
        this.entries.set(key, known); // most recently used
        const headers = new Headers(known.headers);
        response.headers.forEach((value, name) => {
          headers.set(name, value);
        });
        return new Response(known.body, { status: 200, statusText: 'OK', headers });
      }
      const etag = response.headers.get('etag');
      const noStore = /(^|,)\s*no-store\s*(,|$)/i.test(response.headers.get('cache-control') ?? '');
      if (response.status !== 200 || !etag || noStore) {
        if (noStore) this.entries.delete(key);
        return response;
      }
      const body = await response.text();
      const headers: [string, string][] = [];
      response.headers.forEach((value, name) => {
        // The body is kept decoded: its length and coding are not those of the original bytes.
        if (name !== 'content-encoding' && name !== 'content-length') headers.push([name, value]);
      });
      this.entries.delete(key);
      this.entries.set(key, { etag, body, headers });
      while (this.entries.size > this.max) this.entries.delete(this.entries.keys().next().value!);
      return new Response(body, { status: response.status, statusText: response.statusText, headers: new Headers(headers) });
    };
  }
}
