/**
 * Contract fuzzing of the operator API (/admin/v1) from its own served document, GET
 * /admin/v1/openapi.json: shared by test/contract/fuzz-admin.test.ts (fixed seed, bounded runs)
 * and scripts/fuzz.ts (`npm run fuzz -- --api admin`). The public API's fuzzer is
 * test/contract/fuzz-lib.ts, whose helpers this one reuses.
 *
 * Every operation is read from the document. Valid requests are generated from its schemas by
 * json-schema-faker (seeded; arrays and strings bounded so a request stays small), then
 * arranged to what a schema cannot say: ids that exist (organizations, keys, pulses, alerts,
 * webhook endpoints and deliveries: the fixture's, made in a set-up step, or learned from
 * answers), a plan that exists, an expiry in the future, a team of the organization, a real
 * ISO week, a public https:// webhook URL. A model of what the server holds says what each one
 * must answer, the documented 404 for a deleted or erased organization and the 409
 * pulse_conflict included, and what its answer must say (counts, the previous moderation
 * status, the keys and endpoints listed). Ajv2020 confirms every arranged value is still valid
 * for its schema.
 *
 * Broken requests are a valid one broken once (ADMIN_MUTATIONS); each must get its 4xx with the
 * contract's code. Every answer: no 5xx, a status the document lists for the operation, a
 * media type it lists for that status, a body matching the documented schema, X-Request-Id.
 *
 * Webhook endpoints point at https://hooks.example.com/..., a name that does not resolve: a test
 * ping fails at once (and leaves a failed delivery to replay); no delivery worker runs here.
 * No module here imports vitest: the script runs outside the test runner.
 */
import { request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { FastifyInstance, InjectOptions, LightMyRequestResponse } from 'fastify';
import fc from 'fast-check';
import { buildAdminApp } from '../../src/admin/app.js';
import { loadConfig, type Config } from '../../src/config.js';
import { loadDataset, type Dataset } from '../../src/domain/dataset.js';
import { KEYS, NOW, readDataset } from '../fixtures/dataset.js';
import { createFuzzDatabase as createTestDatabase } from './fuzz-db.js';
import {
  DAY,
  Rng,
  badQueryValue,
  badString,
  documentedProblem,
  fake,
  into,
  isValid,
  operationsOf,
  stringBranch,
  typesOf,
  wrongType,
  type Doc,
  type FuzzResult,
  type FuzzStats,
  type Json,
  type Operation,
  type Schema,
} from './fuzz-lib.js';

/** The seed of the CI run; `npm run fuzz -- --api admin` picks a random one unless given `--seed`. */
export const ADMIN_CI_SEED = 20261201;

export const ADMIN_TOKEN = 'fuzz-operator-token-0123456789abcdefghijklmnopqrstuvwxyz';
const BEARER = `Bearer ${ADMIN_TOKEN}`;

/** Small, so that a broken import passes them cheaply; a valid import stays far below both. */
const IMPORT_MAX_BYTES = 128 * 1024;
const IMPORT_MAX_LINE_BYTES = 16 * 1024;

/** Generated arrays and strings stay small (the schemas allow 1,000 pulses of 10,000 characters). */
const BOUNDS = { maxItems: 4, maxLength: 40 };

type Obj = Record<string, Json>;
type Expect = { status: number; code?: string };
const INVALID: Expect[] = [{ status: 400, code: 'invalid_request' }];
const INVALID_JSON: Expect[] = [{ status: 400, code: 'invalid_json' }];
/** Invitations the run made and has not revoked, per organization: revokeInvitation takes one. */
const pendingInvitations = new Map<string, string[]>();
const NOT_FOUND: Expect[] = [{ status: 404, code: 'not_found' }];
/** Respondents the run added and has not removed, per organization (issue 45): move and remove take one. */
const respondents = new Map<string, string[]>();
const UNAUTHORIZED: Expect[] = [{ status: 401, code: 'unauthorized' }];
const TOO_LARGE: Expect[] = [{ status: 400, code: 'payload_too_large' }];

// ---------------------------------------------------------------------------------------------
// What the server holds, as far as the fuzzer wrote or read it

type ModerationStatus = 'CLEAN' | 'FLAGGED';

interface PulseModel {
  level: number;
  reason: string | null;
  subteamId: string | null;
  createdAt: string; // canonical
  status: ModerationStatus;
}

interface OrgModel {
  id: string;
  deleted: boolean;
  /** The fixture's live organizations hold its data: the fuzzer never deletes them. */
  fixture: boolean;
  teams: string[];
  pulses: Map<string, PulseModel>;
  alerts: string[];
  keys: Map<string, string>; // key id -> display prefix
}

interface DeliveryModel {
  orgId: string;
  endpointId: string;
  status: 'failed' | 'pending' | 'other';
}

export interface AdminState {
  /** Every organization that exists, deleted ones too (erased ones are gone: their id is free again). */
  orgs: Map<string, OrgModel>;
  erased: string[];
  plans: Set<string>;
  endpoints: Map<string, string>; // endpoint id -> organization id
  /** Endpoints disabled (by disableWebhookEndpoint; nothing here answers 410). */
  disabled: Set<string>;
  deliveries: Map<string, DeliveryModel>;
  /** Every alert id the engine answered with: an alert is raised once. */
  raised: Set<string>;
  seq: number;
}

export interface AdminTarget {
  app: FastifyInstance;
  doc: Doc;
  ops: Operation[];
  state: AdminState;
  config: Config;
  port: number;
  /** What the server logged at level error (a 5xx's cause), newest last. */
  serverErrors: string[];
  close(): Promise<void>;
}

function initialState(dataset: Dataset): AdminState {
  const orgs = new Map<string, OrgModel>();
  for (const o of dataset.organizations ?? []) {
    const pulses = new Map<string, PulseModel>();
    for (const p of (o.pulses ?? []) as {
      id: string;
      level: number;
      reason?: string | null;
      subteamId?: string | null;
      createdAt: string;
      moderationStatus: ModerationStatus;
    }[]) {
      pulses.set(p.id, {
        level: p.level,
        reason: p.reason ?? null,
        subteamId: p.subteamId ?? null,
        createdAt: new Date(p.createdAt).toISOString(),
        status: p.moderationStatus,
      });
    }
    orgs.set(o.id, {
      id: o.id,
      deleted: o.deletedAt != null,
      fixture: o.deletedAt == null,
      teams: (o.teams ?? []).map((t) => t.id),
      pulses,
      alerts: (o.alerts ?? []).map((a) => a.id),
      keys: new Map(),
    });
  }
  return {
    orgs,
    erased: [],
    plans: new Set(['free', 'business', 'enterprise', ...(dataset.plans ?? []).map((p) => p.name)]),
    endpoints: new Map(),
    disabled: new Set(),
    deliveries: new Map(),
    raised: new Set(),
    seq: 0,
  };
}

/**
 * The fixture's organizations on a fresh database and the operator app with its token, listening
 * on a loopback port too (a path with `.` or `..` segments must reach it as written, which
 * inject's URL parsing never does). Then the set-up: the keys of every live organization, a
 * webhook endpoint in two of them and a failed delivery to replay.
 */
export async function startAdminTarget(): Promise<AdminTarget> {
  const tdb = await createTestDatabase();
  const dataset = readDataset();
  await loadDataset(tdb.db, dataset);
  const config = loadConfig({
    LOG_LEVEL: 'silent',
    MAX_EVENT_LOOP_DELAY_MS: '0',
    WEBHOOK_TIMEOUT_MS: '250', // a ping gives up soon, whatever the resolver does with hooks.example.com
    IMPORT_MAX_BYTES: String(IMPORT_MAX_BYTES),
    IMPORT_MAX_LINE_BYTES: String(IMPORT_MAX_LINE_BYTES),
  });
  const serverErrors: string[] = [];
  const app = await buildAdminApp(config, {
    db: tdb.db,
    token: ADMIN_TOKEN,
    now: () => new Date(NOW),
    logger: { level: 'error', stream: { write: (line: string) => void serverErrors.splice(0, serverErrors.length - 9, line.slice(0, 2000)) } },
  });
  await app.listen({ host: '127.0.0.1', port: 0 });
  const port = (app.server.address() as AddressInfo).port;
  const doc = (await app.inject({ url: '/admin/v1/openapi.json', headers: { authorization: BEARER } })).json() as Doc;
  const t: AdminTarget = {
    app,
    doc,
    ops: operationsOf(doc),
    state: initialState(dataset),
    config,
    port,
    serverErrors,
    async close() {
      await app.close();
      await tdb.close();
    },
  };
  await setUp(t);
  return t;
}

async function setUp(t: AdminTarget) {
  const call = async (method: 'GET' | 'POST', url: string, body?: object) => {
    const res = await t.app.inject({ method, url, headers: { authorization: BEARER }, ...(body ? { payload: body } : {}) });
    if (res.statusCode >= 300) throw new Error(`set-up: ${method} ${url} answered ${res.statusCode} ${res.body}`);
    return res.json();
  };
  const s = t.state;
  for (const org of s.orgs.values()) {
    if (org.deleted) continue;
    for (const k of (await call('GET', `/admin/v1/organizations/${org.id}/keys`)).items as { id: string; prefix: string }[]) org.keys.set(k.id, k.prefix);
  }
  for (const orgId of ['org_acme', 'org_beta']) {
    const e = (await call('POST', `/admin/v1/organizations/${orgId}/webhook-endpoints`, { url: `https://hooks.example.com/setup/${orgId}` })) as { id: string };
    s.endpoints.set(e.id, orgId);
    const ping = (await call('POST', `/admin/v1/webhook-endpoints/${e.id}/test`)) as { deliveryId: string; outcome: string };
    s.deliveries.set(ping.deliveryId, { orgId, endpointId: e.id, status: ping.outcome === 'failed' ? 'failed' : 'other' });
  }
}

function eraseFromModel(s: AdminState, orgId: string) {
  s.orgs.delete(orgId);
  s.erased.push(orgId);
  for (const [id, owner] of s.endpoints) if (owner === orgId) s.endpoints.delete(id);
  for (const [id, d] of s.deliveries) if (d.orgId === orgId) s.deliveries.delete(id);
  // Its invitations went with it: an organization made again with this id has none (the model
  // kept them, and revoked one of the erased organization's: a 404 the 50,000-run fuzz found).
  pendingInvitations.delete(orgId);
}

// ---------------------------------------------------------------------------------------------
// Requests

interface Answer {
  status: number;
  headers: Record<string, string | string[] | number | undefined>;
  body: string;
}

/** What a request must answer beyond its status: a problem, or undefined. `json` is the parsed body (the text for NDJSON). */
// biome-ignore lint/suspicious/noExplicitAny: answers are checked field by field against the model
type Check = (json: any, a: Answer) => string | undefined;

interface Draft {
  op: Operation;
  mode: Mode;
  path: Record<string, string>;
  queryValues: Record<string, Json>;
  query: [string, string][];
  body?: Json;
  /** importPulses' body: the file. */
  file?: { text: string; contentType: string };
  auth: string;
  requestId?: string;
  expect: Expect[];
  check?: Check;
  /** What a successful answer changed, told to the model. */
  // biome-ignore lint/suspicious/noExplicitAny: answers are checked field by field against the model
  learn?: (json: any) => void;
}

export interface AdminRequest {
  op: string;
  kind: string;
  method: string;
  url: string;
  headers: Record<string, string | string[]>;
  payload?: string;
  /** Sent over a socket with the path exactly as written (inject resolves `.` and `..` segments). */
  raw?: boolean;
  requestId?: string;
  expect: Expect[];
  check?: Check;
  learn?: Draft['learn'];
}

/** 'any': valid requests, now and then about a deleted or unknown thing; 'present': what a broken request starts from. */
type Mode = 'any' | 'present';

const seedOf = (rng: Rng) => rng.int(1, 2 ** 31 - 1);

/**
 * The schema to draw from: a string allowed to be longer than DRAW_MAX_LENGTH (the roster's CSV
 * body takes 4,000,000 characters) is drawn at most that long. json-schema-faker draws a length
 * up to the schema's maximum, and megabytes of random text cost seconds a draw (41 of the 45 s
 * of a 400-request run went to 14 such draws). Every such value is arranged after the draw.
 */
const DRAW_MAX_LENGTH = 4096;
const drawable = new WeakMap<Schema, Schema>();
function forDraw(schema: Schema): Schema {
  let d = drawable.get(schema);
  if (!d) {
    d = JSON.parse(JSON.stringify(schema), (k, v) => (k === 'maxLength' && typeof v === 'number' && v > DRAW_MAX_LENGTH ? DRAW_MAX_LENGTH : v)) as Schema;
    drawable.set(schema, d);
  }
  return d;
}

function generate(schema: Schema, rng: Rng): Json {
  for (let i = 0; i < 20; i++) {
    const v = fake(forDraw(schema), seedOf(rng), BOUNDS);
    if (isValid(schema, v)) return v;
  }
  throw new Error(`json-schema-faker draws nothing valid for ${JSON.stringify(schema)}`);
}

/** An instant as an RFC 3339 text: mostly the canonical form, sometimes without milliseconds or with an offset. */
function dateTimeText(ms: number, rng: Rng): string {
  const r = rng.next();
  const iso = new Date(ms).toISOString();
  const year = Number(iso.slice(0, 4));
  if (r < 0.7 || year < 2 || year > 9998) return iso;
  if (r < 0.85) return `${iso.slice(0, 19)}Z`;
  const off = rng.pick([-600, -330, -60, 60, 330, 840]);
  const local = new Date(ms + off * 60_000).toISOString().slice(0, 23);
  const a = Math.abs(off);
  return `${local}${off < 0 ? '-' : '+'}${String(Math.floor(a / 60)).padStart(2, '0')}:${String(a % 60).padStart(2, '0')}`;
}

const pad = (n: number, w: number) => String(n).padStart(w, '0');
const weekLabel = (y: number, w: number) => `${pad(y, 4)}-W${pad(w, 2)}`;

function weeksIn(year: number): number {
  const d = new Date(0);
  d.setUTCFullYear(year, 0, 1);
  const dow = d.getUTCDay();
  const leap = (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
  return dow === 4 || (leap && dow === 3) ? 53 : 52;
}

/** The ISO week of an instant of years 1000-9999. */
function isoWeekOf(ms: number): string {
  const d = new Date(ms);
  const thursday = new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate() - ((d.getUTCDay() + 6) % 7) + 3));
  const y = thursday.getUTCFullYear();
  return weekLabel(y, 1 + Math.floor((thursday.getTime() - Date.UTC(y, 0, 1)) / (7 * DAY)));
}

