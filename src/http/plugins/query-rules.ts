import { checkQueryText } from '../validation.js';
import { named } from '../plugin.js';

/**
 * Query strings before validation (CONTRACT section 4), on the public and the operator API alike:
 * a parameter given twice is refused, and an integer is bounded as text before Ajv converts it
 * ("Infinity" or 400 nines would pass its integer check). Registered per scope: the console reads
 * its own query strings.
 */
export const queryRules = named('query-rules', (scope) => {
  scope.addHook('preValidation', checkQueryText);
});
