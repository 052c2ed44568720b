import type { FastifyInstance } from 'fastify';
import { hoistNamedSchemas, openApiDocument } from '../http/openapi.js';
import { WEBHOOK_EVENT_SCHEMAS } from '../contract/schemas/webhook-events.js';

export const API_PREFIX = '/v1';
export const ALIAS_PREFIX = '/api/v1';

/** A server entry; `x-internal: false` declares it public (OWASP API9, inventory). */
const server = (url: string, description: string) => ({ url, description, 'x-internal': false });

type Json = Record<string, unknown>;
type Doc = {
  paths?: Record<string, Record<string, Json>>;
  webhooks?: Record<string, Record<string, Json>>;
  components?: { schemas?: Record<string, unknown> };
};

/** The titles of the public API's shapes that become named components (src/contract/schemas). */
export const PUBLIC_COMPONENTS = new Set([
  'Pulse',
  'PulsePage',
  'Stats',
  'DailyStats',
  'DailyStatsDay',
  'Comment',
  'CommentPage',
  'Alert',
  'AlertList',
  'Organization',
  'Action',
  'ActionStatus',
  'ActionList',
  'ActionId',
  'NewAction',
  'ActionChange',
  'Team',
  'TeamList',
  'NewTeam',
  'CreatedTeam',
  'AlertCreatedEvent',
  'ActionCreatedEvent',
  'ActionUpdatedEvent',
  'ActionChanges',
  'PingEvent',
]);

/** The headers of every delivery (docs/webhooks.md), as a receiver reads them. */
const WEBHOOK_HEADERS = [
  {
    name: 'webhook-id',
    in: 'header',
    required: true,
    description: 'The event id (msg_...): the same on every attempt of one event to one endpoint. Deliveries are at least once: deduplicate on it.',
    schema: { type: 'string', minLength: 1, maxLength: 128 },
  },
  {
    name: 'webhook-timestamp',
    in: 'header',
    required: true,
    description: 'Seconds since the epoch when this attempt was signed. Refuse one more than 5 minutes away from your clock (a replayed request).',
    schema: { type: 'string', pattern: '^[0-9]{1,12}$', maxLength: 12 },
  },
  {
    name: 'webhook-signature',
    in: 'header',
    required: true,
    description:
      'Space-separated `v1,<base64 HMAC-SHA256>` entries of `<webhook-id>.<webhook-timestamp>.<raw body>`, keyed by the base64-decoded part of the endpoint secret after `whsec_`: one per valid secret (two during the 24 hours after a rotation, the new secret first). Accept the request when any entry matches; any Standard Webhooks library does this.',
    schema: { type: 'string', minLength: 3, maxLength: 1024 },
  },
  {
    name: 'user-agent',
    in: 'header',
    required: true,
    description: 'climate-pulse-webhooks/1',
    schema: { type: 'string', enum: ['climate-pulse-webhooks/1'] },
  },
];

/** `const: v` as `enum: [v]`, as @fastify/swagger writes every schema of the paths: one shape per schema in one document. */
function constAsEnum(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(constAsEnum);
  if (!node || typeof node !== 'object') return node;
  const out: Json = {};
  for (const [k, v] of Object.entries(node)) {
    if (k === 'const') out.enum = [v];
    else out[k] = k === 'properties' ? Object.fromEntries(Object.entries(v as Json).map(([p, s]) => [p, constAsEnum(s)])) : constAsEnum(v);
  }
  return out;
}

/**
 * The document's top-level `webhooks` (OpenAPI 3.1): what Climate Pulse POSTs to an organization's
 * endpoints, one entry per event type, each body from its schema in contract/schemas/webhook-events.ts.
 */
function webhooksSection(): Record<string, Json> {
  const camel = (name: string) => name.replace(/[._](\w)/g, (_, c: string) => c.toUpperCase());
  return Object.fromEntries(
    Object.entries(WEBHOOK_EVENT_SCHEMAS).map(([name, schema]) => [
      name,
      {
        post: {
          operationId: `${camel(name)}Webhook`,
          summary: `The ${name} event`,
          description: `${(schema as { description?: string }).description} Sent as a signed POST (Standard Webhooks) to every enabled endpoint of the organization subscribed to it.`,
          tags: ['webhooks'],
          security: [],
          parameters: WEBHOOK_HEADERS,
          requestBody: { required: true, content: { 'application/json': { schema: constAsEnum(schema) } } },
          responses: {
            '2XX': { description: 'Received. Any 2xx answer within 15 seconds is a success; its body is ignored.' },
            '410': { description: 'Gone: the endpoint is disabled at once and receives nothing more until enabled again.' },
            default: {
              description:
                'Any other status (a redirect too), a timeout or a connection error: the attempt failed and is retried on the schedule (about 28 hours), no sooner than Retry-After.',
            },
          },
        },
      },
    ]),
  );
}

/**
 * Headers a route validates as optional, so that their absence gets its own error code, but that
 * the server requires: the document says `required: true`, so generated clients refuse a call
 * without them at compile time.
 */
export function requireHeaders(schema: Json, names: readonly string[]): Json {
  const headers = schema.headers as { properties?: Record<string, unknown>; required?: string[] } | undefined;
  if (!headers?.properties) return schema;
  const present = names.filter((n) => n in headers.properties!);
  if (present.length === 0) return schema;
  return { ...schema, headers: { ...headers, required: [...new Set([...(headers.required ?? []), ...present])] } };
}