/** A real ISO week: mostly of the last months, sometimes of any year, sometimes the first and last weeks there are. */
function validWeek(rng: Rng): string {
  const r = rng.next();
  if (r < 0.8) return isoWeekOf(NOW.getTime() - rng.int(0, 40) * 7 * DAY);
  if (r < 0.93) {
    const y = rng.int(1, 9999);
    return weekLabel(y, rng.int(1, weeksIn(y)));
  }
  return rng.pick(['0001-W01', '0001-W02', '0001-W04', '0001-W05', '9999-W51', '9999-W52', '2020-W53', '2026-W53']);
}

function unknownOrgId(c: Ctx): string {
  if (c.s.erased.length && c.rng.chance(0.4)) {
    const id = c.rng.pick(c.s.erased);
    if (!c.s.orgs.has(id)) return id;
  }
  return `org_absent_${c.rng.int(1, 1e9)}`;
}

/** A fresh id built on a generated one (`.` and `..` are no path segment a client can send). */
function freshId(base: string, taken: (id: string) => boolean, s: AdminState): string {
  let id = base === '.' || base === '..' ? `p${base}` : base;
  while (taken(id)) id = `${base.slice(0, 100)}_${++s.seq}`;
  return id;
}

class Ctx {
  constructor(
    readonly t: AdminTarget,
    readonly d: Draft,
    readonly rng: Rng,
  ) {}
  get s() {
    return this.t.state;
  }
  get any() {
    return this.d.mode === 'any';
  }
  body(): Obj {
    return this.d.body as Obj;
  }
  /**
   * An organization: a live one (with what `need` asks for), or, for a valid request now and then,
   * a deleted one or an id that names none (an erased organization's among them). The string is
   * an unknown id.
   */
  org(need: (o: OrgModel) => boolean = () => true): OrgModel | string {
    const all = [...this.s.orgs.values()];
    const live = all.filter((o) => !o.deleted && need(o));
    const deleted = all.filter((o) => o.deleted);
    const r = this.rng.next();
    if (live.length && (!this.any || r < 0.86)) return this.rng.pick(live);
    if (deleted.length && this.any && r < 0.94) return this.rng.pick(deleted);
    return unknownOrgId(this);
  }
  setOrg(o: OrgModel | string): string {
    return (this.d.path.orgId = typeof o === 'string' ? o : o.id);
  }
  expect(e: Expect[], check?: Check, learn?: Draft['learn']) {
    this.d.expect = e;
    this.d.check = check;
    this.d.learn = learn;
  }
}

const live = (o: OrgModel | string): o is OrgModel => typeof o !== 'string' && !o.deleted;
const mismatch = (what: string, got: unknown, want: unknown) => `${what}: got ${JSON.stringify(got)}, expected ${JSON.stringify(want)}`;
const sameSet = (a: string[], b: string[]) => a.length === b.length && [...a].sort().join('\n') === [...b].sort().join('\n');

function pulseModel(p: Obj, csv = false): PulseModel {
  const reason = (p.reason ?? null) as string | null;
  return {
    level: p.level as number,
    reason: csv && reason === '' ? null : reason,
    subteamId: (p.subteamId ?? null) as string | null,
    createdAt: new Date(p.createdAt as string).toISOString(),
    status: p.moderationStatus as ModerationStatus,
  };
}

/**
 * A generated pulse arranged to the rules a schema cannot state: a createdAt inside the
 * API's range (mostly the last 400 days, sometimes its first and last instants), a team of
 * the organization, an id not yet taken (by the organization or the batch).
 */
function arrangePulse(p: Obj, teams: string[], taken: (id: string) => boolean, c: Ctx) {
  const r = c.rng.next();
  const parsed = Date.parse(String(p.createdAt));
  const ms = Number.isNaN(parsed) ? NOW.getTime() : parsed;
  if (r < 0.9) p.createdAt = dateTimeText(into(ms, NOW.getTime() - 400 * DAY, NOW.getTime()), c.rng);
  else if (r < 0.95) p.createdAt = dateTimeText(into(ms, NOW.getTime() - 3650 * DAY, NOW.getTime() + 365 * DAY), c.rng);
  else p.createdAt = c.rng.pick(['0001-01-01T00:00:00.000Z', '0001-01-01T00:00:00Z', '9999-12-31T23:59:59.999Z', '9999-12-31T23:59:59Z']);
  if (typeof p.subteamId === 'string') p.subteamId = teams.length ? c.rng.pick(teams) : null;
  p.id = freshId(String(p.id), taken, c.s);
}

/** 0-4 new pulses for an organization (an import's rows): generated from ingestPulses' item schema. */
function newPulses(c: Ctx, org: OrgModel | undefined, min: number): Obj[] {
  const ingest = c.t.ops.find((o) => o.id === 'ingestPulses')!;
  const item = (ingest.body!.properties as Record<string, Schema>).pulses.items as Schema;
  const n = c.rng.int(min, 4);
  const rows: Obj[] = [];
  const seen = new Set<string>();
  for (let i = 0; i < n; i++) {
    const p = generate(item, c.rng) as Obj;
    arrangePulse(p, org?.teams ?? [], (id) => seen.has(id) || (org?.pulses.has(id) ?? false), c);
    seen.add(p.id as string);
    rows.push(p);
  }
  return rows;
}

const csvField = (v: Json | undefined) => (v === null || v === undefined ? '' : `"${String(v).replace(/"/g, '""')}"`);
const CSV_HEADER = 'id,level,reason,comment,moderationStatus,subteamId,createdAt';
const csvLine = (p: Obj) => [p.id, p.level, p.reason, p.comment, p.moderationStatus, p.subteamId, p.createdAt].map(csvField).join(',');

function fileOf(rows: (Obj | string)[], format: 'ndjson' | 'csv', rng: Rng): string {
  const eol = rng.chance(0.2) ? '\r\n' : '\n';
  const lines = rows.map((r) => (typeof r === 'string' ? r : format === 'csv' ? csvLine(r) : JSON.stringify(r)));
  if (format === 'csv') lines.unshift(CSV_HEADER);
  return lines.join(eol) + (rng.chance(0.7) ? eol : '');
}

/** The NDJSON answer of an import: progress lines, then its outcome. */
function importOutcome(text: string): { lines: Obj[]; last: Obj } | string {
  const lines: Obj[] = [];
  for (const l of text.split('\n')) {
    if (l === '') continue;
    try {
      lines.push(JSON.parse(l) as Obj);
    } catch {
      return `an answer line is not JSON: ${l.slice(0, 200)}`;
    }
  }
  const last = lines.at(-1);
  if (!last) return 'the answer is empty';
  for (const l of lines.slice(0, -1)) {
    const p = l.progress as Obj | undefined;
    if (Object.keys(l).join() !== 'progress' || !p || !['bytes', 'total', 'rows'].every((k) => Number.isInteger(p[k])))
      return `not a progress line: ${JSON.stringify(l)}`;
  }
  return { lines, last };
}

// ---------------------------------------------------------------------------------------------
// Valid requests, operation by operation: the values a schema cannot choose, and the answer the
// model expects. An operation the fuzzer does not know fails the run: it must learn it here.

type Arrange = (c: Ctx) => void;

/**
 * The operations of single sign-on, SCIM tokens, passkeys and a member's role (issues 53, 55, 56),
 * arranged loosely: the model does not keep their state, so any answer the document allows for a
 * valid request (a change made, a refusal in the contract's shape, a thing unknown) passes, and
 * the run still checks the body against the document and that nothing is a 5xx. Values the
 * service would look up on the network (an issuer, a DNS TXT record) are kept off it.
 */
const LOOSE: Expect[] = [
  { status: 200 },
  { status: 201 },
  { status: 204 },
  { status: 400, code: 'invalid_request' },
  { status: 404, code: 'not_found' },
  { status: 409 },
];
const loosely =
  (fix?: (c: Ctx) => void): Arrange =>
  (c) => {
    fix?.(c);
    const o = c.org();
    c.setOrg(o);
    // An unknown organization: 404, or 400 when the body is refused before the organization is looked up.
    if (typeof o === 'string') return c.expect([...NOT_FOUND, ...INVALID]);
    c.expect(LOOSE);
  };
const offTheNetwork = (c: Ctx) => {
  const b = c.d.body as Obj | undefined;
  if (b && typeof b === 'object' && !Array.isArray(b)) {
    if ('issuer' in b) b.issuer = 'http://127.0.0.1:9/idp';
    if ('method' in b) b.method = 'operator';
    if ('metadataUrl' in b) b.metadataUrl = 'http://127.0.0.1:9/idp-metadata';
  }
};
export const LOOSE_OPERATIONS = [
  'getSso',
  'removeSso',
  'setSsoRequirement',
  'listSsoDomains',
  'addSsoDomain',
  'removeSsoDomain',
  'createScimToken',
  'listScimTokens',
  'rollScimToken',
  'revokeScimToken',
  'getScimSettings',
  'setScimSettings',
  'listMemberPasskeys',
  'removeMemberPasskey',
  'getPasskeySettings',
  'updatePasskeySettings',
  'updateMember',
];

