/**
 * Contract fuzzing from the served OpenAPI document (issue 10), shared by
 * test/contract/fuzz.test.ts (fixed seed, bounded runs) and scripts/fuzz.ts (`npm run fuzz`).
 *
 * Every operation of /openapi.json is read from the document itself. Valid requests are
 * generated from its schemas by json-schema-faker (seeded), then arranged to the documented
 * rules a schema cannot state (an id must exist, `from` before `to`, `endDate` not before the
 * start, an Idempotency-Key is mandatory on POST); Ajv2020 confirms every value is still valid
 * for its schema. Invalid requests are a valid one broken by one mutation of our own. No
 * module here imports vitest: the script runs outside the test runner.
 */
import { randomBytes } from 'node:crypto';
import Ajv2020Module from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import type { FastifyInstance, InjectOptions, LightMyRequestResponse } from 'fastify';
import fc from 'fast-check';
import { generateSync } from 'json-schema-faker';
import { buildApp } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';
import { canonicalJson } from '../../src/domain/idempotency.js';
import { loadDataset } from '../../src/domain/dataset.js';
import { illFormedText } from '../../src/http/validation.js';
import { KEYS, NOW, readDataset } from '../fixtures/dataset.js';
import { createFuzzDatabase as createTestDatabase, FUZZ_REDIS_URL as TEST_REDIS_URL } from './fuzz-db.js';

const Ajv2020 = (Ajv2020Module as unknown as { default: typeof Ajv2020Module.default }).default;
const addFormats = (addFormatsModule as unknown as { default: (ajv: unknown) => void }).default;

/** The seed of the CI run; `npm run fuzz` picks a random one unless given `--seed`. */
export const CI_SEED = 20261122;

export type Schema = Record<string, unknown>;
export type Json = null | boolean | number | string | Json[] | { [k: string]: Json };

export interface Parameter {
  name: string;
  in: 'query' | 'path' | 'header';
  required: boolean;
  schema: Schema;
}

export interface Operation {
  id: string;
  method: 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE'; // the public API has GET, POST and PATCH only
  path: string; // the document's template, e.g. /actions/{id}
  params: Parameter[];
  body?: Schema;
  statuses: string[];
}

export interface Doc {
  servers: { url: string }[];
  components?: { schemas?: Record<string, Schema> };
  paths: Record<
    string,
    Record<
      string,
      { operationId: string; parameters?: Parameter[]; requestBody?: { content: Record<string, { schema: Schema }> }; responses: Record<string, unknown> }
    >
  >;
}

/** The document's named components inlined (the generators below read plain schemas). */
function inlineRefs<T>(node: T, doc: Doc): T {
  if (Array.isArray(node)) return node.map((n) => inlineRefs(n, doc)) as T;
  if (!node || typeof node !== 'object') return node;
  const ref = (node as Schema).$ref;
  if (typeof ref === 'string' && ref.startsWith('#/components/schemas/')) {
    return inlineRefs(doc.components!.schemas![ref.slice('#/components/schemas/'.length)], doc) as T;
  }
  return Object.fromEntries(
    Object.entries(node).map(([k, v]) => [
      k,
      k === 'properties' ? Object.fromEntries(Object.entries(v as Schema).map(([p, s]) => [p, inlineRefs(s, doc)])) : inlineRefs(v, doc),
    ]),
  ) as T;
}

export function operationsOf(doc: Doc): Operation[] {
  const ops: Operation[] = [];
  for (const [path, methods] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(methods)) {
      ops.push({
        id: op.operationId,
        method: method.toUpperCase() as Operation['method'],
        path,
        // If-None-Match is a cache validator (a match answers 304), not an input the contract validates.
        params: (op.parameters ?? []).filter((p) => p.name !== 'If-None-Match'),
        body: inlineRefs(op.requestBody?.content['application/json']?.schema, doc),
        statuses: Object.keys(op.responses),
      });
    }
  }
  return ops.sort((a, b) => a.id.localeCompare(b.id));
}

/** One request as sent, with what the contract says must come back. */
export interface FuzzRequest {
  op: string;
  kind: string; // 'valid', or the mutation
  method: Operation['method'];
  url: string;
  headers: Record<string, string>;
  payload?: string;
  /** Acceptable outcomes: status and, for errors, the code. */
  expect: { status: number; code?: string }[];
}

export interface FuzzTarget {
  app: FastifyInstance;
  doc: Doc;
  ops: Operation[];
  state: FuzzState;
  close(): Promise<void>;
}