const VALIDATOR_HEADERS = {
  ETag: {
    schema: { type: 'string', maxLength: 64, pattern: '^"[A-Za-z0-9_-]+"$' },
    description:
      'Strong validator of this answer (a hash of its bytes; an encoded answer has its own tag). Send it as If-None-Match to get 304 while nothing changed.',
  },
  'Cache-Control': {
    schema: { type: 'string', enum: ['private, no-cache', 'no-store'] },
    description: 'private, no-cache: only the caller may keep it, and revalidates it on every use. no-store (comments): keep no copy.',
  },
};

const IF_NONE_MATCH = {
  name: 'If-None-Match',
  in: 'header',
  required: false,
  description: 'ETag(s) of a copy you hold; while the answer is unchanged it is 304 Not Modified without a body.',
  schema: { type: 'string', maxLength: 1024 },
};

/**
 * GET operations: the request may carry If-None-Match, the 200 carries ETag and Cache-Control,
 * and 304 is documented with the headers it keeps (src/public/plugins/caching.ts).
 */
function documentValidators(doc: Doc): Doc {
  const paths: Doc['paths'] = {};
  for (const [path, ops] of Object.entries(doc.paths ?? {})) {
    paths[path] = { ...ops };
    const get = ops.get as { parameters?: Json[]; responses: Record<string, { headers?: Json }> } | undefined;
    if (!get) continue;
    const ok = get.responses['200'];
    const common = Object.fromEntries(Object.entries(ok.headers ?? {}).filter(([name]) => /^(X-Request-Id|RateLimit-)/.test(name)));
    paths[path].get = {
      ...get,
      parameters: [...(get.parameters ?? []), IF_NONE_MATCH],
      responses: {
        ...Object.fromEntries(
          Object.entries(get.responses).map(([status, r]) => [status, status === '200' ? { ...r, headers: { ...r.headers, ...VALIDATOR_HEADERS } } : r]),
        ),
        304: { description: 'Not Modified: the If-None-Match tag is still current. No body.', headers: { ...common, ...VALIDATOR_HEADERS } },
      },
    };
  }
  return { ...doc, paths };
}

export interface OpenApiOptions {
  /** PUBLIC_BASE_URL: the servers become absolute (`<base>/v1`, `<base>/api/v1`). */
  publicBaseUrl?: string;
}

/**
 * The public API's OpenAPI 3.1 document, built by the one builder (src/http/openapi.ts) from the
 * route schemas themselves. Paths are written relative to the `/v1` server; the `/api/v1` alias is
 * a second server entry.
 */
export async function registerOpenApi(app: FastifyInstance, opts: OpenApiOptions = {}) {
  const base = opts.publicBaseUrl?.replace(/\/+$/, '');
  await app.register(openApiDocument, {
    prefix: API_PREFIX,
    servedAt: ['/openapi.json', `${API_PREFIX}/openapi.json`, `${ALIAS_PREFIX}/openapi.json`],
    cacheControl: 'public, max-age=300',
    document: {
      info: {
        title: 'Climate Pulse API',
        version: '1.0.0',
        description:
          'Per-organization access to workplace mood records ("pulses"), statistics, anonymous comments, alerts, teams and improvement actions. Every response holds only data of the organization that owns the API key.',
      },
      servers: base
        ? [server(`${base}${API_PREFIX}`, 'Production API, versioned base path.'), server(`${base}${ALIAS_PREFIX}`, 'Production API, alias of /v1.')]
        : [
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
        { name: 'pulses', description: 'The mood records of the organization, newest first, filtered by time, level and team.' },
        { name: 'statistics', description: 'Pulse counts and average levels: overall, over the last 7 days, and per UTC day.' },
        { name: 'comments', description: 'Anonymous comments, released a whole ISO week and group at a time once the week has ended.' },
        { name: 'alerts', description: 'Alerts raised by the alert engine on closed ISO weeks (mood drop, low mood, participation drop).' },
        { name: 'organization', description: 'The organization that owns the API key.' },
        { name: 'teams', description: "The organization's teams (subteams); create one with a unique name." },
        { name: 'actions', description: 'Improvement actions: create, edit, and move through active, done and cancelled.' },
        {
          name: 'webhooks',
          description: "Events Climate Pulse sends to the organization's own endpoints (the document's `webhooks`), signed per Standard Webhooks.",
        },
      ],
    },
    // Paths relative to the /v1 server; the Idempotency-Key documented as required.
    transform: (schema, url) => {
      const required = requireHeaders(schema, ['idempotency-key']);
      return { schema: renameKeys(required, DOLLAR_ID, STAND_IN) as Json, url: url.slice(API_PREFIX.length) };
    },
    transformObject: (openapiObject) => {
      const doc = renameKeys(openapiObject, STAND_IN, DOLLAR_ID) as Doc;
      const withWebhooks = { ...doc, webhooks: webhooksSection() } as Doc;
      return documentValidators(hoistNamedSchemas(withWebhooks, PUBLIC_COMPONENTS));
    },
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
    } else if (k === 'example' || k === 'examples') {
      out[k] = renameEveryKey(v, from, to);
    } else {
      out[k] = renameKeys(v, from, to);
    }
  }
  return out;
}

/** In an example value every object key is data: `$id` is the action's id there too. */
function renameEveryKey(node: unknown, from: string, to: string): unknown {
  if (Array.isArray(node)) return node.map((n) => renameEveryKey(n, from, to));
  if (!node || typeof node !== 'object') return node;
  return Object.fromEntries(Object.entries(node).map(([k, v]) => [k === from ? to : k, renameEveryKey(v, from, to)]));
}
