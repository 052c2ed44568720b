import { scimPatch, ScimError, type ScimPatchOperation, type ScimResource } from 'scim-patch';
import { ScimProblem } from '../domain/scim-roster.js';
import { normalizeResource, URN, type Json } from './resources.js';

/**
 * PATCH (RFC 7644 section 3.5.2) by scim-patch: add, remove and replace, with paths, value
 * filters (`members[value eq "..."]`, `emails[type eq "work"].value`) or a value object without a
 * path, the op in any case (Entra ID's `Replace`). An operation on an attribute the roster does
 * not keep (name, title, phoneNumbers...) or may not change (id, meta, groups) is dropped first,
 * so it neither fails nor is stored.
 */
const READ_ONLY = new Set(['id', 'meta', 'schemas', 'groups']);

/** The attribute an operation's path starts at, lower case (`emails[type eq "work"].value` is `emails`). */
function topOf(path: string, core: string): string {
  const p = path.trim();
  if (p.toLowerCase().startsWith(`${URN.enterprise.toLowerCase()}:`))
    return `${URN.enterprise}:${p.slice(URN.enterprise.length + 1).split(/[.[]/)[0]}`.toLowerCase();
  const bare = p.toLowerCase().startsWith(`${core.toLowerCase()}:`) ? p.slice(core.length + 1) : p;
  return bare.split(/[.[]/)[0].toLowerCase();
}

const ENTERPRISE_KEPT = `${URN.enterprise}:department`.toLowerCase();

function keptPath(top: string, known: Set<string>): boolean {
  if (top.startsWith(`${URN.enterprise.toLowerCase()}:`)) return top === ENTERPRISE_KEPT && known.has(URN.enterprise.toLowerCase());
  return known.has(top) && !READ_ONLY.has(top);
}

function keptValue(value: Json, known: Set<string>, core: string): Json {
  const out: Json = {};
  for (const [k, v] of Object.entries(normalizeResource(value, core))) {
    const lower = k.toLowerCase();
    if (lower === URN.enterprise.toLowerCase()) {
      if (known.has(lower) && typeof v === 'object' && v !== null) {
        const dept = Object.entries(v as Json).find(([x]) => x.toLowerCase() === 'department');
        // By its full name: scim-patch reads a value object's keys as paths, and the URN's `2.0` is not a sub-attribute.
        if (dept) out[`${URN.enterprise}:department`] = dept[1];
      }
    } else if (known.has(lower) && !READ_ONLY.has(lower)) out[k] = v;
  }
  return out;
}

export function applyPatch(resource: Json, operations: { op: string; path?: string; value?: unknown }[], known: Set<string>, core: string): Json {
  const kept: ScimPatchOperation[] = [];
  for (const [i, o] of operations.entries()) {
    const op = o.op.toLowerCase() as 'add' | 'remove' | 'replace';
    if (o.path !== undefined && o.path.trim() !== '') {
      const top = topOf(o.path, core);
      if (!keptPath(top, known)) continue;
      // A remove with values (Entra ID's members removal): each value by a filter, since the
      // values it sends carry other sub-attributes (`$ref: null`) than the ones answered.
      if (op === 'remove' && Array.isArray(o.value) && !o.path.includes('[')) {
        const key = Object.keys(resource).find((k) => k.toLowerCase() === top);
        const present = new Set((Array.isArray(key && resource[key]) ? (resource[key as string] as Json[]) : []).map((m) => m.value));
        for (const v of o.value) {
          const value = typeof v === 'object' && v !== null ? (v as Json).value : undefined;
          if (typeof value !== 'string') throw new ScimProblem(400, 'invalidValue', `Operations[${i}]: each value to remove needs its 'value'.`);
          // Removing what is not there leaves it not there (an identity provider's retry).
          if (present.has(value)) kept.push({ op: 'remove', path: `${top}[value eq ${JSON.stringify(value)}]` } as ScimPatchOperation);
        }
        continue;
      }
      kept.push(
        (op === 'remove'
          ? { op, path: o.path, ...(o.value !== undefined ? { value: o.value } : {}) }
          : { op, path: o.path, value: o.value }) as ScimPatchOperation,
      );
    } else {
      if (op === 'remove') throw new ScimProblem(400, 'noTarget', `Operations[${i}]: a remove needs a path.`);
      if (typeof o.value !== 'object' || o.value === null || Array.isArray(o.value)) {
        throw new ScimProblem(400, 'invalidValue', `Operations[${i}]: without a path, the value must be an object of attributes.`);
      }
      const value = keptValue(o.value as Json, known, core);
      if (Object.keys(value).length > 0) kept.push({ op, value } as ScimPatchOperation);
    }
  }
  if (kept.length === 0) return resource;
  try {
    return scimPatch(structuredClone(resource) as unknown as ScimResource, kept, { mutateDocument: true, treatMissingAsAdd: true }) as unknown as Json;
  } catch (err) {
    if (err instanceof ScimError) throw new ScimProblem(400, err.scimCode ?? 'invalidValue', err.message);
    throw err;
  }
}
