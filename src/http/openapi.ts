import swagger from '@fastify/swagger';
import type { FastifyInstance } from 'fastify';

export const API_PREFIX = '/v1';
export const ALIAS_PREFIX = '/api/v1';

/** A server entry; `x-internal: false` declares it public (OWASP API9, inventory). */
const server = (url: string, description: string) => ({ url, description, 'x-internal': false });

/**
 * The OpenAPI 3.1 document is generated from the route schemas themselves. Paths are
 * written relative to the `/v1` server; the `/api/v1` alias is a second server entry.
 */
export async function registerOpenApi(app: FastifyInstance) {
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Climate Pulse API',
        version: '1.0.0',
        description:
          'Per-organization access to workplace mood records ("pulses"), statistics, anonymous comments, alerts, teams and improvement actions. Every response holds only data of the organization that owns the API key.',
      },
      servers: [
        server(API_PREFIX, 'Production API, versioned base path (relative to the host serving this document).'),
        server(ALIAS_PREFIX, 'Production API, alias of /v1.'),
      ],
      components: {
        securitySchemes: {
          bearerAuth: { type: 'http', scheme: 'bearer', description: 'An API key of the organization: `Authorization: Bearer cp_live_...`.' },
        },
      },
      security: [{ bearerAuth: [] }],
      tags: [
        { name: 'pulses' }, { name: 'statistics' }, { name: 'comments' }, { name: 'alerts' },
        { name: 'organization' }, { name: 'teams' }, { name: 'actions' },
      ],
    },
    refResolver: { buildLocalReference: (json, _baseUri, _fragment, i) => String(json.$id ?? `def-${i}`) },
    transform: ({ schema, url }) => {
      const hidden = !url.startsWith(API_PREFIX + '/') || url.endsWith('/openapi.json');
      if (hidden) return { schema: { ...schema, hide: true }, url };
      return { schema: renameKeys(schema, DOLLAR_ID, STAND_IN) as typeof schema, url: url.slice(API_PREFIX.length) };
    },
    transformObject: (documents) => renameKeys((documents as { openapiObject: object }).openapiObject, STAND_IN, DOLLAR_ID) as never,
  });
}

/**
 * Actions carry a property literally named `$id`. The schema resolver inside
 * @fastify/swagger would read it as a schema identifier, so the property is renamed to a
 * stand-in while the document is built and renamed back in the finished document.
 */
const DOLLAR_ID = '$id';
const STAND_IN = 'x-property-dollar-id';

function renameKeys(node: unknown, from: string, to: string): unknown {
  if (Array.isArray(node)) return node.map((n) => renameKeys(n, from, to));
  if (!node || typeof node !== 'object') return node;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(node)) {
    if (k === 'properties' && v && typeof v === 'object') {
      out[k] = Object.fromEntries(Object.entries(v).map(([p, s]) => [p === from ? to : p, renameKeys(s, from, to)]));
    } else if (k === 'required' && Array.isArray(v)) {
      out[k] = v.map((p) => (p === from ? to : p));
    } else {
      out[k] = renameKeys(v, from, to);
    }
  }
  return out;
}
