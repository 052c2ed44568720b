import AjvModule, { type AnySchema, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';

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
  return ajv;
}

const textParts = instance(true);
const bodies = instance(false);

/** The validator compiler of every route: strict for bodies, coercing for the textual parts. */
export function compileValidator({ schema, httpPart }: { schema: unknown; httpPart?: string }): ValidateFunction {
  return (httpPart === 'body' ? bodies : textParts).compile(schema as AnySchema);
}