const ARRANGE: Record<string, Arrange> = {
  ...Object.fromEntries(LOOSE_OPERATIONS.map((id) => [id, loosely()])),
  setSsoOidc: loosely(offTheNetwork),
  setSsoSaml: loosely(offTheNetwork),
  verifySsoDomain: loosely(offTheNetwork),
  createOrganization(c) {
    const b = c.body();
    if (!c.any || c.rng.chance(0.96)) b.plan = c.rng.pick([...c.s.plans]);
    if (typeof b.id === 'string') {
      const r = c.rng.next();
      if (c.any && r < 0.1 && c.s.orgs.size) b.id = c.rng.pick([...c.s.orgs.keys()]);
      else if (r < 0.2 && c.s.erased.length) b.id = c.rng.pick(c.s.erased);
      if (!c.any) b.id = freshId(b.id as string, (id) => c.s.orgs.has(id), c.s);
    }
    const id = b.id as string | undefined;
    if (!c.s.plans.has(b.plan as string) || (id !== undefined && c.s.orgs.has(id))) return c.expect(INVALID);
    c.expect(
      [{ status: 201 }],
      (o) =>
        (id === undefined
          ? /^org_[0-9A-Za-z]{16}$/.test(o.id)
            ? undefined
            : mismatch('generated id', o.id, 'org_ + 16')
          : o.id !== id
            ? mismatch('id', o.id, id)
            : undefined) ??
        (o.plan !== b.plan
          ? mismatch('plan', o.plan, b.plan)
          : o.memberCount !== (b.memberCount ?? 0)
            ? mismatch('memberCount', o.memberCount, b.memberCount ?? 0)
            : o.deletedAt !== null
              ? 'deletedAt is set'
              : undefined),
      (o) => {
        c.s.orgs.set(o.id, { id: o.id, deleted: false, fixture: false, teams: [], pulses: new Map(), alerts: [], keys: new Map() });
        c.s.erased = c.s.erased.filter((e) => e !== o.id);
      },
    );
  },

  getOrganization(c) {
    const o = c.org();
    const id = c.setOrg(o);
    if (typeof o === 'string') return c.expect(NOT_FOUND);
    c.expect([{ status: 200 }], (r) =>
      r.id !== id ? mismatch('id', r.id, id) : (r.deletedAt === null) === o.deleted ? mismatch('deletedAt', r.deletedAt, o.deleted ? 'set' : null) : undefined,
    );
  },

  updateOrganization(c) {
    const b = c.body();
    if (b.plan !== undefined && (!c.any || c.rng.chance(0.95))) b.plan = c.rng.pick([...c.s.plans]);
    const o = c.org();
    const id = c.setOrg(o);
    // The plan is checked first; a deleted organization is not changed (issue 43: PATCH renamed one).
    if (b.plan !== undefined && !c.s.plans.has(b.plan as string)) return c.expect(INVALID);
    if (typeof o === 'string' || o.deleted) return c.expect(NOT_FOUND);
    c.expect([{ status: 200 }], (r) =>
      r.id !== id ? mismatch('id', r.id, id) : b.plan !== undefined && r.plan !== b.plan ? mismatch('plan', r.plan, b.plan) : undefined,
    );
  },

  deleteOrganization(c) {
    // Never the fixture's live organizations (their data is what the other operations work on).
    const deletable = [...c.s.orgs.values()].filter((o) => !o.fixture || o.deleted);
    const o = deletable.length && !(c.any && c.rng.chance(0.1)) ? c.rng.pick(deletable) : unknownOrgId(c);
    const id = c.setOrg(o);
    if (typeof o === 'string') return c.expect(NOT_FOUND);
    const erase = c.d.queryValues.erase === true;
    c.expect(
      [{ status: 200 }],
      (r) =>
        r.erased !== erase
          ? mismatch('erased', r.erased, erase)
          : r.organization.id !== id
            ? mismatch('id', r.organization.id, id)
            : r.organization.deletedAt === null
              ? 'deletedAt is null'
              : undefined,
      () => (erase ? eraseFromModel(c.s, id) : void (o.deleted = true)),
    );
  },

  putPlan(c) {
    const b = c.body();
    let name = c.d.path.name;
    if (c.rng.chance(0.3)) name = c.rng.pick([...c.s.plans].filter((p) => /^[A-Za-z0-9._-]{1,64}$/.test(p) && p !== '.' && p !== '..'));
    if (name === '.' || name === '..') name = `p${name}`;
    c.d.path.name = name;
    const created = !c.s.plans.has(name);
    c.expect(
      [{ status: 200 }],
      (r) =>
        r.name !== name
          ? mismatch('name', r.name, name)
          : r.created !== created
            ? mismatch('created', r.created, created)
            : r.rateLimitPerMinute !== b.rateLimitPerMinute || r.restApi !== b.restApi
              ? 'the plan is not as sent'
              : undefined,
      () => void c.s.plans.add(name),
    );
  },

  createKey(c) {
    const b = c.body();
    if (typeof b.expiresAt === 'string') {
      const ms = Date.parse(b.expiresAt);
      b.expiresAt = dateTimeText(into(Number.isNaN(ms) ? NOW.getTime() : ms, NOW.getTime() + 60_000, NOW.getTime() + 3650 * DAY), c.rng);
    }
    const o = c.org();
    c.setOrg(o);
    if (!live(o)) return c.expect(NOT_FOUND);
    const expiresAt = typeof b.expiresAt === 'string' ? new Date(b.expiresAt).toISOString() : null;
    c.expect(
      [{ status: 201 }],
      (r) =>
        r.scope !== (b.scope ?? 'read_write')
          ? mismatch('scope', r.scope, b.scope ?? 'read_write')
          : r.expiresAt !== expiresAt
            ? mismatch('expiresAt', r.expiresAt, expiresAt)
            : !String(r.key).startsWith(r.prefix)
              ? 'the key does not start with its prefix'
              : undefined,
      (r) => void o.keys.set(r.id, r.prefix),
    );
  },

  listKeys(c) {
    const o = c.org();
    c.setOrg(o);
    if (!live(o)) return c.expect(NOT_FOUND);
    c.expect([{ status: 200 }], (r) => {
      const ids = (r.items as { id: string }[]).map((k) => k.id);
      return sameSet(ids, [...o.keys.keys()]) ? undefined : mismatch('keys', ids, [...o.keys.keys()]);
    });
  },

  revokeKey(c) {
    const o = c.org((x) => x.keys.size > 0);
    c.setOrg(o);
    if (!live(o) || !o.keys.size) return c.expect(NOT_FOUND);
    const keys = [...o.keys];
    const [id, prefix] = c.rng.pick(keys);
    const r = c.rng.next();
    // The key id, or a start of its display prefix (CONTRACT: unambiguous within the organization).
    const x = !c.any || r < 0.6 ? id : r < 0.9 ? prefix.slice(0, c.rng.int(1, prefix.length)) : `key_absent_${c.rng.int(1, 1e9)}`;
    c.d.path.keyId = x;
    const matches = keys.filter(([k, p]) => k === x || p.startsWith(x));
    const exact = o.keys.has(x);
    if (!exact && matches.length === 0) return c.expect(NOT_FOUND);
    if (!exact && matches.length > 1) return c.expect(INVALID);
    const want = exact ? x : matches[0][0];
    c.expect([{ status: 200 }], (k) => (k.id !== want ? mismatch('id', k.id, want) : k.revokedAt === null ? 'revokedAt is null' : undefined));
  },

  ingestPulses(c) {
    const o = c.org();
    c.setOrg(o);
    const org = live(o) ? o : undefined;
    const pulses = (c.body().pulses as Obj[]).slice();
    const seen = new Set<string>();
    for (const p of pulses) {
      arrangePulse(p, org?.teams ?? [], (id) => seen.has(id) || (org?.pulses.has(id) ?? false), c);
      seen.add(p.id as string);
    }
    // Pulses sent again: unchanged (their moderation status and comment are not compared); one
    // with another level is the documented 409 pulse_conflict.
    const resent: string[] = [];
    let conflict = false;
    if (org?.pulses.size && c.rng.chance(0.3)) {
      const ids = [...org.pulses.keys()];
      for (let i = c.rng.int(1, 2); i > 0; i--) {
        const id = c.rng.pick(ids);
        if (seen.has(id)) continue;
        const m = org.pulses.get(id)!;
        const again: Obj = {
          id,
          level: m.level,
          moderationStatus: c.rng.pick(['CLEAN', 'FLAGGED']),
          createdAt: c.rng.chance(0.5) ? m.createdAt : dateTimeText(Date.parse(m.createdAt), c.rng),
        };
        if (m.reason !== null || c.rng.chance(0.5)) again.reason = m.reason;
        if (m.subteamId !== null || c.rng.chance(0.5)) again.subteamId = m.subteamId;
        if (c.rng.chance(0.5)) again.comment = c.rng.pick<Json>([null, 'sent again', '']);
        if (c.any && c.rng.chance(0.25)) {
          again.level = (m.level % 5) + 1;
          conflict = true;
        }
        pulses.splice(c.rng.int(0, pulses.length), 0, again);
        seen.add(id);
        resent.push(id);
      }
    }
    c.body().pulses = pulses;
    if (!org) return c.expect(NOT_FOUND);
    if (conflict) return c.expect([{ status: 409, code: 'pulse_conflict' }]);
    const fresh = pulses.filter((p) => !resent.includes(p.id as string));
    c.expect(
      [{ status: 200 }],
      (r) =>
        r.inserted !== fresh.length || r.unchanged !== resent.length
          ? mismatch('inserted, unchanged', [r.inserted, r.unchanged], [fresh.length, resent.length])
          : undefined,
      () => {
        for (const p of fresh) org.pulses.set(p.id as string, pulseModel(p));
      },
    );
  },

  moderatePulse(c) {
    const o = c.org((x) => x.pulses.size > 0);
    c.setOrg(o);
    const status = c.body().moderationStatus as ModerationStatus;
    if (!live(o) || !o.pulses.size || (c.any && c.rng.chance(0.06))) {
      c.d.path.pulseId = `p_absent_${c.rng.int(1, 1e9)}`;
      return c.expect(NOT_FOUND);
    }
    const id = c.rng.pick([...o.pulses.keys()]);
    c.d.path.pulseId = id;
    const m = o.pulses.get(id)!;
    const previous = m.status;
    c.expect(
      [{ status: 200 }],
      (r) =>
        r.pulseId !== id || r.previous !== previous || r.current !== status || r.changed !== (previous !== status)
          ? mismatch('moderation', r, { pulseId: id, previous, current: status, changed: previous !== status })
          : undefined,
      () => void (m.status = status),
    );
  },

  backupDatabase(c) {
    // The fuzzer's database is in memory or on PostgreSQL: neither is backed up this way (test/cli/backup.test.ts backs up a DATA_DIR).
    c.expect(INVALID);
  },

  runAlerts(c) {
    const b = c.body();
    b.weeks = (b.weeks as Json[]).map(() => validWeek(c.rng));
    let only: string | undefined;
    if (b.orgId !== undefined) {
      const o = c.org();
      only = b.orgId = typeof o === 'string' ? o : o.id;
      if (!live(o)) return c.expect(NOT_FOUND);
    }
    const weeks = [...new Set(b.weeks as string[])].sort();
    c.expect(
      [{ status: 200 }],
      (r) => {
        if (JSON.stringify(r.weeks) !== JSON.stringify(weeks)) return mismatch('weeks', r.weeks, weeks);
        for (const a of r.raised as { id: string; orgId: string }[]) {
          if (c.s.raised.has(a.id)) return `alert ${a.id} raised twice`;
          if (only !== undefined ? a.orgId !== only : !live(c.s.orgs.get(a.orgId) ?? '')) return `an alert of ${a.orgId} was raised`;
        }
        return undefined;
      },
      (r) => {
        for (const a of r.raised as { id: string; orgId: string }[]) {
          c.s.raised.add(a.id);
          c.s.orgs.get(a.orgId)?.alerts.push(a.id);
        }
      },
    );
  },

  markAlertRead(c) {
    const o = c.org((x) => x.alerts.length > 0);
    c.setOrg(o);
    const read = c.body().read as boolean;
    if (!live(o) || !o.alerts.length || (c.any && c.rng.chance(0.06))) {
      c.d.path.alertId = `al_absent_${c.rng.int(1, 1e9)}`;
      return c.expect(NOT_FOUND);
    }
    const id = (c.d.path.alertId = c.rng.pick(o.alerts));
    c.expect([{ status: 200 }], (r) =>
      r.id !== id ? mismatch('id', r.id, id) : (r.readAt === null) === read ? mismatch('readAt', r.readAt, read ? 'set' : null) : undefined,
    );
  },

  listWebhookEndpoints(c) {
    const o = c.org();
    const id = c.setOrg(o);
    if (!live(o)) return c.expect(NOT_FOUND);
    const want = [...c.s.endpoints].filter(([, owner]) => owner === id).map(([e]) => e);
    c.expect([{ status: 200 }], (r) => {
      const ids = (r.items as { id: string }[]).map((e) => e.id);
      return sameSet(ids, want) ? undefined : mismatch('endpoints', ids, want);
    });
  },

  createWebhookEndpoint(c) {
    const b = c.body();
    // A public https:// URL (private, loopback and http:// ones are refused); the name does not resolve.
    b.url = `https://hooks.example.com${c.rng.pick(['', ':8443'])}/${c.rng.pick(['x', 'hooks/climate', 'a/b?c=d', 'cp'])}/${++c.s.seq}`;
    const o = c.org();
    const id = c.setOrg(o);
    if (!live(o)) return c.expect(NOT_FOUND);
    const types = (b.eventTypes ?? ['alert.created', 'action.created', 'action.updated']) as string[];
    c.expect(
      [{ status: 201 }],
      (r) =>
        r.orgId !== id
          ? mismatch('orgId', r.orgId, id)
          : !sameSet(r.eventTypes, types)
            ? mismatch('eventTypes', r.eventTypes, types)
            : !r.enabled || !String(r.secret).startsWith('whsec_')
              ? 'not enabled, or no whsec_ secret'
              : undefined,
      (r) => void c.s.endpoints.set(r.id, id),
    );
  },

  deleteWebhookEndpoint(c) {
    const owned = (orgId: string) => [...c.s.endpoints].filter(([, owner]) => owner === orgId).map(([e]) => e);
    const o = c.org((x) => owned(x.id).length > 0);
    const id = c.setOrg(o);
    const mine = live(o) ? owned(id) : [];
    const others = [...c.s.endpoints].filter(([, owner]) => owner !== id).map(([e]) => e);
    if (!mine.length || (c.any && c.rng.chance(0.1))) {
      // Another organization's endpoint is not found here, as an unknown one is not.
      c.d.path.endpointId = others.length && c.rng.chance(0.5) ? c.rng.pick(others) : `whe_absent_${c.rng.int(1, 1e9)}`;
      return c.expect(NOT_FOUND);
    }
    const e = (c.d.path.endpointId = c.rng.pick(mine));
    c.expect(
      [{ status: 200 }],
      (r) => (r.id !== e || r.orgId !== id ? mismatch('endpoint', [r.id, r.orgId], [e, id]) : undefined),
      () => {
        c.s.endpoints.delete(e);
        for (const [d, m] of c.s.deliveries) if (m.endpointId === e) c.s.deliveries.delete(d);
      },
    );
  },

  exportAuditEvents(c) {
    // A range the schema cannot order: from before to, or either left out.
    delete c.d.queryValues.from;
    delete c.d.queryValues.to;
    if (c.rng.chance(0.5)) {
      c.d.queryValues.from = '2026-01-01T00:00:00.000Z';
      c.d.queryValues.to = '2027-01-01T00:00:00.000Z';
    }
    const format = c.d.queryValues.format as 'jsonl' | 'csv';
    const o = c.org();
    c.setOrg(o);
    // Deleted organizations keep their log; an unknown (or erased) one is 404.
    if (typeof o === 'string') return c.expect(NOT_FOUND);
    c.expect([{ status: 200 }], (_json, a) => {
      const lines = a.body.split('\n').filter((l) => l !== '');
      if (format === 'csv') return lines[0]?.startsWith('id,createdAt,') ? undefined : mismatch('CSV header', lines[0], 'id,createdAt,…');
      for (const l of lines) {
        try {
          JSON.parse(l);
        } catch {
          return `a line is not JSON: ${l.slice(0, 80)}`;
        }
      }
      return undefined;
    });
  },

  getRetention(c) {
    const o = c.org();
    c.setOrg(o);
    if (typeof o === 'string') return c.expect(NOT_FOUND);
    c.expect([{ status: 200 }], (r) =>
      typeof r.auditDays === 'number' && typeof r.deliveryDays === 'number' ? undefined : mismatch('retention', r, '{auditDays, deliveryDays}'),
    );
  },

  updateRetention(c) {
    const b = c.body();
    for (const k of Object.keys(b)) delete b[k];
    const auditDays = c.rng.int(30, 3650);
    b.auditDays = auditDays;
    const o = c.org();
    c.setOrg(o);
    // A deleted organization's retention is read, never changed.
    if (!live(o)) return c.expect(NOT_FOUND);
    c.expect([{ status: 200 }], (r) => (r.auditDays === auditDays ? undefined : mismatch('auditDays', r.auditDays, auditDays)));
  },

  listAuditEvents(c) {
    delete c.d.queryValues.cursor;
    const o = c.org();
    c.setOrg(o);
    // Deleted organizations keep their log; an unknown (or erased) one is 404.
    if (typeof o === 'string') return c.expect(NOT_FOUND);
    const limit = (c.d.queryValues.limit as number | undefined) ?? 50;
    const kind = c.d.queryValues.actorKind as string | undefined;
    const action = c.d.queryValues.action as string | undefined;
    c.expect([{ status: 200 }], (r) => {
      const items = r.items as { actor: { kind: string }; action: string }[];
      if (items.length > limit) return `${items.length} events for limit ${limit}`;
      if (kind && items.some((e) => e.actor.kind !== kind)) return `actorKind=${kind} listed another kind`;
      if (action && items.some((e) => e.action !== action)) return `action=${action} listed another action`;
      return undefined;
    });
  },

  listOrganizations(c) {
    // A cursor is only what a previous page said; a made-up one is 400 invalid_cursor (not arranged here).
    delete c.d.queryValues.cursor;
    const limit = (c.d.queryValues.limit as number | undefined) ?? 50;
    c.expect([{ status: 200 }], (r) => {
      const items = r.items as { id: string; createdAt: string }[];
      if (items.length > limit) return `${items.length} organizations for limit ${limit}`;
      for (let i = 1; i < items.length; i++) {
        const [a, b] = [items[i - 1], items[i]];
        if (a.createdAt < b.createdAt || (a.createdAt === b.createdAt && a.id < b.id)) return `not newest first: ${a.id} before ${b.id}`;
      }
      return undefined;
    });
  },

  createInvitation(c) {
    const b = c.body();
    b.email = `fuzz.${c.rng.int(0, 1e9)}@example.com`;
    // A manager needs teams of the organization (issue 53), which the model does not keep: the
    // valid requests invite the other roles, without teams (only a manager has them).
    if (b.role === 'manager') b.role = 'viewer';
    delete b.teams;
    const o = c.org();
    const orgId = c.setOrg(o);
    if (!live(o)) return c.expect(NOT_FOUND);
    c.expect([{ status: 201 }], (r) => {
      pendingInvitations.set(orgId, [...(pendingInvitations.get(orgId) ?? []), String(r.id)]);
      return r.email !== b.email || r.role !== b.role
        ? mismatch('invitation', [r.email, r.role], [b.email, b.role])
        : /\/console\/invitations\/[A-Za-z0-9_-]{32}$/.test(String(r.url))
          ? undefined
          : mismatch('url', r.url, '.../console/invitations/TOKEN');
    });
  },

  listInvitations(c) {
    const o = c.org();
    c.setOrg(o);
    if (!live(o)) return c.expect(NOT_FOUND);
    // The run's own createInvitation calls leave some pending: a list, never a link.
    c.expect([{ status: 200 }], (r) =>
      !Array.isArray(r.items)
        ? mismatch('items', r.items, 'a list')
        : (r.items as Record<string, unknown>[]).some((i) => 'url' in i || 'token' in i)
          ? 'an invitation listed with its link'
          : undefined,
    );
  },

  revokeInvitation(c) {
    const o = c.org();
    const orgId = c.setOrg(o);
    const id = live(o) ? pendingInvitations.get(orgId)?.pop() : undefined;
    // Ids are random and made by the service: a guessed one is in no organization.
    if (id === undefined) return c.expect(NOT_FOUND);
    c.d.path.invitationId = id;
    c.expect([{ status: 200 }], (r) => (r.id === id ? undefined : mismatch('revoked invitation', r.id, id)));
  },

  addRespondent(c) {
    const b = c.body();
    b.email = `fuzz.${c.rng.int(0, 1e9)}@example.com`;
    b.team = c.rng.chance(0.5) ? null : 'Fuzz team';
    const o = c.org();
    const orgId = c.setOrg(o);
    if (!live(o)) return c.expect(NOT_FOUND);
    c.expect([{ status: 201 }], (r) => {
      respondents.set(orgId, [...(respondents.get(orgId) ?? []), String(r.id)]);
      return /^rsp_[0-9A-Za-z]{16}$/.test(String(r.id)) ? undefined : mismatch('id', r.id, 'rsp_ + 16');
    });
  },

  listRespondents(c) {
    const o = c.org();
    c.setOrg(o);
    if (!live(o)) return c.expect(NOT_FOUND);
    c.expect([{ status: 200 }], (r) => (Array.isArray(r.items) && Array.isArray(r.teams) ? undefined : mismatch('roster', r, '{items, teams}')));
  },

  moveRespondent(c) {
    const b = c.body();
    b.team = c.rng.chance(0.5) ? null : 'Fuzz team';
    const o = c.org();
    const orgId = c.setOrg(o);
    const id = live(o) ? respondents.get(orgId)?.at(-1) : undefined;
    if (id === undefined) return c.expect(NOT_FOUND);
    c.d.path.respondentId = id;
    c.expect([{ status: 200 }], (r) => (r.id === id ? undefined : mismatch('moved', r.id, id)));
  },

  removeRespondent(c) {
    const o = c.org();
    const orgId = c.setOrg(o);
    const id = live(o) ? respondents.get(orgId)?.pop() : undefined;
    if (id === undefined) return c.expect(NOT_FOUND);
    c.d.path.respondentId = id;
    c.expect([{ status: 200 }], (r) => (r.id === id ? undefined : mismatch('removed', r.id, id)));
  },

  replaceRoster(c) {
    const b = c.body();
    const emails = Array.from({ length: c.rng.int(0, 3) }, (_, i) => `fuzz.r${i}.${c.rng.int(0, 1e9)}@example.com`);
    b.csv = ['email,team', ...emails.map((e) => `${e},Fuzz team`)].join('\n');
    // The columns are found by name in this file's header (a name the file lacks is 400, tested in test/checkin/).
    delete b.emailColumn;
    delete b.teamColumn;
    const o = c.org();
    const orgId = c.setOrg(o);
    if (!live(o)) return c.expect(NOT_FOUND);
    c.expect(
      [{ status: 200 }],
      (r) => (r.added === emails.length ? undefined : mismatch('added', r.added, emails.length)),
      () => respondents.delete(orgId),
    );
  },

  getCheckinSettings(c) {
    const o = c.org();
    c.setOrg(o);
    if (!live(o)) return c.expect(NOT_FOUND);
    c.expect([{ status: 200 }]);
  },

  updateCheckinSettings(c) {
    const b = c.body();
    for (const k of Object.keys(b)) delete b[k];
    const hour = c.rng.int(0, 23);
    b.hour = hour;
    const o = c.org();
    c.setOrg(o);
    if (!live(o)) return c.expect(NOT_FOUND);
    c.expect([{ status: 200 }], (r) => (r.hour === hour ? undefined : mismatch('hour', r.hour, hour)));
  },

  exportCheckinLinks(c) {
    const o = c.org();
    c.setOrg(o);
    if (!live(o)) return c.expect(NOT_FOUND);
    // The week's first file is 200; once its links were handed out, a later one is 409 unless asked to renew them.
    const renew = c.d.queryValues.renew === true || c.d.queryValues.renew === 'true';
    c.expect(renew ? [{ status: 200 }] : [{ status: 200 }, { status: 409, code: 'invalid_transition' }], (r) =>
      r.error !== undefined || Array.isArray(r.links) ? undefined : mismatch('links', r.links, 'a list'),
    );
  },

  sendCheckinRoundNow(c) {
    const o = c.org();
    c.setOrg(o);
    if (!live(o)) return c.expect(NOT_FOUND);
    // The fuzzer's server has no SMTP_URL: a round is started by the links file then (409).
    c.expect([{ status: 409, code: 'invalid_transition' }]);
  },

  listCheckinRounds(c) {
    const o = c.org();
    c.setOrg(o);
    if (!live(o)) return c.expect(NOT_FOUND);
    c.expect([{ status: 200 }]);
  },

  resendCheckinLink(c) {
    const o = c.org();
    const orgId = c.setOrg(o);
    if (!live(o)) return c.expect(NOT_FOUND);
    const id = respondents.get(orgId)?.at(-1);
    if (id === undefined) return c.expect(NOT_FOUND);
    // A person gets a new link only when this week's round started with them on it.
    c.d.path.respondentId = id;
    c.expect([{ status: 200 }, { status: 409, code: 'invalid_transition' }]);
  },

  getCheckinParticipation(c) {
    const o = c.org();
    c.setOrg(o);
    if (!live(o)) return c.expect(NOT_FOUND);
    c.expect([{ status: 200 }], (r) => (Array.isArray(r.items) ? undefined : mismatch('items', r.items, 'a list')));
  },

  listMembers(c) {
    const o = c.org();
    c.setOrg(o);
    if (!live(o)) return c.expect(NOT_FOUND);
    // Nobody accepts an invitation here: no organization has a member.
    c.expect([{ status: 200 }], (r) => ((r.items as unknown[]).length === 0 ? undefined : mismatch('members', r.items, [])));
  },

  removeMember(c) {
    c.setOrg(c.org());
    c.expect(NOT_FOUND);
  },

  listWebhookDeliveries(c) {
    const o = c.org();
    const id = c.setOrg(o);
    if (!live(o)) return c.expect(NOT_FOUND);
    const limit = (c.d.queryValues.limit as number | undefined) ?? 50;
    const failed = c.d.queryValues.failed === true;
    c.expect(
      [{ status: 200 }],
      (r) => {
        const items = r.items as { status: string }[];
        if (items.length > limit) return `${items.length} deliveries for limit ${limit}`;
        if (failed && items.some((d) => d.status !== 'failed')) return 'failed=true listed a delivery that did not fail';
        return undefined;
      },
      // Learned: deliveries of events (alert.created) the fuzzer did not send itself.
      (r) => {
        for (const d of r.items as { id: string; endpointId: string; status: string }[]) {
          if (c.s.endpoints.get(d.endpointId) === id)
            c.s.deliveries.set(d.id, {
              orgId: id,
              endpointId: d.endpointId,
              status: d.status === 'failed' ? 'failed' : d.status === 'pending' ? 'pending' : 'other',
            });
        }
      },
    );
  },

  getWebhookEndpoint: (c) =>
    endpointById(c, (r, e, orgId) => (r.id !== e || r.orgId !== orgId ? mismatch('endpoint', [r.id, r.orgId], [e, orgId]) : undefined)),
  enableWebhookEndpoint: (c) =>
    endpointById(
      c,
      (r, e) => (r.id !== e || r.enabled !== true ? mismatch('endpoint', [r.id, r.enabled], [e, true]) : undefined),
      (_r, e) => void c.s.disabled.delete(e),
    ),
  // Its pending deliveries fail at once.
  disableWebhookEndpoint: (c) =>
    endpointById(
      c,
      (r, e) =>
        r.id !== e || r.enabled !== false || typeof r.disabledReason !== 'string'
          ? mismatch('endpoint', [r.id, r.enabled, r.disabledReason], [e, false, 'a reason'])
          : undefined,
      (_r, e) => {
        c.s.disabled.add(e);
        for (const d of c.s.deliveries.values()) if (d.endpointId === e && d.status === 'pending') d.status = 'failed';
      },
    ),
  // The old secret stays valid for 24 hours from the operator API's clock (pinned to NOW here).
  rotateWebhookSecret: (c) =>
    endpointById(c, (r, e) => {
      const until = new Date(NOW.getTime() + DAY).toISOString();
      if (r.id !== e || r.previousSecretExpiresAt !== until) return mismatch('endpoint', [r.id, r.previousSecretExpiresAt], [e, until]);
      return String(r.secret).startsWith('whsec_') ? undefined : 'no whsec_ secret';
    }),
  testWebhookEndpoint: (c) =>
    endpointById(
      c,
      (r) =>
        typeof r.deliveryId !== 'string' || !['succeeded', 'failed', 'endpoint_disabled'].includes(r.outcome)
          ? mismatch('outcome', r.outcome, 'succeeded, failed or endpoint_disabled')
          : undefined,
      (r, e, orgId) => void c.s.deliveries.set(r.deliveryId, { orgId, endpointId: e, status: r.outcome === 'failed' ? 'failed' : 'other' }),
    ),

  replayWebhookDelivery(c) {
    const all = [...c.s.deliveries];
    const liveOrg = (orgId: string) => live(c.s.orgs.get(orgId) ?? '');
    const failed = all.filter(([, d]) => d.status === 'failed' && liveOrg(d.orgId));
    const pending = all.filter(([, d]) => d.status === 'pending' && liveOrg(d.orgId));
    const ofDeleted = all.filter(([, d]) => !liveOrg(d.orgId));
    const r = c.rng.next();
    if (c.any && r < 0.08 && pending.length) {
      c.d.path.deliveryId = c.rng.pick(pending)[0];
      return c.expect(INVALID); // only failed deliveries are replayed
    }
    if (c.any && r < 0.14 && ofDeleted.length) {
      c.d.path.deliveryId = c.rng.pick(ofDeleted)[0];
      return c.expect(NOT_FOUND);
    }
    if (!failed.length || (c.any && r < 0.2)) {
      c.d.path.deliveryId = `whd_absent_${c.rng.int(1, 1e9)}`;
      return c.expect(NOT_FOUND);
    }
    const [id, d] = c.rng.pick(failed);
    c.d.path.deliveryId = id;
    // A delivery of a disabled endpoint is refused until the endpoint is enabled again.
    if (c.s.disabled.has(d.endpointId)) return c.expect(INVALID);
    c.expect(
      [{ status: 200 }],
      (res) => (res.id !== id ? mismatch('id', res.id, id) : undefined),
      () => void (d.status = 'pending'),
    );
  },

  /**
   * `since` long before every delivery (all failed ones of enabled endpoints are sent again) or
   * long after (none). A delivery the fuzzer never listed may be among the failed ones (an
   * alert's, failed when its endpoint was disabled): the counts are at least the model's.
   */
  resendFailedWebhookDeliveries(c) {
    const past = c.rng.chance(0.7);
    const [from, to] = past ? ['0001-01-02T00:00:00Z', '2000-01-01T00:00:00Z'] : ['2200-01-01T00:00:00Z', '9999-01-01T00:00:00Z'];
    const ms = Math.floor(c.rng.int(Date.parse(from), Date.parse(to)) / 1000) * 1000; // whole seconds: a text may leave out milliseconds
    c.body().since = dateTimeText(ms, c.rng);
    const o = c.org();
    const id = c.setOrg(o);
    if (!live(o)) return c.expect(NOT_FOUND);
    const failed = [...c.s.deliveries.values()].filter((d) => d.orgId === id && d.status === 'failed');
    const resend = failed.filter((d) => !c.s.disabled.has(d.endpointId));
    const skipped = failed.length - resend.length;
    c.expect(
      [{ status: 200 }],
      (r) => {
        if (r.since !== new Date(ms).toISOString()) return mismatch('since', r.since, new Date(ms).toISOString());
        if (!past) return r.resent !== 0 || r.skipped !== 0 ? mismatch('resent, skipped', [r.resent, r.skipped], [0, 0]) : undefined;
        return r.resent < resend.length || r.skipped < skipped
          ? mismatch('resent, skipped (at least)', [r.resent, r.skipped], [resend.length, skipped])
          : undefined;
      },
      () => {
        if (past) for (const d of resend) d.status = 'pending';
      },
    );
  },

  importPulses(c) {
    const o = c.org();
    c.setOrg(o);
    const org = live(o) ? o : undefined;
    const format = (c.d.queryValues.format as 'ndjson' | 'csv' | undefined) ?? c.rng.pick(['ndjson', 'csv'] as const);
    // The query names the format, else the Content-Type does: with `format`, either type is read as it says.
    const type =
      c.d.queryValues.format !== undefined ? c.rng.pick(['application/x-ndjson', 'text/csv']) : format === 'csv' ? 'text/csv' : 'application/x-ndjson';
    const rows = newPulses(c, org, c.rng.chance(0.05) ? 0 : 1);
    c.d.file = { text: fileOf(rows, format, c.rng), contentType: c.rng.chance(0.2) ? `${type}; charset=utf-8` : type };
    if (!org) return c.expect(NOT_FOUND);
    c.expect(
      [{ status: 200 }],
      (out: { last: Obj }) => {
        const s = out.last.summary as Obj | undefined;
        if (!s || out.last.error !== undefined) return mismatch('outcome', out.last, 'a summary');
        return s.imported !== rows.length || s.rows !== rows.length || s.aborted !== false
          ? mismatch('imported, rows', [s.imported, s.rows], rows.length)
          : undefined;
      },
      () => {
        for (const p of rows) org.pulses.set(p.id as string, pulseModel(p, format === 'csv'));
      },
    );
  },
};