/** What the fuzzer knows of the organization it writes to: ids to use and what it has written. */
export interface FuzzState {
  teamIds: string[];
  teamNames: Set<string>; // trimmed, lower-case
  actionIds: string[];
  idempotency: Map<string, string>; // key -> fingerprint
}

/** Loads the fixture organizations and builds the app, with limits that a long run cannot reach. */
export async function startTarget(): Promise<FuzzTarget> {
  const tdb = await createTestDatabase();
  const dataset = readDataset();
  dataset.plans!.push({ name: 'fuzz', restApi: true, rateLimitPerMinute: 10_000_000 });
  dataset.organizations![0].plan = 'fuzz';
  await loadDataset(tdb.db, dataset);
  const config = loadConfig({
    LOG_LEVEL: 'silent',
    MAX_EVENT_LOOP_DELAY_MS: '0',
    AUTH_FAILURES_PER_MINUTE: '10000000',
    ...(TEST_REDIS_URL ? { REDIS_URL: TEST_REDIS_URL } : {}),
  });
  const app = await buildApp(config, {
    db: tdb.db,
    now: () => new Date(NOW),
    rateLimitNamespace: `climate-pulse-fuzz:${randomBytes(6).toString('hex')}:`,
  });
  const doc = (await app.inject({ url: '/openapi.json' })).json() as Doc;
  const auth = { authorization: `Bearer ${KEYS.acme}` };
  const teams = (await app.inject({ url: '/v1/teams', headers: auth })).json().items as { id: string; name: string }[];
  const actions = (await app.inject({ url: '/v1/actions', headers: auth })).json().items as { $id: string }[];
  return {
    app,
    doc,
    ops: operationsOf(doc),
    state: {
      teamIds: teams.map((t) => t.id),
      teamNames: new Set(teams.map((t) => t.name.trim().toLowerCase())),
      actionIds: actions.map((a) => a.$id),
      idempotency: new Map(),
    },
    async close() {
      await app.close();
      await tdb.close();
    },
  };
}

// ---------------------------------------------------------------------------------------------
// Randomness: every choice comes from one integer seed that fast-check draws (and reports).

export class Rng {
  private s: number;
  constructor(seed: number) {
    this.s = seed >>> 0;
  }
  /** mulberry32 */
  next(): number {
    let t = (this.s = (this.s + 0x6d2b79f5) >>> 0);
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }
  int(min: number, max: number): number {
    return min + Math.floor(this.next() * (max - min + 1));
  }
  pick<T>(xs: readonly T[]): T {
    return xs[this.int(0, xs.length - 1)];
  }
  chance(p: number): boolean {
    return this.next() < p;
  }
}

// ---------------------------------------------------------------------------------------------
// Schema helpers

const ajv = new Ajv2020({ strict: false, allErrors: false });
addFormats(ajv);
const compiled = new WeakMap<object, (v: unknown) => boolean>();
export function isValid(schema: Schema, value: unknown): boolean {
  let v = compiled.get(schema);
  if (!v) {
    v = ajv.compile(schema) as (v: unknown) => boolean;
    compiled.set(schema, v);
  }
  return v(value);
}

/** The JSON types a schema admits (through anyOf/oneOf too). */
export function typesOf(schema: Schema): string[] {
  if (typeof schema.type === 'string') return [schema.type];
  if (Array.isArray(schema.type)) return schema.type as string[];
  const alts = (schema.anyOf ?? schema.oneOf) as Schema[] | undefined;
  return alts ? alts.flatMap(typesOf) : [];
}

/** The first string alternative of a schema (for bounds, formats, patterns). */
export function stringBranch(schema: Schema): Schema | undefined {
  if (typesOf(schema).length === 1 && schema.type === 'string') return schema;
  return ((schema.anyOf ?? schema.oneOf) as Schema[] | undefined)?.find((s) => s.type === 'string');
}

/** `options`: more of json-schema-faker's GenerateOptions (the operator-API fuzzer bounds arrays and strings). */
export function fake(schema: Schema, seed: number, options: Record<string, unknown> = {}): Json {
  // json-schema-faker gives up on some draws (an object whose optional fields all came out
  // absent under minProperties); the next seed is another draw.
  // A draw holding a lone UTF-16 surrogate (randexp draws them for patterns such as \S) is no
  // text, and the API refuses it (400, issue 43): not a valid request, so the next seed too.
  for (let i = 0; ; i++) {
    try {
      const v = generateSync(schema as never, { seed: seed + i, optionalsProbability: 0.5, ...options }) as Json;
      if (i < 40 && illFormedText(v)) continue;
      return v;
    } catch (err) {
      if (i >= 20) throw err;
    }
  }
}

