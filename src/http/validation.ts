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

/** The validator compiler of every route: strict for bodies, coercing for the textual parts. */
export function compileValidator({ schema, httpPart }: { schema: unknown; httpPart?: string }): ValidateFunction {
  return (httpPart === 'body' ? bodies : textParts).compile(schema as AnySchema);
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
  if (!check(body)) throw new ApiError('invalid_request', describeValidation(context, (check.errors ?? []) as Parameters<typeof describeValidation>[1]));
  return body as T;
}
