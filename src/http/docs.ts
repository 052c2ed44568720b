import swaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance } from 'fastify';

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
  "style-src 'self' 'sha256-RL3ie0nH+Lzz2YNqQN83mnU0J1ot4QL7b99vMdIX99w='",
  "connect-src 'self'",
  "img-src 'self' data:",
  "font-src 'self'",
  "object-src 'none'",
  "base-uri 'self'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

/**
 * `/docs`: the interactive reference (Swagger UI) rendered from the served `/openapi.json`,
 * without authentication and outside the versioned API. "Try it" calls the document's first
 * server, `/v1`, on this host, with the key entered under "Authorize".
 */
export async function registerDocs(app: FastifyInstance) {
  await app.register(swaggerUi, {
    routePrefix: DOCS_PREFIX,
    staticCSP: DOCS_CSP,
    validatorUrl: false,
    theme: { title: 'Climate Pulse API reference' },
    uiConfig: {
      deepLinking: true,
      docExpansion: 'list',
      defaultModelsExpandDepth: 0,
      displayRequestDuration: true,
      tryItOutEnabled: false,
      persistAuthorization: false,
    },
    uiHooks: {
      // The plugin's own copy of the document sits at /docs/json; the UI reads the served one.
      onRequest: async (request, reply) => {
        if (request.url.split('?')[0] === `${DOCS_PREFIX}/json`) return reply.redirect('/openapi.json');
      },
    },
  });
}