export const DAY = 86_400_000;

/** Maps any instant into [lo, hi), keeping its place modulo the window. */
export function into(ms: number, lo: number, hi: number): number {
  const span = hi - lo;
  return lo + ((((ms - lo) % span) + span) % span);
}

// ---------------------------------------------------------------------------------------------
// Valid requests

interface Draft {
  op: Operation;
  prefix: string;
  path: string;
  query: [string, string][];
  queryValues: Record<string, Json>;
  headers: Record<string, string>;
  body?: Record<string, Json>;
}

/**
 * The documented rules a schema does not state, applied to generated values:
 * - query date-times and dates: `from` before (`date`: not after) `to`, inside the last 200 days
 *   (GET /stats/daily refuses a `from` more than 365 days back; its default `from` is `to` - 90 days;
 *   the default `from` of GET /comments is today - 29 days, so a lone `to` is not before it);
 * - `cursor` only from a previous answer (never generated);
 * - a body `subteamId` names a team of the organization; a body `endDate` is not before the
 *   start (now, or the edited action's startDate, which is never after now);
 * - the `{id}` of PATCH /actions is an action of the organization;
 * - POST always carries an Idempotency-Key (CONTRACT.md section 6).
 */
function arrange(d: Draft, state: FuzzState, rng: Rng) {
  const now = NOW.getTime();
  const q = d.queryValues;
  delete q.cursor;
  for (const name of ['from', 'to']) {
    const p = d.op.params.find((x) => x.in === 'query' && x.name === name);
    if (p && typeof q[name] === 'string') {
      const ms = Date.parse(q[name] as string);
      const t = into(Number.isNaN(ms) ? now : ms, now - 200 * DAY, now);
      q[name] = p.schema.format === 'date' ? new Date(t).toISOString().slice(0, 10) : new Date(t).toISOString();
    }
  }
  // GET /comments: the default `from` is today - 29 days whatever `to` is, so a lone `to` stays after it.
  if (typeof q.to === 'string' && q.from === undefined && (q.to as string).length === 10) {
    q.to = new Date(into(Date.parse(q.to as string), now - 29 * DAY, now)).toISOString().slice(0, 10);
  }
  if (typeof q.from === 'string' && typeof q.to === 'string') {
    const dateOnly = (q.from as string).length === 10;
    if (q.from > q.to) [q.from, q.to] = [q.to, q.from];
    if (!dateOnly && q.from === q.to) delete q.to;
  }
  if (typeof q.subteamId === 'string' && rng.chance(0.6)) q.subteamId = rng.pick(state.teamIds);

  if (d.body) {
    if (typeof d.body.subteamId === 'string') d.body.subteamId = rng.pick(state.teamIds);
    if (typeof d.body.endDate === 'string') {
      const ms = Date.parse(d.body.endDate);
      d.body.endDate = new Date(into(Number.isNaN(ms) ? now : ms, now + 60_000, now + 365 * DAY)).toISOString();
    }
  }
  if (d.op.path.includes('{id}')) d.path = d.op.path.replace('{id}', encodeURIComponent(rng.pick(state.actionIds)));
  if (d.op.method === 'POST' && !d.headers['idempotency-key']) {
    const p = d.op.params.find((x) => x.in === 'header' && x.name === 'idempotency-key')!;
    d.headers['idempotency-key'] = fake(p.schema, rng.int(1, 2 ** 31 - 1)) as string;
  }
}

/** A valid request of `op`: every value generated from the document's schemas. */
export function draftValid(op: Operation, state: FuzzState, rng: Rng): Draft {
  const d: Draft = { op, prefix: rng.pick(['/v1', '/api/v1']), path: op.path, query: [], queryValues: {}, headers: {} };
  for (const p of op.params) {
    if (p.in === 'query' && (p.required || rng.chance(0.5))) d.queryValues[p.name] = fake(p.schema, rng.int(1, 2 ** 31 - 1));
    if (p.in === 'header' && (p.required || rng.chance(0.9))) d.headers[p.name] = String(fake(p.schema, rng.int(1, 2 ** 31 - 1)));
  }
  if (op.body) {
    // Optional fields are drawn at random: an edit may come out empty, which its schema refuses (minProperties).
    for (let i = 0; i < 20 && (d.body === undefined || !isValid(op.body, d.body)); i++) {
      d.body = fake(op.body, rng.int(1, 2 ** 31 - 1)) as Record<string, Json>;
    }
  }
  arrange(d, state, rng);
  // Ajv2020 confirms that the arranged values are still valid for their schemas.
  for (const [name, value] of Object.entries(d.queryValues)) {
    const p = op.params.find((x) => x.in === 'query' && x.name === name)!;
    if (!isValid(p.schema, value)) throw new Error(`generated query ${name}=${JSON.stringify(value)} is not valid for ${JSON.stringify(p.schema)}`);
  }
  for (const p of op.params.filter((x) => x.in === 'header' && d.headers[x.name] !== undefined)) {
    if (!isValid(p.schema, d.headers[p.name])) throw new Error(`generated header ${p.name} is not valid`);
  }
  if (op.body && !isValid(op.body, d.body)) throw new Error(`generated body ${JSON.stringify(d.body)} is not valid for ${op.id}`);
  d.query = Object.entries(d.queryValues).map(([k, v]) => [k, String(v)]);
  return d;
}

