import type { FastifyInstance } from 'fastify';
import { checkQueryText } from '../validation.js';

/**
 * Query strings before validation (CONTRACT section 4), on the public and the operator API alike:
 * a parameter given twice is refused, and an integer is bounded as text before Ajv converts it
 * ("Infinity" or 400 nines would pass its integer check).
 */
export function registerQueryRules(scope: FastifyInstance): void {
  scope.addHook('preValidation', checkQueryText);
}
