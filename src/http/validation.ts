import AjvModule, { type AnySchema, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import type { FastifyRequest } from 'fastify';
import { ApiError } from '../contract/errors.js';
import { isApiDateTime } from '../contract/schemas/date-time.js';
import { describeValidation } from './plugins/errors.js';

// ajv and ajv-formats are CommonJS: under NodeNext their exports are the default export's `default`.
const Ajv = (AjvModule as unknown as { default: typeof AjvModule.default }).default;
const addFormats = (addFormatsModule as unknown as { default: (ajv: unknown) => void }).default;

/**
 * Request validation (CONTRACT.md section 4). Unknown fields are refused, not silently
 * dropped; no defaults are filled in. Query strings, path parameters and headers are text,
 * so they are parsed to their declared type (never split into arrays). JSON bodies are
 * never converted: `{"name": 42}` is not the team name "42".
 */
const COMMON = { removeAdditional: false, useDefaults: false, allErrors: false, addUsedSchema: false } as const;

function instance(coerceTypes: boolean) {
  const ajv = new Ajv({ ...COMMON, coerceTypes });
  addFormats(ajv);
  // ajv-formats takes a leap second, year 0000 and +01 offsets; the API's one rule does not.
  ajv.addFormat('date-time', isApiDateTime);
  return ajv;
}

const textParts = instance(true);
const bodies = instance(false);

/** A UTF-16 surrogate without its pair (`\ud800` in JSON): not a character, and no encoding can store it. */
const LONE_SURROGATE = /\p{Cs}/u;

/**
 * The first string of a parsed JSON body, or the first field name, that holds a lone surrogate:
 * JSON's grammar allows `"\ud800"`, but it is no Unicode text, and it reached the database (a
 * 500 whose log line carried the client's text). Walked without recursion: nesting is bounded by
 * the body limit only. Returns the ajv-style error naming where, or null.
 */
export function illFormedText(body: unknown): { keyword: string; instancePath: string; message: string; params: Record<string, unknown> } | null {
  const stack: [unknown, string][] = [[body, '']];
  while (stack.length) {
    const [value, path] = stack.pop()!;
    if (typeof value === 'string') {
      if (LONE_SURROGATE.test(value))
        return { keyword: 'wellFormed', instancePath: path, message: 'must be Unicode text (it holds a lone UTF-16 surrogate)', params: {} };
    } else if (Array.isArray(value)) {
      for (let i = value.length - 1; i >= 0; i--) stack.push([value[i], `${path}/${i}`]);
    } else if (value !== null && typeof value === 'object') {
      // Parsed JSON only: a streamed body (a file import) is not walked.
      const proto = Object.getPrototypeOf(value) as unknown;
      if (proto !== Object.prototype && proto !== null) continue;
      const entries = Object.entries(value);
      for (let i = entries.length - 1; i >= 0; i--) {
        const [k, v] = entries[i];
        // The name itself is not repeated: it is the client's text, and not printable.
        if (LONE_SURROGATE.test(k))
          return { keyword: 'wellFormed', instancePath: path, message: 'has a field name that is not Unicode text (a lone UTF-16 surrogate)', params: {} };
        stack.push([v, `${path}/${k.replace(/~/g, '~0').replace(/\//g, '~1')}`]);
      }
    }
  }
  return null;
}

/**
 * Validators by the JSON text of their schema, per instance: routes declare the same parameters,
 * queries and bodies again and again (a served app compiled 289 validators for 69 distinct
 * schemas). A validator depends on its schema's text alone, and Fastify reads its `errors` right
 * after each call, so routes may share one. The process's apps share them too (the tests build
 * hundreds); the map holds one entry per distinct schema of the code, a few hundred at most.
 */
const compiled = { body: new Map<string, ValidateFunction>(), text: new Map<string, ValidateFunction>() };

/** The validator compiler of every route: strict for bodies, coercing for the textual parts. */
export function compileValidator({ schema, httpPart }: { schema: unknown; httpPart?: string }): ValidateFunction {
  const [ajv, byText] = httpPart === 'body' ? [bodies, compiled.body] : [textParts, compiled.text];
  const text = JSON.stringify(schema);
  let validate = byText.get(text);
  if (!validate) {
    validate = ajv.compile(schema as AnySchema);
    byText.set(text, validate);
  }
  return validate;
}

/**
 * The preValidation hook of every face (src/http/plugins/body-rules.ts): a parsed body with a lone
 * surrogate anywhere is 400 invalid_request naming the field, before any route, with a schema or
 * without, reads it.
 */
export async function checkBodyText(request: FastifyRequest) {
  const bad = request.body !== null && typeof request.body === 'object' ? illFormedText(request.body) : null;
  if (bad) throw new ApiError('invalid_request', describeValidation('body', [bad]));
}

export interface IntegerRule {
  type?: string;
  minimum?: number;
  maximum?: number;
}

/** Digits as sent, optionally signed: ASCII only (`\d` without the u flag), no exponent, no fraction. */
const INTEGER_TEXT = /^[+-]?\d+$/;

/**
 * An integer query value is checked as text before anything turns it into a number: 400 digits
 * of nines would become Infinity, which passes Ajv's integer check and reached the database.
 * Read with BigInt, so no length of digits can overflow: a value outside the safe-integer range
 * is refused here, one inside it is exact and left to the schema's bounds. Returns the reason it
 * is refused, or null.
 */
export function checkIntegerText(value: string, rule: IntegerRule): string | null {
  const text = value.trim();
  if (!INTEGER_TEXT.test(text)) return 'must be an integer';
  const n = BigInt(text);
  // Within the safe range the number is exact, and the schema's own bounds (and messages) apply.
  if (n >= BigInt(Number.MIN_SAFE_INTEGER) && n <= BigInt(Number.MAX_SAFE_INTEGER)) return null;
  const min = rule.minimum ?? Number.MIN_SAFE_INTEGER;
  const max = rule.maximum ?? Number.MAX_SAFE_INTEGER;
  return `must be an integer from ${min} to ${max}`;
}

/**
 * The preValidation hook of both apps' routes (the public API's and the operator API's): a query
 * parameter given more than once is refused, and an integer one is bounded as text (checkIntegerText)
 * before Ajv converts it.
 */
export async function checkQueryText(request: FastifyRequest) {
  const declared = (request.routeOptions.schema?.querystring as { properties?: Record<string, IntegerRule> } | undefined)?.properties;
  for (const [name, value] of Object.entries((request.query ?? {}) as Record<string, unknown>)) {
    if (Array.isArray(value)) throw new ApiError('invalid_request', `Query parameter '${name}' is given more than once.`);
    // Bounded as text before Ajv converts it: "Infinity" or 400 nines would pass its integer check.
    const rule = declared?.[name];
    const refused = rule?.type === 'integer' && typeof value === 'string' ? checkIntegerText(value, rule) : null;
    if (refused) throw new ApiError('invalid_request', `Query parameter '${name}' ${refused}.`);
  }
}

const bodyCheckers = new WeakMap<object, ValidateFunction>();

/**
 * A JSON body checked as the API's routes check it, outside a route (the console's forms, mapped
 * to the API's body): the same strict validator, and the same message naming the field.
 */
export function checkBody<T>(schema: object, body: unknown, context: 'body' | 'querystring' = 'body'): T {
  let check = bodyCheckers.get(schema);
  if (!check) bodyCheckers.set(schema, (check = bodies.compile(schema as AnySchema)));
  const bad = illFormedText(body);
  if (bad) throw new ApiError('invalid_request', describeValidation(context, [bad]));
  if (!check(body)) throw new ApiError('invalid_request', describeValidation(context, (check.errors ?? []) as Parameters<typeof describeValidation>[1]));
  return body as T;
}
