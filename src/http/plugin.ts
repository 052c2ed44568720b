import type { FastifyInstance, FastifyPluginAsync } from 'fastify';

/**
 * A named plugin of the base: it adds its hooks, handlers and decorations to the instance that
 * registers it (no scope of its own, as fastify-plugin does), and its name shows in
 * `printPlugins()` and in errors. Each face registers the base's list, then its own plugins.
 */
export function named<O extends object = Record<never, never>>(
  name: string,
  setup: (app: FastifyInstance, opts: O) => void | Promise<void>,
): FastifyPluginAsync<O> {
  const plugin: FastifyPluginAsync<O> = async (app, opts) => {
    await setup(app, opts);
  };
  return Object.assign(plugin, {
    [Symbol.for('skip-override')]: true,
    [Symbol.for('fastify.display-name')]: name,
    [Symbol.for('plugin-meta')]: { name },
  });
}
