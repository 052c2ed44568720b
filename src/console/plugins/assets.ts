import type { FastifyInstance } from 'fastify';
import { CHARTS_JS, CONSOLE_CSS, CONSOLE_JS, UPLOT_CSS, UPLOT_JS } from '../assets.js';

/** The console's stylesheets and scripts, from /console/assets/ (same origin, no inline code). */
export function registerAssets(scope: FastifyInstance) {
  const assets: Record<string, { type: string; body: string }> = {
    'console.css': { type: 'text/css; charset=utf-8', body: CONSOLE_CSS },
    'console.js': { type: 'text/javascript; charset=utf-8', body: CONSOLE_JS },
    'charts.js': { type: 'text/javascript; charset=utf-8', body: CHARTS_JS },
    'uplot.js': { type: 'text/javascript; charset=utf-8', body: UPLOT_JS },
    'uplot.css': { type: 'text/css; charset=utf-8', body: UPLOT_CSS },
  };
  for (const [name, { type, body }] of Object.entries(assets)) {
    scope.get(`/assets/${name}`, { schema: { hide: true } }, async (_request, reply) => reply.type(type).header('cache-control', 'no-store').send(body));
  }
}