/** GET /webhook-endpoints/{id}, its enable and its test ping: an endpoint of a live organization answers 200. */
// biome-ignore lint/suspicious/noExplicitAny: answers are checked field by field against the model
function endpointById(c: Ctx, check: (r: any, e: string, orgId: string) => string | undefined, learn?: (r: any, e: string, orgId: string) => void) {
  const all = [...c.s.endpoints];
  const ofLive = all.filter(([, orgId]) => live(c.s.orgs.get(orgId) ?? ''));
  const ofDeleted = all.filter(([, orgId]) => !live(c.s.orgs.get(orgId) ?? ''));
  const r = c.rng.next();
  if (c.any && r < 0.07 && ofDeleted.length) {
    c.d.path.endpointId = c.rng.pick(ofDeleted)[0];
    return c.expect(NOT_FOUND);
  }
  if (!ofLive.length || (c.any && r < 0.13)) {
    c.d.path.endpointId = `whe_absent_${c.rng.int(1, 1e9)}`;
    return c.expect(NOT_FOUND);
  }
  const [e, orgId] = c.rng.pick(ofLive);
  c.d.path.endpointId = e;
  c.expect([{ status: 200 }], (res) => check(res, e, orgId), learn && ((res) => learn(res, e, orgId)));
}

/** A valid request of `op`: every value generated from the document's schemas, then arranged. */
function draftValid(t: AdminTarget, op: Operation, rng: Rng, mode: Mode): Draft {
  const d: Draft = { op, mode, path: {}, queryValues: {}, query: [], auth: BEARER, expect: [] };
  for (const p of op.params) {
    if (p.in === 'query' && (p.required || rng.chance(0.5))) d.queryValues[p.name] = generate(p.schema, rng);
    if (p.in === 'path') d.path[p.name] = String(generate(p.schema, rng));
  }
  if (op.body) d.body = generate(op.body, rng);
  const arrange = ARRANGE[op.id];
  if (!arrange) throw new Error(`the operator-API fuzzer does not know ${op.id}: arrange its valid requests in test/contract/fuzz-admin-lib.ts`);
  arrange(new Ctx(t, d, rng));
  for (const p of op.params) {
    const value = p.in === 'path' ? d.path[p.name] : d.queryValues[p.name];
    if (value !== undefined && !isValid(p.schema, value))
      throw new Error(`arranged ${p.in} ${p.name}=${JSON.stringify(value)} is not valid for ${JSON.stringify(p.schema)}`);
  }
  if (op.body && !isValid(op.body, d.body)) throw new Error(`arranged body ${JSON.stringify(d.body)} is not valid for ${op.id}`);
  d.query = Object.entries(d.queryValues).map(([k, v]) => [k, String(v)]);
  // The token as a client may write it: the scheme in any case, more than one space.
  if (mode === 'any' && rng.chance(0.1)) d.auth = rng.pick([`bearer ${ADMIN_TOKEN}`, `BEARER ${ADMIN_TOKEN}`, `Bearer   ${ADMIN_TOKEN}`]);
  if (rng.chance(0.15)) d.requestId = `fuzz-${rng.int(1, 1e9)}.${rng.pick(['a', 'B', '_', ':', '-'])}`;
  return d;
}

