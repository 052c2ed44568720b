import type { FastifyRequest } from 'fastify';
import { ApiError } from '../../contract/errors.js';
import { ErrorSchema } from '../../contract/schemas/common.js';
import { checkBodyText, compileValidator } from '../validation.js';
import { lazyValidatorCompiler } from '../lazy-compilers.js';
import { named } from '../plugin.js';

export interface BodyRulesOptions {
  /** Compile each route's validator on its first use (the CLI's in-process operator app), not at ready. */
  compileOnFirstUse?: boolean;
}

/**
 * Strict validation, JSON bodies only, and the error schema: bodies are validated without type
 * conversion (query strings, params and headers are coerced); a text/plain body is refused as
 * invalid_json, not parsed as a string; a lone UTF-16 surrogate in any string of a JSON body is
 * 400 on every route (issue 43).
 */
export const bodyRules = named<BodyRulesOptions>('body-rules', (app, opts) => {
  app.setValidatorCompiler(opts.compileOnFirstUse ? lazyValidatorCompiler(compileValidator) : compileValidator);
  app.removeContentTypeParser('text/plain');
  app.addHook('preValidation', checkBodyText);
  app.addSchema(ErrorSchema);
});

/** Runs before schema validation on POST/PATCH: a body that is not a JSON object is invalid_json. */
export async function requireJsonObject(request: FastifyRequest) {
  const body = request.body;
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw new ApiError('invalid_json', 'The body must be a JSON object.');
  }
}
