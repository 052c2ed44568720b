import type { FastifyInstance, FastifyRequest } from 'fastify';
import { ApiError } from '../../contract/errors.js';
import { checkBody } from '../../http/validation.js';

/** An HTML form's fields: application/x-www-form-urlencoded, one value per name. */
export type Form = Record<string, string>;

// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what this refuses
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;
// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what this refuses
const CONTROL_BUT_LINES = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f]/;

/**
 * The console's textareas, whose text is lines: the only fields that may hold a tab, a line feed
 * or a carriage return (a pasted roster, the reasons and the flag words of the check-in settings).
 */
export const MULTILINE_FIELDS: ReadonlySet<string> = new Set(['csv', 'reasons', 'flagWords', 'groupRoles']);

/**
 * Whether text holds a control character (Unicode's Cc: C0, DEL and C1), NUL included, that no
 * console entry takes: PostgreSQL cannot store NUL (a 500 at nine entries, issue 52), and no
 * field, id or query parameter of the console means one. Multi-line text may hold tab, LF and CR.
 */
export const holdsControl = (text: string, multiline = false) => (multiline ? CONTROL_BUT_LINES : CONTROL).test(text);

const REFUSED = 'holds a control character (such as NUL), which the console does not accept';

/** What a form or address refusal is about: the error page says it in the reader's words (errors.ts). */
export type EntryFault = 'address' | 'queryName' | 'query' | 'fieldName' | 'field' | 'fieldTwice' | 'queryTwice';

/**
 * A refused entry: 400 with the English message the API would give, and what it is about (`fault`,
 * and the field or parameter's name, `entry`), from which the console's error page takes its words.
 */
export class EntryRefused extends ApiError {
  constructor(
    readonly fault: EntryFault,
    message: string,
    readonly entry = '',
  ) {
    super('invalid_request', message);
  }
}

/**
 * Every console entry's text, refused in one place before anything reads it (issue 52, L1): the
 * form parser refuses a field's name or value, and this hook a path parameter or a query
 * parameter, with 400 and the console's error page. The refusal never repeats the value, and the
 * request's log line holds only the route (src/http/plugins/request-log.ts).
 */
async function refuseControlInAddress(request: FastifyRequest) {
  for (const value of Object.values((request.params ?? {}) as Record<string, unknown>)) {
    if (typeof value === 'string' && holdsControl(value)) throw new EntryRefused('address', `The address ${REFUSED}.`);
  }
  for (const [name, value] of Object.entries((request.query ?? {}) as Record<string, unknown>)) {
    if (holdsControl(name)) throw new EntryRefused('queryName', `A query parameter's name ${REFUSED}.`);
    for (const v of Array.isArray(value) ? value : [value]) {
      if (typeof v === 'string' && holdsControl(v)) throw new EntryRefused('query', `The query parameter '${name}' ${REFUSED}.`, name);
    }
  }
}

/**
 * The console's one body parser, for HTML forms (a JSON body would reach the handlers unchecked:
 * any other type is 415): a field given twice is refused, and so is a control character in a
 * field's name or value (tab, LF and CR allowed in MULTILINE_FIELDS only); with it, the hook that
 * refuses one in the address (path and query).
 */
export function registerFormParser(scope: FastifyInstance) {
  scope.addHook('onRequest', refuseControlInAddress);
  scope.removeAllContentTypeParsers();
  scope.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string', bodyLimit: 64 * 1024 }, (_request, body, done) => {
    const form: Form = {};
    for (const [k, v] of new URLSearchParams(body as string)) {
      if (holdsControl(k)) return done(new EntryRefused('fieldName', `A form field's name ${REFUSED}.`));
      if (holdsControl(v, MULTILINE_FIELDS.has(k))) return done(new EntryRefused('field', `The form field '${k}' ${REFUSED}.`, k));
      if (Object.hasOwn(form, k)) return done(new EntryRefused('fieldTwice', `The form field '${k}' is given more than once.`, k));
      form[k] = v;
    }
    done(null, form);
  });
}

/** A query parameter of a console page: one value or none ('' is none); given twice is refused. */
export function queryText(request: FastifyRequest, name: string): string | undefined {
  const v = (request.query as Record<string, string | string[] | undefined>)[name];
  if (Array.isArray(v)) throw new EntryRefused('queryTwice', `The parameter '${name}' is given more than once.`, name);
  return v === '' ? undefined : v;
}

/**
 * A form (or a page's query) as the API's own request: checked by the same TypeBox schema the API
 * validates with, so the console never re-implements a rule (and says what the API says).
 */
export const asApiRequest = <T>(schema: object, value: unknown, where: 'body' | 'querystring' = 'body'): T => checkBody<T>(schema, value, where);
