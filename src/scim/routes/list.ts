import type { FastifyReply, FastifyRequest } from 'fastify';
import { ScimProblem } from '../../domain/scim-roster.js';
import { applyFilter, lookupOf, parseFilter } from '../filter.js';
import { project, URN, type Json } from '../resources.js';
import type { ScimListQuery, ScimResourceQuery } from '../schemas.js';

export const SCIM_JSON = 'application/scim+json; charset=utf-8';

/**
 * A query of a resource type (RFC 7644 section 3.4.2): without a filter, one page read from the
 * database; with one, the indexed look-up it starts with (or every resource), tested whole, then
 * paged. `startIndex` is 1-based; `count` 0-`maxResults`.
 */
export async function listResponse<T>(
  q: ScimListQuery,
  opts: {
    maxResults: number;
    core: string;
    lookups: Record<string, string>;
    lookup: (by: string, value: string) => Promise<T[]>;
    all: () => Promise<T[]>;
    page: (offset: number, limit: number) => Promise<{ total: number; rows: T[] }>;
    render: (row: T) => Json;
  },
): Promise<Json> {
  const startIndex = Math.max(1, q.startIndex ?? 1);
  const count = Math.min(opts.maxResults, Math.max(0, q.count ?? 100));
  const filter = parseFilter(q.filter);
  let total: number;
  let rows: Json[];
  if (!filter) {
    const page = await opts.page(startIndex - 1, count);
    total = page.total;
    rows = page.rows.map(opts.render);
  } else {
    const at = lookupOf(filter, opts.lookups);
    const candidates = at ? await opts.lookup(at.by, at.value) : await opts.all();
    const matched = applyFilter(candidates.map(opts.render), filter);
    total = matched.length;
    rows = matched.slice(startIndex - 1, startIndex - 1 + count);
  }
  const Resources = rows.map((r) => project(r, q.attributes, q.excludedAttributes, opts.core));
  return { schemas: [URN.list], totalResults: total, startIndex, itemsPerPage: Resources.length, Resources };
}

/** One resource: its ETag, a 304 for a matching If-None-Match, the attributes asked for. */
export function sendResource(
  request: FastifyRequest<{ Querystring?: ScimResourceQuery }>,
  reply: FastifyReply,
  resource: Json,
  core: string,
  status = 200,
): Json | FastifyReply {
  const version = (resource.meta as { version: string }).version;
  reply.header('etag', version);
  reply.type(SCIM_JSON);
  const noneMatch = request.headers['if-none-match'];
  if (request.method === 'GET' && typeof noneMatch === 'string' && noneMatch.split(',').some((t) => t.trim() === version || t.trim() === '*')) {
    return reply.code(304).send();
  }
  reply.code(status);
  const q = (request.query ?? {}) as ScimResourceQuery;
  return project(resource, q.attributes, q.excludedAttributes, core);
}

export function requireSchema(body: { schemas?: unknown }, urn: string): void {
  const schemas = body.schemas;
  if (schemas !== undefined && (!Array.isArray(schemas) || !schemas.some((s) => typeof s === 'string' && s.toLowerCase() === urn.toLowerCase()))) {
    throw new ScimProblem(400, 'invalidSyntax', `'schemas' must hold ${urn}.`);
  }
}

export const ifMatchOf = (request: FastifyRequest): string | undefined => {
  const h = request.headers['if-match'];
  return typeof h === 'string' ? h : undefined;
};
