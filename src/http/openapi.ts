import swagger from '@fastify/swagger';
import type { FastifyInstance } from 'fastify';
import { named } from './plugin.js';

type Json = Record<string, unknown>;
type Doc = {
  paths?: Record<string, Record<string, Json>>;
  webhooks?: Record<string, Record<string, Json>>;
  components?: { schemas?: Record<string, unknown> };
};

/**
 * Named component schemas from the schemas' own `title`s: every schema object of the finished
 * document whose `title` is in `names` moves to `components.schemas[title]` and is replaced by
 * a `$ref` wherever it appears (inner ones first, so a page refers to its item). The code keeps
 * one TypeBox schema per shape, inline for validation and serialization; generated clients get
 * `Pulse`, `PulsePage`, ... Two different schemas with one title are a programming error.
 * Reusable by any document of this service.
 */
export function hoistNamedSchemas<T extends object>(doc: T, names: ReadonlySet<string>): T {
  const d = doc as Doc;
  const schemas: Record<string, unknown> = { ...(d.components?.schemas ?? {}) };
  const seen = new Map<string, string>();
  const visit = (node: unknown): unknown => {
    if (Array.isArray(node)) return node.map(visit);
    if (!node || typeof node !== 'object') return node;
    const out: Json = {};
    for (const [k, v] of Object.entries(node)) out[k] = k === 'example' || k === 'examples' || k === 'x-examples' ? v : visit(v);
    const title = out.title;
    if (typeof title !== 'string' || !names.has(title)) return out;
    const text = JSON.stringify(out);
    const before = seen.get(title);
    if (before !== undefined && before !== text) throw new Error(`OpenAPI: two different schemas are titled ${title}:\n${before}\n${text}`);
    seen.set(title, text);
    schemas[title] = out;
    return { $ref: `#/components/schemas/${title}` };
  };
  const paths = visit(d.paths ?? {}) as Doc['paths'];
  const webhooks = d.webhooks === undefined ? {} : { webhooks: visit(d.webhooks) as Doc['webhooks'] };
  const componentSchemas = visit(schemas) as Record<string, unknown>;
  // A component refers to itself only through others: keep its body, not a $ref to itself.
  for (const name of Object.keys(componentSchemas)) {
    const c = componentSchemas[name] as Json;
    if (c.$ref === `#/components/schemas/${name}`) componentSchemas[name] = schemas[name];
  }
  const sorted = Object.fromEntries(
    Object.keys(componentSchemas)
      .sort()
      .map((k) => [k, componentSchemas[k]]),
  );
  return { ...doc, paths, ...webhooks, components: { ...(d.components ?? {}), schemas: sorted } } as T;
}

type Transform = (schema: Json, url: string) => { schema: Json; url: string };

export interface OpenApiDocumentOptions {
  /** Routes under this prefix are documented; every other route (and the document itself) is hidden. */
  prefix: string;
  /** The document's own fields besides `openapi` and `paths`: info, servers, components, security, tags. */
  document: Json;
  /** Where the finished document is served (GET), with this Cache-Control when given. */
  servedAt: string[];
  cacheControl?: string;
  /** A documented route's schema and path as the document shows them. */
  transform?: Transform;
  /** The finished document, changed once (named components, webhooks). */
  transformObject?: (doc: Json) => Json;
}

/**
 * The one OpenAPI builder: each face that has a document (the public API, the operator API)
 * registers it with its own fields; the document comes from the route schemas themselves.
 */
export const openApiDocument = named<OpenApiDocumentOptions>('openapi-document', async (app: FastifyInstance, opts) => {
  const { transform, transformObject } = opts;
  await app.register(swagger, {
    openapi: { openapi: '3.1.0', ...opts.document },
    refResolver: { buildLocalReference: (json, _baseUri, _fragment, i) => String(json.$id ?? `def-${i}`) },
    transform: ({ schema, url }) => {
      const hidden = !url.startsWith(`${opts.prefix}/`) || url.endsWith('/openapi.json');
      if (hidden) return { schema: { ...schema, hide: true }, url };
      if (!transform) return { schema, url };
      const t = transform(schema as unknown as Json, url);
      return { schema: t.schema as unknown as typeof schema, url: t.url };
    },
    ...(transformObject ? { transformObject: (documents) => transformObject((documents as { openapiObject: Json }).openapiObject) as never } : {}),
  });
  for (const path of opts.servedAt) {
    app.get(path, { schema: { hide: true } }, async (_request, reply) => {
      if (opts.cacheControl) reply.header('cache-control', opts.cacheControl);
      return app.swagger();
    });
  }
});