export function toRequest(
  d: Draft,
  kind: string,
  expect: FuzzRequest['expect'],
  extra: { payload?: string; contentType?: string | null; auth?: string | null } = {},
): FuzzRequest {
  const qs = d.query.map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v)}`).join('&');
  const headers: Record<string, string> = { ...d.headers };
  const auth = extra.auth === undefined ? `Bearer ${KEYS.acme}` : extra.auth;
  if (auth !== null) headers.authorization = auth;
  let payload = extra.payload;
  if (d.body !== undefined && payload === undefined) payload = JSON.stringify(d.body);
  if (payload !== undefined) {
    const ct = extra.contentType === undefined ? 'application/json' : extra.contentType;
    if (ct !== null) headers['content-type'] = ct;
  }
  return { op: d.op.id, kind, method: d.op.method, url: `${d.prefix}${d.path}${qs ? `?${qs}` : ''}`, headers, payload, expect };
}

/** What the contract says a valid request answers, given what this organization already holds. */
function validOutcome(d: Draft, state: FuzzState): FuzzRequest['expect'] {
  const ok = [{ status: 200 }];
  // The state does not follow each action's status: done <-> cancelled is refused (CONTRACT section 5).
  if (d.op.method === 'PATCH' && (d.body?.status === 'done' || d.body?.status === 'cancelled')) {
    return [...ok, { status: 409, code: 'invalid_transition' }];
  }
  if (d.op.method !== 'POST') return ok;
  const key = d.headers['idempotency-key'];
  const fingerprint = `POST ${d.path} ${canonicalJson(d.body)}`;
  const seen = state.idempotency.get(key);
  if (seen !== undefined && seen !== fingerprint) return [{ status: 409, code: 'idempotency_key_reused' }];
  if (seen === fingerprint) return ok; // a replay
  if (d.op.path === '/teams' && state.teamNames.has(String(d.body!.name).trim().toLowerCase())) {
    return [{ status: 409, code: 'team_name_taken' }];
  }
  return ok;
}

export function validRequest(op: Operation, state: FuzzState, rng: Rng): { req: FuzzRequest; draft: Draft } {
  const d = draftValid(op, state, rng);
  return { req: toRequest(d, 'valid', validOutcome(d, state)), draft: d };
}

// ---------------------------------------------------------------------------------------------
// Invalid requests: one valid request, broken once.

const WRONG_VALUES: [string, Json][] = [
  ['integer', 42],
  ['number', 1.5],
  ['boolean', true],
  ['boolean', false],
  ['array', ['x']],
  ['object', { x: 1 }],
  ['null', null],
  ['string', 'text'],
];

/** A value of a JSON type the schema does not admit. */
export function wrongType(schema: Schema, rng: Rng): Json | undefined {
  const ok = typesOf(schema);
  const admits = (t: string) => ok.includes(t) || (t === 'integer' && ok.includes('number'));
  const candidates = WRONG_VALUES.filter(([t]) => !admits(t)).map(([, v]) => v);
  return candidates.length ? rng.pick(candidates) : undefined;
}

/** A string that breaks the schema's bounds, format or pattern. */
export function badString(schema: Schema, rng: Rng): string | undefined {
  const s = stringBranch(schema);
  if (!s) return undefined;
  const options: string[] = [];
  if (typeof s.maxLength === 'number') options.push('x'.repeat(s.maxLength + rng.int(1, 20)));
  if (typeof s.minLength === 'number' && s.minLength > 0 && !s.format) options.push('y'.repeat(s.minLength - 1));
  if (s.format === 'date-time')
    options.push(rng.pick(['2026-11-20T10:00:00', '2026-13-01T00:00:00Z', 'yesterday', '2026-11-20', '2026-02-30T00:00:00Z', '20261120T100000Z']));
  if (s.format === 'date') options.push(rng.pick(['2026-02-30', '2026-11-20T00:00:00Z', '20261120', 'today', '2026-13-01']));
  if (s.pattern === '\\S') options.push(rng.pick([' ', '   ', '\t', ' \n ']));
  if (typeof s.pattern === 'string' && s.pattern.startsWith('^[A-Za-z0-9._:-]')) options.push('bad key with spaces!');
  return options.length ? rng.pick(options) : undefined;
}

export function badQueryValue(p: Parameter, rng: Rng): string | undefined {
  const s = p.schema;
  if (s.type === 'integer') {
    const digits = (n: number) => Array.from({ length: n }, (_, i) => (i === 0 ? rng.int(1, 9) : rng.int(0, 9))).join('');
    const options = [
      'abc',
      '1.5',
      '1e3',
      '',
      'NaN',
      '0x10',
      String((s.maximum as number) + rng.int(1, 1000)),
      String((s.minimum as number) - rng.int(1, 1000)),
      // Huge (309+ digits become Infinity as a double), negative, exponents, and digits that are not ASCII.
      digits(rng.int(16, 400)),
      `-${digits(rng.int(1, 400))}`,
      `+${digits(rng.int(309, 400))}`,
      `${'0'.repeat(rng.int(1, 400))}${digits(rng.int(4, 20))}`,
      `${rng.int(1, 9)}e${rng.int(1, 400)}`,
      `-${rng.int(1, 9)}e${rng.int(300, 400)}`,
      'Infinity',
      '-Infinity',
      '9007199254740993',
      encodeURIComponent(rng.pick(['٣', '١٠', '１', '৫', '߃', '𝟓', '³', 'Ⅻ'])),
    ];
    return rng.pick(options);
  }
  return badString(s, rng);
}

export const MUTATIONS = [
  'body-wrong-type',
  'body-missing-required',
  'body-out-of-bounds',
  'body-bad-format',
  'body-extra-property',
  'body-not-object',
  'body-bad-json',
  'content-type-wrong',
  'content-type-missing',
  'query-wrong-value',
  'query-extra-parameter',
  'query-duplicate-parameter',
  'query-bad-cursor',
  'query-empty-range',
  'path-too-long',
  'authorization-broken',
  'idempotency-key-missing',
  'idempotency-key-malformed',
] as const;
export type Mutation = (typeof MUTATIONS)[number];

const INVALID_REQUEST = [{ status: 400, code: 'invalid_request' }];
const INVALID_JSON = [{ status: 400, code: 'invalid_json' }];

/** Whether `mutation` can break a request of `op`. */
export function applies(op: Operation, m: Mutation): boolean {
  const query = op.params.filter((p) => p.in === 'query').map((p) => p.name);
  const props = Object.values((op.body?.properties ?? {}) as Record<string, Schema>);
  if (m.startsWith('body-') || m.startsWith('content-type-')) {
    if (!op.body) return false;
    if (m === 'body-missing-required') return Boolean((op.body.required as string[] | undefined)?.length || op.body.minProperties);
    if (m === 'body-out-of-bounds') return props.some((s) => typeof stringBranch(s)?.maxLength === 'number');
    if (m === 'body-bad-format') return props.some((s) => Boolean(stringBranch(s)?.format || stringBranch(s)?.pattern));
    if (m === 'body-wrong-type') return props.length > 0;
    return true;
  }
  if (m === 'query-wrong-value') return query.some((n) => n !== 'cursor');
  if (m === 'query-bad-cursor') return query.includes('cursor');
  if (m === 'query-empty-range') return query.includes('from') && query.includes('to');
  if (m === 'path-too-long') return op.path.includes('{id}');
  if (m.startsWith('idempotency-key-')) return op.method === 'POST';
  return true;
}

/** Applies `mutation` to a valid request of `op`; undefined when it does not apply to the operation. */
export function invalidRequest(op: Operation, state: FuzzState, rng: Rng, mutation: Mutation): FuzzRequest | undefined {
  const d = draftValid(op, state, rng);
  const props = (op.body?.properties ?? {}) as Record<string, Schema>;
  const names = Object.keys(props);
  const queryParams = op.params.filter((p) => p.in === 'query');
  switch (mutation) {
    case 'body-wrong-type': {
      if (!d.body || !names.length) return undefined;
      const name = rng.pick(names);
      const value = wrongType(props[name], rng);
      if (value === undefined) return undefined;
      d.body[name] = value;
      return toRequest(d, mutation, INVALID_REQUEST);
    }
    case 'body-missing-required': {
      if (!d.body) return undefined;
      const required = (op.body!.required ?? []) as string[];
      if (required.length) delete d.body[rng.pick(required)];
      else if (typeof op.body!.minProperties === 'number') d.body = {};
      else return undefined;
      return toRequest(d, mutation, INVALID_REQUEST);
    }
    case 'body-out-of-bounds':
    case 'body-bad-format': {
      if (!d.body) return undefined;
      const fit = names.filter((n) => {
        const s = stringBranch(props[n]);
        if (!s) return false;
        return mutation === 'body-bad-format' ? Boolean(s.format || s.pattern) : typeof s.maxLength === 'number';
      });
      if (!fit.length) return undefined;
      const name = rng.pick(fit);
      const s = stringBranch(props[name])!;
      const value =
        mutation === 'body-out-of-bounds'
          ? rng.chance(0.7) || !(typeof s.minLength === 'number' && s.minLength > 1)
            ? 'z'.repeat((s.maxLength as number) + rng.int(1, 50))
            : 'z'.repeat((s.minLength as number) - 1)
          : badString({ ...s, maxLength: undefined, minLength: undefined }, rng);
      if (value === undefined) return undefined;
      d.body[name] = value;
      return toRequest(d, mutation, INVALID_REQUEST);
    }
    case 'body-extra-property': {
      if (!d.body) return undefined;
      d.body[rng.pick(['status', 'startDate', 'id', 'orgId', 'extra', '__proto__x', 'createdAt'])] = rng.pick<Json>(['x', 1, true, null]);
      return toRequest(d, mutation, INVALID_REQUEST);
    }
    case 'body-not-object':
      if (!d.body) return undefined;
      return toRequest(d, mutation, INVALID_JSON, { payload: rng.pick(['[]', JSON.stringify([d.body]), '"text"', '42', 'null', 'true']) });
    case 'body-bad-json':
      if (!d.body) return undefined;
      return toRequest(d, mutation, INVALID_JSON, {
        payload: rng.pick(['{', '{"title":', "{'title':'x'}", '{"a":1,}', 'undefined', JSON.stringify(d.body).slice(0, -1)]),
      });
    case 'content-type-wrong':
      if (!d.body) return undefined;
      return toRequest(d, mutation, INVALID_JSON, {
        contentType: rng.pick(['text/plain', 'application/xml', 'application/x-www-form-urlencoded', 'text/json']),
      });
    case 'content-type-missing':
      if (!d.body) return undefined;
      return toRequest(d, mutation, INVALID_JSON, { contentType: null });
    case 'query-wrong-value': {
      const fit = queryParams.filter((p) => p.name !== 'cursor' && badQueryValue(p, new Rng(1)) !== undefined);
      if (!fit.length) return undefined;
      const p = rng.pick(fit);
      d.query = d.query.filter(([k]) => k !== p.name);
      d.query.push([p.name, badQueryValue(p, rng)!]);
      return toRequest(d, mutation, INVALID_REQUEST);
    }
    case 'query-extra-parameter':
      d.query.push([rng.pick(['foo', 'page', 'offset', 'orgId', 'sort', 'LIMIT', 'q']), rng.pick(['1', 'x', ''])]);
      return toRequest(d, mutation, INVALID_REQUEST);
    case 'query-duplicate-parameter': {
      const name = queryParams.length ? rng.pick(queryParams).name : 'foo';
      const existing = d.query.find(([k]) => k === name);
      const value = existing?.[1] ?? '1';
      d.query.push([name, value], [name, value]);
      if (existing) d.query.splice(d.query.indexOf(existing), 1);
      return toRequest(d, mutation, INVALID_REQUEST);
    }
    case 'query-bad-cursor': {
      if (!queryParams.some((p) => p.name === 'cursor')) return undefined;
      const garbage = rng.pick(['garbage', 'x'.repeat(rng.int(1, 300)), 'not-a-cursor', '%%%', 'eyJhIjoxfQ', 'AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA']);
      d.query.push(['cursor', garbage]);
      return toRequest(d, mutation, [{ status: 400, code: 'invalid_cursor' }]);
    }
    case 'query-empty-range': {
      const from = queryParams.find((p) => p.name === 'from');
      if (!from || !queryParams.some((p) => p.name === 'to')) return undefined;
      const t = NOW.getTime() - rng.int(1, 100) * DAY;
      const [a, b] =
        from.schema.format === 'date'
          ? [new Date(t).toISOString().slice(0, 10), new Date(t - DAY).toISOString().slice(0, 10)] // from after to
          : [new Date(t).toISOString(), new Date(t - rng.int(0, 1) * DAY).toISOString()]; // from >= to
      d.query = d.query.filter(([k]) => k !== 'from' && k !== 'to');
      d.query.push(['from', a], ['to', b]);
      return toRequest(d, mutation, INVALID_REQUEST);
    }
    case 'path-too-long':
      if (!op.path.includes('{id}')) return undefined;
      d.path = op.path.replace('{id}', 'a'.repeat(rng.int(129, 400)));
      return toRequest(d, mutation, INVALID_REQUEST);
    case 'authorization-broken': {
      const auth = rng.pick<string | null>([
        null,
        '',
        'Bearer',
        'Bearer ',
        `Basic ${Buffer.from('user:pass').toString('base64')}`,
        `Token ${KEYS.acme}`,
        `Bearer ${KEYS.acme}x`,
        `Bearer ${KEYS.acmeRevoked}`,
        'Bearer cp_live_unknown_0123456789abcdef',
        `Bearer  ${KEYS.acme} extra`,
        KEYS.acme,
      ]);
      return toRequest(d, mutation, [{ status: 401, code: 'unauthorized' }], { auth });
    }
    case 'idempotency-key-missing':
      if (op.method !== 'POST') return undefined;
      if (rng.chance(0.5)) delete d.headers['idempotency-key'];
      else d.headers['idempotency-key'] = '';
      return toRequest(d, mutation, [{ status: 400, code: 'idempotency_key_required' }]);
    case 'idempotency-key-malformed':
      if (op.method !== 'POST') return undefined;
      d.headers['idempotency-key'] = rng.pick([
        'short',
        'k'.repeat(rng.int(129, 300)),
        'has space in it',
        'semi;colon;key',
        'ümlaut-key-123',
        'slash/in/key',
        '1234567',
      ]);
      return toRequest(d, mutation, [{ status: 400, code: 'invalid_idempotency_key' }]);
  }
}

// ---------------------------------------------------------------------------------------------
// Sending and judging

const responseValidators = new WeakMap<object, InstanceType<typeof Ajv2020>>();
const pointer = (...parts: string[]) => parts.map((p) => p.replace(/~/g, '~0').replace(/\//g, '~1')).join('/');

/** Checks an answer against the document: its status is documented for the operation and its body matches. */
export function documentedProblem(doc: Doc, op: Operation, res: LightMyRequestResponse): string | undefined {
  const status = String(res.statusCode);
  if (!op.statuses.includes(status)) return `status ${status} is not documented for ${op.id}`;
  let v = responseValidators.get(doc);
  if (!v) {
    v = new Ajv2020({ strict: false, allErrors: true });
    addFormats(v);
    v.addSchema(doc as object, 'doc');
    responseValidators.set(doc, v);
  }
  const ref = `doc#/${pointer('paths', op.path, op.method.toLowerCase(), 'responses', status, 'content', 'application/json', 'schema')}`;
  const validate = v.getSchema(ref) ?? v.compile({ $ref: ref });
  let body: unknown;
  try {
    body = res.json();
  } catch {
    return `body is not JSON: ${res.body.slice(0, 200)}`;
  }
  if (!validate(body)) return `body does not match the ${status} schema: ${v.errorsText(validate.errors)}`;
  if (!res.headers['x-request-id']) return 'no X-Request-Id header';
  return undefined;
}

