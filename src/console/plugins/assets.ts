import type { FastifyInstance } from 'fastify';
import { ASSETS } from '../assets.js';

/** A hashed name never changes content: a year, and no revalidation (RFC 8246). */
export const ASSET_CACHE_CONTROL = 'public, max-age=31536000, immutable';

/**
 * The console's stylesheets and scripts, from /console/assets/ (same origin, no inline code), each
 * under its content's hash. Any other name (an old hash, no hash) is the console's 404 page.
 */
export function registerAssets(scope: FastifyInstance) {
  scope.get<{ Params: { file: string } }>('/assets/:file', async (request, reply) => {
    const asset = ASSETS.get(request.params.file);
    if (!asset) return reply.callNotFound();
    return reply.type(asset.type).header('cache-control', ASSET_CACHE_CONTROL).send(asset.body);
  });
}
