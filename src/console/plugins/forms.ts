import type { FastifyInstance, FastifyRequest } from 'fastify';
import { ApiError } from '../../contract/errors.js';
import { checkBody } from '../../http/validation.js';

/** An HTML form's fields: application/x-www-form-urlencoded, one value per name. */
export type Form = Record<string, string>;

/** The form body parser: a field given twice is refused. */
export function registerFormParser(scope: FastifyInstance) {
  scope.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string', bodyLimit: 64 * 1024 }, (_request, body, done) => {
    const form: Form = {};
    for (const [k, v] of new URLSearchParams(body as string)) {
      if (Object.hasOwn(form, k)) return done(new ApiError('invalid_request', `The form field '${k}' is given more than once.`));
      form[k] = v;
    }
    done(null, form);
  });
}

/** A query parameter of a console page: one value or none ('' is none); given twice is refused. */
export function queryText(request: FastifyRequest, name: string): string | undefined {
  const v = (request.query as Record<string, string | string[] | undefined>)[name];
  if (Array.isArray(v)) throw new ApiError('invalid_request', `The parameter '${name}' is given more than once.`);
  return v === '' ? undefined : v;
}

/**
 * A form (or a page's query) as the API's own request: checked by the same TypeBox schema the API
 * validates with, so the console never re-implements a rule (and says what the API says).
 */
export const asApiRequest = <T>(schema: object, value: unknown, where: 'body' | 'querystring' = 'body'): T => checkBody<T>(schema, value, where);
