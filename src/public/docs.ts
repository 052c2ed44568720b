import swaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance } from 'fastify';
import { IDEMPOTENCY_KEY_EXAMPLE } from '../contract/schemas/common.js';

export const DOCS_PREFIX = '/docs';

/**
 * The pages may load only what this service serves. Swagger UI needs nothing from elsewhere:
 * its bundle, styles and icons come from the installed package, its fonts are the system's,
 * and the validator badge (the only outside call it would make) is off. `data:` images are
 * the inline SVG icons of its stylesheet. Scripts and styles need no 'unsafe-inline'.
 */
export const DOCS_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "connect-src 'self'",
  "img-src 'self' data:",
  "font-src 'self'",
  "object-src 'none'",
  "base-uri 'self'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

/**
 * What the page runs: Swagger UI on the served `/openapi.json`, without the plugin's top bar
 * (its "Explore" box loads any URL into the page).
 */
const INITIALIZER = `// "Try it out" on a POST with the document's example Idempotency-Key (or none): the key becomes a
// digest of the method, URL and body, so pressing Execute again is a retry of the same request
// (replayed, Idempotent-Replayed: true) and another body is another request, never 409 idempotency_key_reused.
async function idempotencyKey(request) {
  if (String(request.method).toUpperCase() !== 'POST') return request;
  const headers = request.headers || (request.headers = {});
  const name = Object.keys(headers).find((h) => h.toLowerCase() === 'idempotency-key');
  if (name && headers[name] && headers[name] !== ${JSON.stringify(IDEMPOTENCY_KEY_EXAMPLE)}) return request;
  if (name) delete headers[name];
  const text = request.method + ' ' + new URL(request.url, location.href).pathname + ' ' + (typeof request.body === 'string' ? request.body : '');
  const digest = new Uint8Array(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(text)));
  headers['Idempotency-Key'] = 'docs-' + Array.from(digest.slice(0, 16), (b) => b.toString(16).padStart(2, '0')).join('');
  return request;
}

window.onload = function () {
  window.ui = SwaggerUIBundle({
    requestInterceptor: idempotencyKey,
    url: '/openapi.json',
    dom_id: '#swagger-ui',
    presets: [SwaggerUIBundle.presets.apis],
    layout: 'BaseLayout',
    deepLinking: true,
    docExpansion: 'list',
    defaultModelsExpandDepth: 0,
    displayRequestDuration: true,
    persistAuthorization: false,
    validatorUrl: null,
  });
};
`;

/**
 * `/docs`: the interactive reference (Swagger UI) rendered from the served `/openapi.json`,
 * without authentication and outside the versioned API. "Try it" calls the document's first
 * server, `/v1`, on this host, with the key entered under "Authorize".
 */
export async function registerDocs(app: FastifyInstance) {
  await app.register(swaggerUi, {
    routePrefix: DOCS_PREFIX,
    staticCSP: DOCS_CSP,
    theme: { title: 'Climate Pulse API reference' },
    uiHooks: {
      onRequest: async (request, reply) => {
        const path = request.url.split('?')[0];
        if (path === `${DOCS_PREFIX}/static/swagger-initializer.js`) {
          return reply.type('application/javascript; charset=utf-8').send(INITIALIZER);
        }
        // The plugin's own copy of the document: there is one, at /openapi.json.
        if (path === `${DOCS_PREFIX}/json` || path === `${DOCS_PREFIX}/yaml`) return reply.redirect('/openapi.json');
      },
    },
  });
}
