import type { FastifyRequest } from 'fastify';
import { ApiError } from '../../contract/errors.js';
import { checkQueryText } from '../validation.js';
import { named } from '../plugin.js';

// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what this refuses
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;

/**
 * A path or query parameter holding a control character (Unicode's Cc, NUL included) is 400
 * before validation or any query (issue 52): no id, name or filter of either API means one, and
 * NUL reached the database, which refuses it. The message names the parameter, never the value.
 */
async function refuseControlCharacters(request: FastifyRequest) {
  for (const [name, value] of Object.entries((request.params ?? {}) as Record<string, unknown>)) {
    if (typeof value === 'string' && CONTROL.test(value)) throw new ApiError('invalid_request', `Path parameter '${name}' must not hold a control character.`);
  }
  for (const [name, value] of Object.entries((request.query ?? {}) as Record<string, unknown>)) {
    if (CONTROL.test(name)) throw new ApiError('invalid_request', 'A query parameter name must not hold a control character.');
    for (const v of Array.isArray(value) ? value : [value]) {
      if (typeof v === 'string' && CONTROL.test(v)) throw new ApiError('invalid_request', `Query parameter '${name}' must not hold a control character.`);
    }
  }
}

/**
 * Query strings and path parameters before validation (CONTRACT section 4), on the public and the
 * operator API alike: a control character is refused, a parameter given twice is refused, and an
 * integer is bounded as text before Ajv converts it ("Infinity" or 400 nines would pass its
 * integer check). Registered per scope: the console reads its own (src/console/plugins/forms.ts).
 */
export const queryRules = named('query-rules', (scope) => {
  scope.addHook('preValidation', refuseControlCharacters);
  scope.addHook('preValidation', checkQueryText);
});