export interface Outcome {
  req: FuzzRequest;
  status: number;
  body: string;
  problem?: string;
}

/** Sends one request and judges the answer; records what a successful write changed. */
export async function send(t: FuzzTarget, req: FuzzRequest): Promise<Outcome> {
  const op = t.ops.find((o) => o.id === req.op)!;
  const res = await t.app.inject({ method: req.method, url: req.url, headers: req.headers, payload: req.payload } as InjectOptions);
  const out: Outcome = { req, status: res.statusCode, body: res.body };
  const code = res.statusCode >= 400 ? (res.json() as { error?: { code?: string } }).error?.code : undefined;
  if (res.statusCode >= 500) out.problem = `server error ${res.statusCode}`;
  else if (!req.expect.some((e) => e.status === res.statusCode && (e.code === undefined || e.code === code))) {
    out.problem = `expected ${req.expect.map((e) => `${e.status}${e.code ? ` ${e.code}` : ''}`).join(' or ')}, got ${res.statusCode}${code ? ` ${code}` : ''}`;
  } else {
    out.problem = documentedProblem(t.doc, op, res);
  }
  if (res.statusCode === 200 && req.method === 'POST') {
    const key = req.headers['idempotency-key'];
    const path = req.url
      .split('?')[0]
      .replace(/^\/api\/v1/, '/v1')
      .replace(/^\/v1/, '');
    t.state.idempotency.set(key, `POST ${path} ${canonicalJson(JSON.parse(req.payload!))}`);
    const created = res.json() as { id: string; name?: string };
    if (op.path === '/teams' && created.name !== undefined) {
      if (!t.state.teamIds.includes(created.id)) t.state.teamIds.push(created.id);
      t.state.teamNames.add(created.name.trim().toLowerCase());
    }
    if (op.path === '/actions' && !t.state.actionIds.includes(created.id)) t.state.actionIds.push(created.id);
  }
  return out;
}