/** The request's URL; `.` and `..` stay as they are (encodeURIComponent leaves dots alone). */
function urlOf(d: Draft): string {
  let path = d.op.path;
  for (const [k, v] of Object.entries(d.path)) path = path.replace(`{${k}}`, encodeURIComponent(v));
  const qs = d.query.map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v)}`).join('&');
  return qs ? `${path}?${qs}` : path;
}

interface Extra {
  payload?: string;
  contentType?: string | null;
  auth?: string | string[] | null;
  raw?: boolean;
  url?: string;
}

function toRequest(d: Draft, kind: string, expect: Expect[], extra: Extra = {}): AdminRequest {
  const headers: Record<string, string | string[]> = {};
  const auth = extra.auth === undefined ? d.auth : extra.auth;
  if (auth !== null) headers.authorization = auth;
  if (d.requestId) headers['x-request-id'] = d.requestId;
  const payload = extra.payload ?? d.file?.text ?? (d.body !== undefined ? JSON.stringify(d.body) : undefined);
  if (payload !== undefined) {
    const ct = extra.contentType === undefined ? (d.file ? d.file.contentType : 'application/json') : extra.contentType;
    if (ct !== null) headers['content-type'] = ct;
  }
  const valid = kind === 'valid';
  return {
    op: d.op.id,
    kind,
    method: d.op.method,
    url: extra.url ?? urlOf(d),
    headers,
    payload,
    raw: extra.raw,
    requestId: d.requestId,
    expect,
    check: valid || kind === 'import-bad-row' ? d.check : undefined,
    learn: valid || kind === 'import-bad-row' ? d.learn : undefined,
  };
}

export function validRequest(t: AdminTarget, op: Operation, rng: Rng): AdminRequest {
  const d = draftValid(t, op, rng, 'any');
  return toRequest(d, 'valid', d.expect);
}

// ---------------------------------------------------------------------------------------------
// Broken requests: one valid request (about things that exist), broken once.

export const ADMIN_MUTATIONS = [
  'body-wrong-type',
  'body-missing-required',
  'body-extra-property',
  'body-out-of-bounds',
  'body-out-of-range',
  'body-bad-date-time',
  'body-bad-format',
  'body-nul',
  'body-not-object',
  'body-bad-json',
  'body-too-large',
  'content-type-wrong',
  'content-type-missing',
  'body-rule-violation',
  'query-wrong-value',
  'query-extra-parameter',
  'query-duplicate-parameter',
  'path-too-long',
  'path-unknown-id',
  'path-dot-segment',
  'authorization-missing',
  'authorization-duplicate',
  'authorization-garbage',
  'import-bad-row',
  'import-line-too-long',
  'import-too-large',
] as const;
export type AdminMutation = (typeof ADMIN_MUTATIONS)[number];

/** A value in a JSON body, where it sits and its schema. */
interface Slot {
  parent: Obj | Json[];
  key: string | number;
  schema: Schema;
}

/** The array alternative of a schema (eventTypes: an array or null). */
function arrayBranch(schema: Schema): Schema | undefined {
  if (schema.type === 'array') return schema;
  return ((schema.anyOf ?? []) as Schema[]).find((s) => s.type === 'array');
}

const valueAt = (slot: Slot): Json => (slot.parent as Record<string | number, Json>)[slot.key];

/** The branch of a schema (anyOf: the nullable ones) that admits `value`. */
function branchOf(schema: Schema, value: Json): Schema {
  const alts = schema.anyOf as Schema[] | undefined;
  return alts?.find((s) => isValid(s, value)) ?? schema;
}

/** Every value present in a body (nested too: each pulse of a batch), with its schema. */
function slots(schema: Schema, value: Json): Slot[] {
  const out: Slot[] = [];
  const s = branchOf(schema, value);
  if (value && typeof value === 'object' && !Array.isArray(value) && s.properties) {
    for (const [k, sub] of Object.entries(s.properties as Record<string, Schema>)) {
      if (!(k in value)) continue;
      out.push({ parent: value, key: k, schema: sub }, ...slots(sub, value[k]));
    }
  } else if (Array.isArray(value) && s.items) {
    for (const [i, v] of value.entries()) out.push({ parent: value, key: i, schema: s.items as Schema }, ...slots(s.items as Schema, v));
  }
  return out;
}

/** Every object in a body, with its schema (the body, each pulse). */
function objects(schema: Schema, value: Json): { value: Obj; schema: Schema }[] {
  const s = branchOf(schema, value);
  if (value && typeof value === 'object' && !Array.isArray(value) && s.properties) {
    return [{ value, schema: s }, ...Object.entries(s.properties as Record<string, Schema>).flatMap(([k, sub]) => (k in value ? objects(sub, value[k]) : []))];
  }
  if (Array.isArray(value) && s.items) return value.flatMap((v) => objects(s.items as Schema, v));
  return [];
}

const RAW = '\u0001raw\u0001';
/** A value sent as raw JSON text (a number JavaScript cannot write: 1e400). */
const raw = (text: string) => `${RAW}${text}${RAW}`;
const payloadOf = (body: Json) => JSON.stringify(body).replace(/"\\u0001raw\\u0001(.*?)\\u0001raw\\u0001"/g, '$1');

const isInteger = (s: Schema) => typesOf(s).includes('integer');
const isDateTime = (s: Schema) => stringBranch(s)?.format === 'date-time';
const isEnum = (s: Schema) => Array.isArray(stringBranch(s)?.enum) || ((s.anyOf as Schema[] | undefined)?.some((a) => Array.isArray(a.enum)) ?? false);
const hasPattern = (s: Schema) => typeof stringBranch(s)?.pattern === 'string';
/** Text stored as sent: NUL is no character PostgreSQL stores (the URL is parsed, and NUL there percent-encoded). */
const storedText = (slot: Slot) => {
  const s = stringBranch(slot.schema);
  return Boolean(s) && !s!.format && !s!.pattern && !isEnum(slot.schema) && slot.key !== 'url';
};

const BAD_DATE_TIMES = [
  '0000-01-01T00:00:00Z',
  '0000-12-31T23:59:59.999Z',
  '0001-01-01T00:30:00+01:00',
  '10000-01-01T00:00:00Z',
  '+010000-01-01T00:00:00.000Z',
  '9999-12-31T23:30:00-01:00',
  '2026-02-30T00:00:00Z',
  '2025-02-29T12:00:00Z',
  '2030-06-30T23:59:60Z',
  '2026-11-20T24:00:00Z',
  '2026-11-20T10:60:00Z',
  '2026-13-01T00:00:00Z',
  '2026-11-20T10:00:00+24:00',
  '2026-11-20T10:00:00+01',
  '2026-11-20T10:00:00',
  '2026-11-20',
  'yesterday',
  '',
  '20261120T100000Z',
];
const PATTERN_BREAKERS = [
  '.',
  '..',
  'has space',
  'slash/in/it',
  'ümlaut',
  'semi;colon',
  '2026-47',
  'W47',
  '2026-W4',
  '2026-w47',
  ' 2026-W47',
  '2026-W47 ',
  'x\ny',
];
const NOT_WEEKS = ['2026-W00', '2026-W54', '2025-W53', '0000-W10', '2026-W99', '2021-W53'];
const REFUSED_URLS = [
  'http://hooks.example.com/x',
  'https://127.0.0.1/x',
  'https://10.0.0.5/hook',
  'https://192.168.1.10/',
  'https://localhost/x',
  'https://a.localhost/x',
  'https://[::1]/x',
  'https://2130706433/x',
  'https://169.254.169.254/latest',
  'https://0.0.0.0/',
  'https://user:pw@hooks.example.com/x',
  'ftp://hooks.example.com/x',
  'not a url',
  'hooks.example.com/x',
  'https://',
  'javascript:alert(1)',
  'https://[fd00::1]/x',
];

/** A query value the parameter's schema refuses. */
/** The values a query parameter's schema allows, when it lists them (an enum, or a union of constants). */
function listedValues(schema: Schema): string[] | undefined {
  if (Array.isArray(schema.enum)) return (schema.enum as unknown[]).map(String);
  const alts = (schema.anyOf ?? schema.oneOf) as Schema[] | undefined;
  return alts?.length && alts.every((a) => 'const' in a) ? alts.map((a) => String(a.const)) : undefined;
}

/**
 * A value the parameter's schema refuses, or undefined when it refuses none this way. A free text
 * (audit-events' action, 1-64 characters) is broken by its bounds only: 'json' is a valid action
 * filter, and the model took it for a wrong value (3 of 4 random seeds failed on it).
 */
function badQuery(schema: Schema, rng: Rng): string | undefined {
  if (isInteger(schema)) return badQueryValue({ name: 'n', in: 'query', required: false, schema }, rng)!;
  if (typesOf(schema).includes('boolean')) return rng.pick(['yes', 'no', '1', '0', 'TRUE', 'False', '', 'null', 'on', 'truee', '%00', 'true,false']);
  const listed = listedValues(schema);
  if (listed) return rng.pick(['xml', 'CSV', 'NDJSON', '', 'json', 'abort,skip', 'Skip', 'ndjson ', '%00'].filter((v) => !listed.includes(v)));
  return badString(schema, rng);
}

/** Whether some value of this query parameter is refused (badQuery finds one). */
const breakableQuery = (schema: Schema) => badQuery(schema, new Rng(0)) !== undefined;

/** Whether `m` can break a request of `op` (what the state holds may still stop it: see invalidRequest). */
export function applies(op: Operation, m: AdminMutation): boolean {
  const query = op.params.filter((p) => p.in === 'query');
  const pathIds = op.params.filter((p) => p.in === 'path' && op.id !== 'putPlan');
  const body = op.body;
  const all = body ? [...slots(body, exampleOf(body))] : [];
  const isImport = op.id === 'importPulses';
  switch (m) {
    case 'body-wrong-type':
    case 'body-extra-property':
    case 'body-not-object':
    case 'body-bad-json':
      return Boolean(body);
    case 'body-missing-required':
      return Boolean(body && objects(body, exampleOf(body)).some((o) => (o.schema.required as string[] | undefined)?.length || o.schema.minProperties));
    case 'body-out-of-bounds':
      return all.some((s) => typeof stringBranch(s.schema)?.maxLength === 'number' || arrayBranch(s.schema) !== undefined);
    case 'body-out-of-range':
      return all.some((s) => isInteger(s.schema));
    case 'body-bad-date-time':
      return all.some((s) => isDateTime(s.schema));
    case 'body-bad-format':
      return all.some((s) => hasPattern(s.schema));
    case 'body-nul':
      return all.some(storedText);
    case 'body-too-large':
      return Boolean(body) && op.id !== 'ingestPulses' && op.id !== 'replaceRoster'; // ingestion and the roster take 16 MiB
    case 'content-type-wrong':
    case 'content-type-missing':
      return Boolean(body) || isImport;
    case 'body-rule-violation':
      return [
        'createOrganization',
        'updateOrganization',
        'createKey',
        'ingestPulses',
        'runAlerts',
        'createWebhookEndpoint',
        'revokeKey',
        'replayWebhookDelivery',
      ].includes(op.id);
    case 'query-wrong-value':
      return query.some((p) => breakableQuery(p.schema));
    case 'query-extra-parameter':
    case 'query-duplicate-parameter':
    case 'authorization-missing':
    case 'authorization-duplicate':
    case 'authorization-garbage':
      return true;
    case 'path-too-long':
      return op.params.some((p) => p.in === 'path');
    case 'path-unknown-id':
    case 'path-dot-segment':
      return pathIds.length > 0;
    case 'import-bad-row':
    case 'import-line-too-long':
    case 'import-too-large':
      return isImport;
  }
}

/** A body with every optional field present, to see which slots a schema has. */
const examples = new WeakMap<object, Json>();
function exampleOf(schema: Schema): Json {
  let e = examples.get(schema);
  if (e === undefined) {
    e = fake(schema, 1, { ...BOUNDS, alwaysFakeOptionals: true, minItems: 1 });
    examples.set(schema, e);
  }
  return e;
}

/** Applies `m` to a valid request of `op`; undefined when what the server holds now leaves nothing to break that way. */
export function invalidRequest(t: AdminTarget, op: Operation, rng: Rng, m: AdminMutation): AdminRequest | undefined {
  const d = draftValid(t, op, rng, 'present');
  const c = new Ctx(t, d, rng);
  const body = d.body as Obj | undefined;
  const all = op.body && body ? slots(op.body, body) : [];
  const set = (slot: Slot, v: Json) => ((slot.parent as Record<string | number, Json>)[slot.key] = v);
  const send = (expect: Expect[], extra: Extra = {}) => toRequest(d, m, expect, extra);
  switch (m) {
    case 'body-wrong-type': {
      const fit = all.map((s) => [s, wrongType(s.schema, rng)] as const).filter(([, v]) => v !== undefined);
      if (!fit.length) return undefined;
      const [slot, v] = rng.pick(fit);
      set(slot, v!);
      return send(INVALID);
    }
    case 'body-missing-required': {
      const fit = objects(op.body!, body!).filter((o) => (o.schema.required as string[] | undefined)?.length || o.schema.minProperties);
      if (!fit.length) return undefined;
      const o = rng.pick(fit);
      const required = (o.schema.required ?? []) as string[];
      if (required.length) delete o.value[rng.pick(required)];
      else for (const k of Object.keys(o.value)) delete o.value[k];
      return send(INVALID);
    }
    case 'body-extra-property': {
      const o = rng.pick(objects(op.body!, body!));
      const props = Object.keys((o.schema.properties ?? {}) as object);
      const name = rng.pick(
        ['extra', 'orgId', 'createdAt', 'deletedAt', '__proto__x', 'status', 'secret', 'id', 'Name', 'plan ', 'enabled'].filter((k) => !props.includes(k)),
      );
      o.value[name] = rng.pick<Json>(['x', 1, true, null, {}, []]);
      return send(INVALID);
    }
    case 'body-out-of-bounds': {
      const fit = all.filter((s) => typeof stringBranch(s.schema)?.maxLength === 'number' || Array.isArray(valueAt(s)));
      if (!fit.length) return undefined;
      const slot = rng.pick(fit);
      const value = valueAt(slot);
      if (Array.isArray(value)) {
        const s = arrayBranch(slot.schema)!;
        const options: Json[] = [];
        if (typeof s.minItems === 'number' && s.minItems > 0) options.push([]);
        if (typeof s.maxItems === 'number' && value.length)
          options.push(Array.from({ length: (s.maxItems as number) + rng.int(1, 3) }, (_, i) => value[i % value.length]));
        if (s.uniqueItems && value.length) options.push([value[0], value[0]]);
        if (!options.length) return undefined;
        set(slot, rng.pick(options));
        return send(INVALID);
      }
      const s = stringBranch(slot.schema)!;
      const short = typeof s.minLength === 'number' && s.minLength > 0 && rng.chance(0.3);
      set(slot, short ? 'z'.repeat((s.minLength as number) - 1) : 'z'.repeat((s.maxLength as number) + rng.int(1, 50)));
      return send(INVALID);
    }
    case 'body-out-of-range': {
      const fit = all.filter((s) => isInteger(s.schema));
      if (!fit.length) return undefined;
      const slot = rng.pick(fit);
      const s = branchOf(slot.schema, 1);
      const options: Json[] = [raw('1e400'), raw('-1e400'), raw('9007199254740993'), raw(`1${'0'.repeat(rng.int(20, 400))}`), 1.5, -1];
      if (typeof s.maximum === 'number') options.push(s.maximum + rng.int(1, 1000), raw(String(BigInt(s.maximum) + 1n)));
      if (typeof s.minimum === 'number') options.push(s.minimum - rng.int(1, 1000));
      const v = rng.pick(options);
      if (v === -1 && (s.minimum as number) < 0) return undefined;
      set(slot, v);
      return send(INVALID, { payload: payloadOf(body!) });
    }
    case 'body-bad-date-time': {
      const fit = all.filter((s) => isDateTime(s.schema));
      if (!fit.length) return undefined;
      set(rng.pick(fit), rng.pick(BAD_DATE_TIMES));
      return send(INVALID);
    }
    case 'body-bad-format': {
      const fit = all.filter((s) => hasPattern(s.schema));
      if (!fit.length) return undefined;
      const slot = rng.pick(fit);
      const pattern = new RegExp(stringBranch(slot.schema)!.pattern as string, 'u');
      set(slot, rng.pick(PATTERN_BREAKERS.filter((v) => !pattern.test(v))));
      return send(INVALID);
    }
    case 'body-nul': {
      const fit = all.filter(storedText);
      if (!fit.length) return undefined;
      const slot = rng.pick(fit);
      const v = String(valueAt(slot));
      const at = rng.int(0, Math.max(0, v.length - 1));
      set(slot, `${v.slice(0, at)}\u0000${v.slice(at + 1)}`); // a character replaced: no longer than it was
      return send(INVALID);
    }
    case 'body-not-object':
      return send(INVALID_JSON, { payload: rng.pick(['[]', JSON.stringify([body]), '"text"', '42', 'null', 'true']) });
    case 'body-bad-json':
      return send(INVALID_JSON, {
        payload: rng.pick(['{', '{"name":', "{'name':'x'}", '{"a":1,}', 'undefined', '', JSON.stringify(body).slice(0, -1), `${JSON.stringify(body)}x`]),
      });
    case 'body-too-large':
      return send(TOO_LARGE, { payload: JSON.stringify(body) + ' '.repeat(t.config.bodyLimitBytes + rng.int(1, 1000)) });
    case 'content-type-wrong': {
      const types = ['text/plain', 'application/xml', 'application/x-www-form-urlencoded', 'text/json', 'multipart/form-data; boundary=x'];
      return send(INVALID_JSON, { contentType: rng.pick(d.file ? ['application/json', ...types] : ['application/x-ndjson', 'text/csv', ...types]) });
    }
    case 'content-type-missing':
      return send(INVALID_JSON, { contentType: null });
    case 'body-rule-violation':
      return ruleViolation(c, m);
    case 'query-wrong-value': {
      const p = rng.pick(op.params.filter((x) => x.in === 'query' && breakableQuery(x.schema)));
      d.query = d.query.filter(([k]) => k !== p.name);
      d.query.push([p.name, badQuery(p.schema, rng)!]);
      // A cursor of the right length that is not one of the list's is invalid_cursor (CONTRACT section 3).
      return send(p.name === 'cursor' ? [...INVALID, { status: 400, code: 'invalid_cursor' }] : INVALID);
    }
    case 'query-extra-parameter':
      d.query.push([rng.pick(['foo', 'page', 'offset', 'orgId', 'sort', 'LIMIT', 'q', 'token', 'Erase']), rng.pick(['1', 'x', '', 'true'])]);
      return send(INVALID);
    case 'query-duplicate-parameter': {
      const params = op.params.filter((x) => x.in === 'query');
      const name = params.length ? rng.pick(params).name : 'foo';
      const existing = d.query.find(([k]) => k === name);
      const value = existing?.[1] ?? (params.length ? String(generate(params.find((p) => p.name === name)!.schema, rng)) : '1');
      d.query = d.query.filter(([k]) => k !== name);
      d.query.push([name, value], [name, value]);
      return send(INVALID);
    }
    case 'path-too-long': {
      const p = rng.pick(op.params.filter((x) => x.in === 'path'));
      d.path[p.name] = 'a'.repeat(rng.int(129, 400));
      return send(INVALID);
    }
    case 'path-unknown-id': {
      const p = rng.pick(op.params.filter((x) => x.in === 'path'));
      const n = rng.int(1, 1e9);
      const absent: Record<string, string> = {
        orgId: unknownOrgId(c),
        keyId: `key_absent_${n}`,
        pulseId: `p_absent_${n}`,
        alertId: `al_absent_${n}`,
        endpointId: `whe_absent_${n}`,
        deliveryId: `whd_absent_${n}`,
        memberId: `mem_absent_${n}`,
        invitationId: `inv_absent_${n}`,
        respondentId: `rsp_absent_${n}`,
        domain: `absent-${n}.example.com`,
        tokenId: `stk_absent_${n}`,
        passkeyId: `pk_absent_${n}`,
      };
      if (absent[p.name] === undefined) throw new Error(`no unknown id for path parameter ${p.name}`);
      d.path[p.name] = absent[p.name];
      return send(NOT_FOUND);
    }
    case 'path-dot-segment': {
      const p = rng.pick(op.params.filter((x) => x.in === 'path'));
      d.path[p.name] = rng.pick(['.', '..']);
      // Sent as written, `.` or `..` is the id, which names nothing (no organization can have it); a
      // client that resolves dot segments sends another path, one that is not found or not valid.
      return rng.chance(0.7) ? send(NOT_FOUND, { raw: true }) : send([...NOT_FOUND, ...INVALID]);
    }
    case 'authorization-missing':
      return send(UNAUTHORIZED, { auth: null });
    case 'authorization-duplicate':
      return send(UNAUTHORIZED, {
        auth: rng.pick([
          [BEARER, BEARER],
          [BEARER, 'Bearer wrong-token-wrong-token-wrong-token'],
          ['Basic eA==', BEARER],
        ]),
      });
    case 'authorization-garbage':
      return send(UNAUTHORIZED, {
        auth: rng.pick([
          '',
          'Bearer',
          'Bearer ',
          `Basic ${Buffer.from(`admin:${ADMIN_TOKEN}`).toString('base64')}`,
          `Token ${ADMIN_TOKEN}`,
          `Bearer ${ADMIN_TOKEN}x`,
          `Bearer ${ADMIN_TOKEN.slice(0, -1)}`,
          `Bearer ${ADMIN_TOKEN} extra`,
          ADMIN_TOKEN,
          `Bearer ${ADMIN_TOKEN.toUpperCase()}`,
          `Bearer ${KEYS.acme}`,
          `Bearer\t${ADMIN_TOKEN}`,
          `Bearer ${'x'.repeat(600)}`,
          `Bearer ${ADMIN_TOKEN},Bearer ${ADMIN_TOKEN}`,
          'Bearer null',
          'undefined',
        ]),
      });
    case 'import-bad-row':
    case 'import-line-too-long':
    case 'import-too-large':
      return brokenImport(c, m);
  }
}

/** A body every schema admits that a documented rule refuses (400 invalid_request; ingestion's conflict is 409). */
function ruleViolation(c: Ctx, m: AdminMutation): AdminRequest | undefined {
  const { d, rng, s } = c;
  const b = d.body as Obj;
  const send = (expect: Expect[] = INVALID) => toRequest(d, m, expect);
  const org = s.orgs.get(d.path.orgId);
  switch (d.op.id) {
    case 'createOrganization':
      if (rng.chance(0.5)) b.plan = `plan_absent_${rng.int(1, 1e9)}`;
      else b.id = rng.pick([...s.orgs.keys()]); // taken, by a deleted organization too
      return send();
    case 'updateOrganization':
      b.plan = `plan_absent_${rng.int(1, 1e9)}`;
      return send();
    case 'createKey':
      if (!live(org ?? '')) return undefined;
      b.expiresAt = rng.pick([
        NOW.toISOString(),
        new Date(NOW.getTime() - rng.int(1, 1e6) * 1000).toISOString(),
        '0001-01-01T00:00:00.000Z',
        '2026-11-20T13:00:00+02:00',
      ]);
      return send();
    case 'ingestPulses': {
      if (!live(org ?? '')) return undefined;
      const pulses = b.pulses as Obj[];
      const r = rng.next();
      if (r < 0.4) rng.pick(pulses).subteamId = `team_absent_${rng.int(1, 1e9)}`;
      else if (r < 0.7 || org!.pulses.size <= pulses.length)
        pulses.push({ ...rng.pick(pulses), level: rng.int(1, 5) }); // an id twice in the batch
      else {
        const inBatch = new Set(pulses.map((p) => p.id));
        const id = rng.pick([...org!.pulses.keys()].filter((x) => !inBatch.has(x)));
        const p = org!.pulses.get(id)!;
        pulses.push({ id, level: (p.level % 5) + 1, moderationStatus: p.status, createdAt: p.createdAt, reason: p.reason, subteamId: p.subteamId });
        return send([{ status: 409, code: 'pulse_conflict' }]);
      }
      return send();
    }
    case 'runAlerts': {
      const weeks = b.weeks as string[];
      weeks[rng.int(0, weeks.length - 1)] = rng.pick(NOT_WEEKS);
      return send();
    }
    case 'createWebhookEndpoint':
      if (!live(org ?? '')) return undefined;
      b.url = rng.pick(REFUSED_URLS);
      return send();
    case 'revokeKey': {
      // A start of the display prefix that several keys share: ambiguous.
      if (!org || !live(org)) return undefined;
      const prefixes = [...org.keys.values()];
      const start = rng.pick(['c', 'cp', 'cp_']);
      if (prefixes.filter((p) => p.startsWith(start)).length < 2 || org.keys.has(start)) return undefined;
      d.path.keyId = start;
      return send();
    }
    case 'replayWebhookDelivery': {
      // Only a failed delivery is sent again: a pending one is refused.
      const pending = [...s.deliveries].filter(([, x]) => x.status === 'pending' && live(s.orgs.get(x.orgId) ?? ''));
      if (!pending.length) return undefined;
      d.path.deliveryId = rng.pick(pending)[0];
      return send();
    }
  }
  return undefined;
}

/**
 * An import broken once: a bad row (200, the last line says so), a line over IMPORT_MAX_LINE_BYTES
 * or a file over IMPORT_MAX_BYTES (400 before any answer). The last two go over a socket: the
 * server reads a refused upload on for a moment, then closes the connection, which needs one.
 */
function brokenImport(c: Ctx, m: AdminMutation): AdminRequest | undefined {
  const { d, rng } = c;
  const org = c.s.orgs.get(d.path.orgId);
  if (!org || !live(org)) return undefined;
  const format = d.file!.contentType.startsWith('text/csv') ? 'csv' : 'ndjson';
  d.queryValues = { ...d.queryValues, format };
  if (m === 'import-too-large') {
    const row = newPulses(c, org, 1)[0];
    const line = format === 'csv' ? csvLine(row) : JSON.stringify(row);
    const text = fileOf(
      Array.from({ length: Math.ceil((IMPORT_MAX_BYTES + rng.int(1, 4096)) / line.length) + 1 }, () => row),
      format,
      rng,
    );
    d.query = Object.entries(d.queryValues).map(([k, v]) => [k, String(v)]);
    return toRequest(d, m, TOO_LARGE, { payload: text, raw: true });
  }
  const rows: (Obj | string)[] = newPulses(c, org, 1);
  const good = rows.slice() as Obj[];
  const i = rng.int(0, rows.length);
  if (m === 'import-line-too-long') {
    const long = { ...(rows[0] as Obj), id: `long_${rng.int(1, 1e9)}`, comment: 'c'.repeat(IMPORT_MAX_LINE_BYTES + rng.int(1, 2000)) };
    rows.splice(i, 0, long);
    d.file = { ...d.file!, text: fileOf(rows, format, rng) };
    d.query = Object.entries(d.queryValues).map(([k, v]) => [k, String(v)]);
    return toRequest(d, m, INVALID, { raw: true });
  }
  // A bad row among good ones.
  const base = { ...(rows[0] as Obj), id: `bad_${rng.int(1, 1e9)}` };
  const broken: (Obj | string)[] = [
    { ...base, level: rng.pick([0, 6, -1]) },
    { ...base, createdAt: rng.pick(BAD_DATE_TIMES) },
    { ...base, subteamId: `team_absent_${rng.int(1, 1e9)}` },
    { ...base, reason: 'nul\u0000inside' },
    { ...base, id: (rows[0] as Obj).id }, // an id twice in the file
    { ...base, moderationStatus: rng.pick(['clean', 'HIDDEN', '']) },
  ];
  if (format === 'ndjson') {
    broken.push({ ...base, level: '3' }, { ...base, extra: 1 }, (({ id: _, ...rest }) => rest)(base), '{"id":', '[1,2]', 'null');
  } else {
    broken.push({ ...base, level: rng.pick(['x', '3.5', '']) });
  }
  rows.splice(i, 0, rng.pick(broken));
  d.file = { ...d.file!, text: fileOf(rows, format, rng) };
  d.query = Object.entries(d.queryValues).map(([k, v]) => [k, String(v)]);
  const skip = d.queryValues.onError === 'skip';
  // In skip mode the good rows are written (a copy of the first row's id: whichever comes first, the same fields).
  const written = good;
  d.check = (out: { last: Obj }) => {
    const summary = out.last.summary as Obj | undefined;
    if (!skip) {
      const error = out.last.error as Obj | undefined;
      if (error?.code !== 'invalid_request' || !summary || summary.aborted !== true || summary.imported !== 0)
        return mismatch('outcome', out.last, 'an invalid_request error with an aborted summary');
      return undefined;
    }
    if (!summary || out.last.error !== undefined) return mismatch('outcome', out.last, 'a summary');
    if (summary.imported !== written.length || !(summary.problems as Json[]).length) return mismatch('imported', summary.imported, written.length);
    return undefined;
  };
  d.learn = () => {
    if (skip) for (const r of written) org.pulses.set(r.id as string, pulseModel(r, format === 'csv'));
  };
  return toRequest(d, m, [{ status: 200 }]);
}

// ---------------------------------------------------------------------------------------------
// Sending and judging

/** Over a socket: the path as written. An upload the server refuses may be cut off once the answer is in. */
async function sendRaw(t: AdminTarget, req: AdminRequest): Promise<Answer> {
  return new Promise((resolve, reject) => {
    let answered = false;
    const r = httpRequest(
      {
        host: '127.0.0.1',
        port: t.port,
        method: req.method,
        path: req.url,
        headers: { ...req.headers, ...(req.payload !== undefined ? { 'content-length': String(Buffer.byteLength(req.payload)) } : {}) },
        agent: false,
      },
      (res) => {
        answered = true;
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') }));
        res.on('error', reject);
      },
    );
    r.setTimeout(30_000, () => r.destroy(new Error('no answer within 30 s')));
    r.on('error', (err) => answered || reject(err));
    r.end(req.payload);
  });
}

async function sendOne(t: AdminTarget, req: AdminRequest): Promise<Answer> {
  if (req.raw) return sendRaw(t, req);
  const res = await t.app.inject({ method: req.method, url: req.url, headers: req.headers, payload: req.payload } as InjectOptions);
  return { status: res.statusCode, headers: res.headers, body: res.body };
}

function mediaTypes(doc: Doc, op: Operation, status: number): string[] {
  const responses = (doc.paths[op.path][op.method.toLowerCase()] as unknown as { responses: Record<string, { content?: Record<string, unknown> }> }).responses;
  return Object.keys(responses[String(status)]?.content ?? {});
}

export interface AdminOutcome {
  req: AdminRequest;
  status: number;
  body: string;
  problem?: string;
}

/** Sends one request and judges the answer; tells the model what a successful one changed. */
export async function send(t: AdminTarget, req: AdminRequest): Promise<AdminOutcome> {
  const op = t.ops.find((o) => o.id === req.op)!;
  const errorsBefore = t.serverErrors.length;
  const a = await sendOne(t, req);
  const out: AdminOutcome = { req, status: a.status, body: a.body };
  out.problem = judge(t, op, req, a);
  if (a.status >= 500 && t.serverErrors.length !== errorsBefore) out.problem += `\n  server log: ${t.serverErrors.at(-1)}`;
  return out;
}

function judge(t: AdminTarget, op: Operation, req: AdminRequest, a: Answer): string | undefined {
  if (a.status >= 500) return `server error ${a.status}`;
  const media = String(a.headers['content-type'] ?? '')
    .split(';')[0]
    .trim()
    .toLowerCase();
  // biome-ignore lint/suspicious/noExplicitAny: answers are checked field by field against the model
  let json: any;
  if (media === 'application/json') {
    try {
      json = JSON.parse(a.body);
    } catch {
      return `body is not JSON: ${a.body.slice(0, 200)}`;
    }
  }
  const code = a.status >= 400 ? json?.error?.code : undefined;
  if (!req.expect.some((e) => e.status === a.status && (e.code === undefined || e.code === code))) {
    return `expected ${req.expect.map((e) => `${e.status}${e.code ? ` ${e.code}` : ''}`).join(' or ')}, got ${a.status}${code ? ` ${code}` : ''}`;
  }
  if (!op.statuses.includes(String(a.status))) return `status ${a.status} is not documented for ${op.id}`;
  const documented = mediaTypes(t.doc, op, a.status);
  if (!documented.includes(media))
    return `the answer is ${media || 'without a Content-Type'}; the document says ${documented.join(' or ') || 'nothing'} for ${a.status} of ${op.id}`;
  if (media === 'application/json') {
    const res = { statusCode: a.status, body: a.body, headers: a.headers, json: () => JSON.parse(a.body) } as unknown as LightMyRequestResponse;
    const problem = documentedProblem(t.doc, op, res);
    if (problem) return problem;
  } else if (!a.headers['x-request-id']) return 'no X-Request-Id header';
  if (req.requestId && a.headers['x-request-id'] !== req.requestId) return mismatch('X-Request-Id', a.headers['x-request-id'], req.requestId);
  if (a.status === 401 && !String(a.headers['www-authenticate'] ?? '').startsWith('Bearer realm="climate-pulse-admin"'))
    return '401 without its WWW-Authenticate challenge';
  if (media === 'application/x-ndjson' && op.id === 'importPulses') {
    const outcome = importOutcome(a.body);
    if (typeof outcome === 'string') return outcome;
    json = outcome;
  }
  return a.status < 300 && req.check ? req.check(json, a) : undefined;
}

// ---------------------------------------------------------------------------------------------
// The property

export interface AdminFuzzStats extends FuzzStats {
  /** Per operation, the statuses its valid requests got (the model's 404s for deleted and unknown things among them). */
  validAnswers: Record<string, Record<string, number>>;
}

/** Runs `runs` randomized cases under fast-check; each case is one operation, valid or broken once. */
export async function fuzzAdmin(t: AdminTarget, opts: { seed: number; runs: number }): Promise<FuzzResult & { stats: AdminFuzzStats }> {
  const stats: AdminFuzzStats = { runs: 0, byKind: {}, byOperation: {}, statuses: {}, validAnswers: {} };
  const tally = (o: AdminOutcome) => {
    stats.byKind[o.req.kind] = (stats.byKind[o.req.kind] ?? 0) + 1;
    const s = (stats.byOperation[o.req.op] ??= { valid: 0, invalid: 0 });
    if (o.req.kind === 'valid') {
      s.valid++;
      const a = (stats.validAnswers[o.req.op] ??= {});
      a[o.status] = (a[o.status] ?? 0) + 1;
    } else s.invalid++;
    stats.statuses[o.status] = (stats.statuses[o.status] ?? 0) + 1;
  };
  const hide = (x: string) => x.split(ADMIN_TOKEN).join('<ADMIN_TOKEN>');
  const show = (v: string | string[]) => (Array.isArray(v) ? v.map(hide) : hide(v));
  const describe = (o: AdminOutcome) =>
    `${o.problem}\n  ${o.req.kind}: ${o.req.method} ${o.req.url}${o.req.raw ? ' (as written, over a socket)' : ''}\n  headers: ${JSON.stringify(Object.fromEntries(Object.entries(o.req.headers).map(([k, v]) => [k, show(v)])))}\n  payload: ${(o.req.payload ?? '(none)').slice(0, 1500)}\n  answer: ${o.status} ${o.body.slice(0, 1500)}`;

  const property = fc.asyncProperty(
    // Every operation as likely (fast-check's default bias favours the first and last indexes).
    fc.noBias(fc.nat({ max: t.ops.length - 1 })),
    fc.boolean(),
    fc.boolean(),
    fc.nat({ max: 1_000_000 }),
    fc.integer({ min: 1, max: 2 ** 31 - 1 }),
    async (opIndex, broken, mutationFirst, mutationIndex, seed) => {
      stats.runs++;
      let op = t.ops[opIndex];
      const rng = new Rng(seed);
      let req: AdminRequest | undefined;
      if (broken) {
        // Half the time a mutation first, each as likely, then an operation it applies to: some
        // apply to one operation only (the file import's). Otherwise one of the mutations that apply
        // to this operation, each as likely. When what the server holds leaves nothing to break
        // that way, the next one.
        if (mutationFirst) {
          const m = ADMIN_MUTATIONS[mutationIndex % ADMIN_MUTATIONS.length];
          const fit = t.ops.filter((o) => applies(o, m));
          op = fit[opIndex % fit.length];
          req = invalidRequest(t, op, rng, m);
        }
        const candidates = ADMIN_MUTATIONS.filter((m) => applies(op, m));
        for (let i = 0; i < candidates.length && !req; i++) req = invalidRequest(t, op, rng, candidates[(mutationIndex + i) % candidates.length]);
        if (!req) throw new Error(`no mutation applies to ${op.id}`);
      } else {
        req = validRequest(t, op, rng);
      }
      const o = await send(t, req);
      tally(o);
      if (o.problem) throw new Error(describe(o));
      if (o.status < 300 && req.learn) req.learn(parsed(o));
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

function parsed(o: AdminOutcome): unknown {
  try {
    return JSON.parse(o.body);
  } catch {
    return o.body;
  }
}
