import Ajv2020Module from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import type { FastifyInstance, InjectOptions, LightMyRequestResponse } from 'fastify';
import { expect } from 'vitest';

// ajv is CommonJS: under NodeNext its class is the default export's `default`.
const Ajv2020 = (Ajv2020Module as unknown as { default: typeof Ajv2020Module.default }).default;

type Doc = {
  paths: Record<string, Record<string, { responses: Record<string, { content?: Record<string, { schema: unknown }> }> }>>;
  webhooks?: Record<string, unknown>;
};

const validators = new WeakMap<FastifyInstance, { doc: Doc; ajv: InstanceType<typeof Ajv2020> }>();

async function load(app: FastifyInstance) {
  let v = validators.get(app);
  if (!v) {
    // Straight from the app, not over HTTP: the document must be at hand even while the app sheds load.
    const doc = JSON.parse(JSON.stringify((app as unknown as { swagger(): unknown }).swagger())) as Doc;
    const ajv = new Ajv2020({ strict: false, allErrors: true });
    (addFormats as unknown as (a: unknown) => void)(ajv);
    ajv.addSchema(doc as object, 'doc');
    v = { doc, ajv };
    validators.set(app, v);
  }
  return v;
}

const pointer = (...parts: string[]) => parts.map((p) => p.replace(/~/g, '~0').replace(/\//g, '~1')).join('/');

/** Finds the documented template of a concrete path: /actions/act_1 -> /actions/{id}. */
function template(doc: Doc, path: string): string | undefined {
  return Object.keys(doc.paths).find((t) => new RegExp(`^${t.replace(/\{[^}]+\}/g, '[^/]+')}$`).test(path));
}

/** Whether a concrete URL falls under a documented path (a malformed URL reaches no operation). */
export async function isDocumentedPath(app: FastifyInstance, url: string): Promise<boolean> {
  const { doc } = await load(app);
  return template(doc, url.split('?')[0].replace(/^\/(api\/)?v1/, '')) !== undefined;
}

/** Asserts that a response is documented for its operation and status, and matches that schema. */
export async function expectDocumented(app: FastifyInstance, method: string, url: string, res: LightMyRequestResponse) {
  const { doc, ajv } = await load(app);
  // The public document's paths are relative to /v1 (or /api/v1); the operator API's are whole.
  const whole = url.split('?')[0];
  const path = template(doc, whole) ? whole : whole.replace(/^\/(api\/)?v1/, '');
  const t = template(doc, path);
  expect(t, `${method} ${path} is not in the OpenAPI document`).toBeDefined();
  const op = doc.paths[t!][method.toLowerCase()];
  expect(op, `${method} ${t} is not in the OpenAPI document`).toBeDefined();
  const documented = op.responses[String(res.statusCode)];
  expect(documented, `${method} ${t} does not document status ${res.statusCode}`).toBeDefined();
  const ref = `doc#/${pointer('paths', t!, method.toLowerCase(), 'responses', String(res.statusCode), 'content', 'application/json', 'schema')}`;
  const validate = ajv.getSchema(ref) ?? ajv.compile({ $ref: ref });
  const ok = validate(res.json());
  expect(ok, `${method} ${url} -> ${res.statusCode} does not match its schema: ${ajv.errorsText(validate.errors)}\n${res.body.slice(0, 300)}`).toBe(true);
}

/** A client whose every answer is checked against the served OpenAPI document. */
export function api(app: FastifyInstance, key?: string) {
  const call = async (method: 'GET' | 'POST' | 'PATCH', url: string, opts: Partial<InjectOptions> = {}) => {
    const res = await app.inject({
      method,
      url,
      ...opts,
      headers: { ...(key ? { authorization: `Bearer ${key}` } : {}), ...(opts.headers ?? {}) },
    } as InjectOptions);
    if (res.statusCode !== 404 || res.json().error?.code !== 'not_found' || !/No such endpoint/.test(res.body)) {
      await expectDocumented(app, method, url, res);
    }
    return res;
  };
  return {
    get: (url: string, headers: Record<string, string> = {}) => call('GET', url, { headers }),
    post: (url: string, payload: unknown, headers: Record<string, string> = {}) => call('POST', url, { payload: payload as object, headers }),
    patch: (url: string, payload: unknown, headers: Record<string, string> = {}) => call('PATCH', url, { payload: payload as object, headers }),
  };
}

/**
 * Asserts that the body of a webhook delivery is the event its `type` names, as the public
 * document's top-level `webhooks` describes it (the request body of that event's POST).
 */
export async function expectDocumentedEvent(app: FastifyInstance, body: string) {
  const { doc, ajv } = await load(app);
  const type = (JSON.parse(body) as { type?: string }).type ?? '';
  expect(doc.webhooks?.[type], `event ${type} is not in the OpenAPI document's webhooks`).toBeDefined();
  const ref = `doc#/${pointer('webhooks', type, 'post', 'requestBody', 'content', 'application/json', 'schema')}`;
  const validate = ajv.getSchema(ref) ?? ajv.compile({ $ref: ref });
  expect(validate(JSON.parse(body)), `${type} does not match its schema: ${ajv.errorsText(validate.errors)}\n${body.slice(0, 300)}`).toBe(true);
}