/** A valid GET that answered with a cursor is walked one page further: the cursor must be accepted. */
async function followCursor(t: FuzzTarget, d: Draft, first: Outcome): Promise<Outcome | undefined> {
  if (first.status !== 200 || d.op.method !== 'GET') return undefined;
  const next = (JSON.parse(first.body) as { nextCursor?: string | null }).nextCursor;
  if (!next) return undefined;
  const page: Draft = { ...d, query: [...d.query.filter(([k]) => k !== 'cursor'), ['cursor', next]] };
  return send(t, toRequest(page, 'valid-next-page', [{ status: 200 }]));
}

// ---------------------------------------------------------------------------------------------
// The property

export interface FuzzStats {
  runs: number;
  byKind: Record<string, number>;
  byOperation: Record<string, { valid: number; invalid: number }>;
  statuses: Record<string, number>;
}

export interface FuzzResult {
  seed: number;
  ok: boolean;
  stats: FuzzStats;
  failure?: string;
}

/** Runs `runs` randomized cases under fast-check; each case is one operation, valid or broken once. */
export async function fuzz(t: FuzzTarget, opts: { seed: number; runs: number }): Promise<FuzzResult> {
  const stats: FuzzStats = { runs: 0, byKind: {}, byOperation: {}, statuses: {} };
  const tally = (o: Outcome) => {
    stats.byKind[o.req.kind] = (stats.byKind[o.req.kind] ?? 0) + 1;
    const s = (stats.byOperation[o.req.op] ??= { valid: 0, invalid: 0 });
    if (o.req.kind.startsWith('valid')) s.valid++;
    else s.invalid++;
    const k = `${o.status}`;
    stats.statuses[k] = (stats.statuses[k] ?? 0) + 1;
  };
  const describe = (o: Outcome) =>
    `${o.problem}\n  ${o.req.kind}: ${o.req.method} ${o.req.url}\n  headers: ${JSON.stringify(o.req.headers)}\n  payload: ${o.req.payload ?? '(none)'}\n  answer: ${o.status} ${o.body.slice(0, 500)}`;

  const property = fc.asyncProperty(
    fc.nat({ max: t.ops.length - 1 }),
    fc.boolean(),
    fc.nat({ max: 1_000_000 }),
    fc.integer({ min: 1, max: 2 ** 31 - 1 }),
    async (opIndex, broken, mutationIndex, seed) => {
      stats.runs++;
      const op = t.ops[opIndex];
      const rng = new Rng(seed);
      if (broken) {
        // One of the mutations that apply to this operation, each as likely.
        const candidates = MUTATIONS.filter((m) => applies(op, m));
        const mutation = candidates[mutationIndex % candidates.length];
        const req = invalidRequest(op, t.state, rng, mutation);
        if (!req) throw new Error(`${mutation} does not apply to ${op.id} after all`);
        const o = await send(t, req);
        tally(o);
        if (o.problem) throw new Error(describe(o));
        return;
      }
      const { req, draft } = validRequest(op, t.state, rng);
      const o = await send(t, req);
      tally(o);
      if (o.problem) throw new Error(describe(o));
      const next = await followCursor(t, draft, o);
      if (next) {
        tally(next);
        if (next.problem) throw new Error(describe(next));
      }
    },
  );
  // The server's state moves on with every run, so a shrunk replay is not the same experiment:
  // report the first failure as found, with the seed that reproduces the whole run.
  const details = await fc.check(property, { seed: opts.seed, numRuns: opts.runs, endOnFailure: true });
  const failure = details.failed
    ? `${details.errorInstance instanceof Error ? details.errorInstance.message : String(details.errorInstance)}\n  counterexample: ${JSON.stringify(details.counterexample)} (run ${details.numRuns})`
    : undefined;
  return { seed: opts.seed, ok: !details.failed, stats, failure };
}
