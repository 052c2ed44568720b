import type { FastifyInstance } from 'fastify';
import { ApiError } from '../../contract/errors.js';
import { checkIntegerText, type IntegerRule } from '../validation.js';

/**
 * Query strings before validation (CONTRACT section 4): a parameter given twice is refused, and an
 * integer is bounded as text before Ajv converts it ("Infinity" or 400 nines would pass its
 * integer check).
 */
export function registerQueryRules(scope: FastifyInstance): void {
  scope.addHook('preValidation', async (request) => {
    const declared = (request.routeOptions.schema?.querystring as { properties?: Record<string, IntegerRule> } | undefined)?.properties;
    for (const [name, value] of Object.entries((request.query ?? {}) as Record<string, unknown>)) {
      if (Array.isArray(value)) throw new ApiError('invalid_request', `Query parameter '${name}' is given more than once.`);
      const rule = declared?.[name];
      const refused = rule?.type === 'integer' && typeof value === 'string' ? checkIntegerText(value, rule) : null;
      if (refused) throw new ApiError('invalid_request', `Query parameter '${name}' ${refused}.`);
    }
  });
}
