import { readdirSync, readFileSync } from 'node:fs';
import AjvModule, { type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { expect } from 'vitest';

/**
 * Every answer of /scim/v2 a test receives is checked against the RFC 7643 and 7644 schemas,
 * written once as JSON Schema in test/scim/schemas/: the resource, list, error, bulk and discovery
 * shapes. A query that names `attributes` or `excludedAttributes` may leave out a required
 * attribute (RFC 7644 section 3.9), and only that is forgiven.
 */
// CommonJS under NodeNext: the exports are the default export's `default` (as src/http/validation.ts reads them).
const Ajv = (AjvModule as unknown as { default: typeof AjvModule.default }).default;
const addFormats = (addFormatsModule as unknown as { default: (ajv: unknown) => void }).default;
const dir = new URL('./schemas/', import.meta.url);
const ajv = new Ajv({ allErrors: true, strict: true });
addFormats(ajv);
for (const f of readdirSync(dir).filter((f) => f.endsWith('.json'))) ajv.addSchema(JSON.parse(readFileSync(new URL(f, dir), 'utf8')));
const schema = (id: string): ValidateFunction => ajv.getSchema(id)!;

function check(id: string, body: unknown, where: string, projected: boolean) {
  const v = schema(id);
  if (v(body)) return;
  const errors = (v.errors ?? []).filter((e) => !(projected && e.keyword === 'required'));
  expect(errors, `${where} does not match ${id}: ${JSON.stringify(body).slice(0, 400)}`).toEqual([]);
}

export const validated = { count: 0 };

export function validateScim(method: string, path: string, status: number, body: Record<string, unknown>) {
  const where = `${method} ${path} (${status})`;
  const [pathname, query = ''] = path.split('?');
  const projected = /(^|&)(attributes|excludedAttributes)=/.test(query);
  validated.count++;
  if (status === 204 || status === 304) {
    expect(body, where).toEqual({});
    return;
  }
  if (status >= 400) return check('error.json', body, where, false);
  const resourceOf = (r: Record<string, unknown>) => {
    const type = (r.meta as { resourceType?: string } | undefined)?.resourceType ?? (pathname.startsWith('/Groups') ? 'Group' : 'User');
    check(type === 'Group' ? 'group.json' : 'user.json', r, where, projected);
  };
  if (pathname === '/ServiceProviderConfig') return check('service-provider-config.json', body, where, false);
  if (pathname === '/Bulk') return check('bulk-response.json', body, where, false);
  if (pathname === '/ResourceTypes' || pathname === '/Schemas') {
    check('list-response.json', body, where, false);
    for (const r of body.Resources as unknown[]) check(pathname === '/Schemas' ? 'schema.json' : 'resource-type.json', r, where, false);
    return;
  }
  if (pathname.startsWith('/ResourceTypes/')) return check('resource-type.json', body, where, false);
  if (pathname.startsWith('/Schemas/')) return check('schema.json', body, where, false);
  if (method === 'GET' && /^\/(Users|Groups)$/.test(pathname)) {
    check('list-response.json', body, where, false);
    for (const r of body.Resources as Record<string, unknown>[]) resourceOf(r);
    return;
  }
  resourceOf(body);
}
