import { parse, Tester, type Filter } from 'scim2-parse-filter';
import { ScimProblem } from '../domain/scim-roster.js';
import { URN, type Json } from './resources.js';

/**
 * SCIM's `filter` (RFC 7644 section 3.4.2.2): parsed by scim2-parse-filter, tested on the
 * resource as it is answered. String comparisons ignore case except on the attributes RFC 7643
 * makes caseExact (id, externalId, meta.version). An `eq` on an indexed attribute (a look-up
 * before a create, as Entra ID and Okta do) is also handed to the database by `lookupOf`.
 */
export function parseFilter(text: string | undefined): Filter | null {
  if (text === undefined || text.trim() === '') return null;
  if (text.length > 2000) throw new ScimProblem(400, 'invalidFilter', 'The filter is longer than 2,000 characters.');
  try {
    return parse(text);
  } catch (err) {
    throw new ScimProblem(400, 'invalidFilter', `The filter does not parse: ${(err as Error).message}`.slice(0, 300));
  }
}

/** An attribute path without the core schema's URN (`urn:...:core:2.0:User:userName` is `userName`). */
function attrOf(path: string): string {
  for (const core of [URN.user, URN.group]) if (path.toLowerCase().startsWith(`${core.toLowerCase()}:`)) return path.slice(core.length + 1);
  return path;
}

const CASE_EXACT = new Set(['id', 'externalid', 'meta.version']);

const tester = new Tester();

function lowered(v: unknown): unknown {
  if (typeof v === 'string') return v.toLowerCase();
  if (Array.isArray(v)) return v.map(lowered);
  if (typeof v === 'object' && v !== null) return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, lowered(x)]));
  return v;
}

function lowerFilter(f: Filter): Filter {
  switch (f.op) {
    case 'and':
    case 'or':
      return { ...f, filters: f.filters.map(lowerFilter) };
    case 'not':
      return { ...f, filter: lowerFilter(f.filter) };
    case '[]':
      return { ...f, attrPath: attrOf(f.attrPath), valFilter: lowerFilter(f.valFilter) };
    case 'pr':
      return { ...f, attrPath: attrOf(f.attrPath) };
    default:
      return { ...f, attrPath: attrOf(f.attrPath), compValue: typeof f.compValue === 'string' ? f.compValue.toLowerCase() : f.compValue };
  }
}

function test(exact: Json, lower: Json, f: Filter): boolean {
  switch (f.op) {
    case 'and':
      return f.filters.every((x) => test(exact, lower, x));
    case 'or':
      return f.filters.some((x) => test(exact, lower, x));
    case 'not':
      return !test(exact, lower, f.filter);
    case 'pr':
      return tester.test(exact, { ...f, attrPath: attrOf(f.attrPath) });
    case '[]':
      return tester.test(lower, lowerFilter(f));
    default: {
      const attr = attrOf(f.attrPath);
      if (CASE_EXACT.has(attr.toLowerCase())) return tester.test(exact, { ...f, attrPath: attr });
      return tester.test(lower, lowerFilter(f));
    }
  }
}

/** The resources (as answered) that the filter selects. */
export function applyFilter(resources: Json[], f: Filter | null): Json[] {
  if (!f) return resources;
  return resources.filter((r) => test(r, lowered(r) as Json, f));
}

/**
 * The one indexed look-up a filter starts with, when it has one: `attr eq "value"` alone, or as
 * the first term of an `and`. The rest of the filter is then tested on what the look-up finds.
 */
export function lookupOf(f: Filter | null, attributes: Record<string, string>): { by: string; value: string } | null {
  if (!f) return null;
  const first = f.op === 'and' ? f.filters[0] : f;
  if (first?.op === 'eq' && typeof first.compValue === 'string') {
    const by = attributes[attrOf(first.attrPath).toLowerCase()];
    if (by) return { by, value: first.compValue };
  }
  if (first?.op === '[]' && first.valFilter.op === 'eq' && typeof first.valFilter.compValue === 'string') {
    const by = attributes[`${attrOf(first.attrPath)}.${first.valFilter.attrPath}`.toLowerCase()];
    if (by) return { by, value: first.valFilter.compValue };
  }
  return null;
}
