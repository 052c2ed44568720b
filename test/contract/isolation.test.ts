import fc from 'fast-check';
import type { InjectOptions, LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Dataset } from '../../src/domain/dataset.js';
import { KEYS, NOW, readDataset } from '../fixtures/dataset.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { draftValid, operationsOf, Rng, toRequest, type FuzzState, type Operation } from './fuzz-lib.js';

/**
 * Tenant isolation as a property. Four organizations are loaded; B (org_zqxb) holds data whose
 * every text carries the marker "zqxB" and every timestamp the milliseconds .777, and a member
 * count no other organization has. Randomized requests on every endpoint are sent with the key
 * of A (Acme or Beta), built from the document like the fuzzer's and salted with what B's own
 * answers hold: B's cursors, team ids, action ids, team names and Idempotency-Keys. No answer to
 * A may contain a value that only B's data produces (unless A sent it itself), and nothing of B
 * changes.
 */

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const B_KEY = 'cp_test_zqxb_0123456789abcdef';
const B_MEMBERS = 918_273;
const at = (ms: number) => new Date(Math.floor(ms / 1000) * 1000 + 777).toISOString();

function orgB(): NonNullable<Dataset['organizations']>[number] {
  const teams = [0, 1, 2].map((i) => ({ id: `team_zqxB_${i}`, name: `zqxB team ${i}`, createdAt: at(NOW.getTime() - 200 * DAY + i * HOUR) }));
  const pulses = Array.from({ length: 41 }, (_, i) => ({
    id: `p_zqxB_${i}`,
    level: 1 + (i % 5),
    reason: `zqxB reason ${i % 4}`,
    comment: `zqxB comment ${i}`,
    moderationStatus: i % 9 === 0 ? ('FLAGGED' as const) : ('CLEAN' as const),
    subteamId: i % 7 === 0 ? null : teams[i % 3].id,
    createdAt: at(NOW.getTime() - (i + 1) * 13 * HOUR),
  }));
  return {
    id: 'org_zqxb',
    name: 'zqxB Corp',
    plan: 'isolation',
    memberCount: B_MEMBERS,
    createdAt: at(NOW.getTime() - 300 * DAY),
    apiKeys: [{ key: B_KEY, name: 'zqxB key' }],
    teams,
    pulses,
    alerts: Array.from({ length: 6 }, (_, i) => ({
      id: `al_zqxB_${i}`,
      type: `ZQXB_TYPE_${i}`,
      message: `zqxB alert ${i}`,
      weekISO: `2026-W4${i}`,
      subteamId: teams[i % 3].id,
      readAt: i % 2 ? null : at(NOW.getTime() - i * HOUR),
      createdAt: at(NOW.getTime() - (i + 1) * DAY),
    })),
    actions: Array.from({ length: 4 }, (_, i) => ({
      id: `ac_zqxB_${i}`,
      title: `zqxB action ${i}`,
      description: i % 2 ? `zqxB description ${i}` : null,
      startDate: at(NOW.getTime() - (i + 2) * DAY),
      endDate: i % 2 ? at(NOW.getTime() + 30 * DAY) : null,
      status: 'active' as const,
      subteamId: teams[i % 3].id,
      createdAt: at(NOW.getTime() - (i + 2) * DAY),
    })),
  };
}

type Json = null | boolean | number | string | Json[] | { [k: string]: Json };

function leaves(v: Json, out: { strings: Set<string>; numbers: Set<number> }) {
  if (typeof v === 'string') out.strings.add(v);
  else if (typeof v === 'number') out.numbers.add(v);
  else if (Array.isArray(v)) for (const x of v) leaves(x, out);
  else if (v && typeof v === 'object') {
    for (const [k, x] of Object.entries(v)) {
      out.strings.add(k);
      leaves(x, out);
    }
  }
}

describe('tenant isolation', () => {
  let t: TestApp;
  let ops: Operation[];
  const inject = (opts: InjectOptions) => t.app.inject(opts) as Promise<LightMyRequestResponse>;
  const get = (url: string, key: string) => inject({ method: 'GET', url, headers: { authorization: `Bearer ${key}` } });

  /** Every answer of every read of an organization, walking every page: what its key can see. */
  async function snapshot(key: string): Promise<{ bodies: Record<string, Json>; cursors: string[] }> {
    const bodies: Record<string, Json> = {};
    const cursors: string[] = [];
    const from = new Date(NOW.getTime() - 364 * DAY).toISOString();
    const urls = [
      '/v1/org',
      '/v1/teams',
      '/v1/actions',
      '/v1/alerts?limit=50',
      '/v1/stats',
      `/v1/stats/daily?from=${from}`,
      `/v1/pulses?limit=7&from=${from}`,
      `/v1/comments?limit=3&from=${from.slice(0, 10)}`,
    ];
    for (const url of urls) {
      let next: string | null = null;
      let page = 0;
      do {
        const u: string = next ? `${url}&cursor=${encodeURIComponent(next)}` : url;
        const res = await get(u, key);
        expect(res.statusCode, `${u}: ${res.body}`).toBe(200);
        const body = res.json() as { nextCursor?: string | null };
        bodies[`${url}#${page++}`] = body as Json;
        next = body.nextCursor ?? null;
        if (next) cursors.push(next);
      } while (next);
    }
    return { bodies, cursors };
  }

  let bBefore: Awaited<ReturnType<typeof snapshot>>;
  /** Strings and numbers only B's data produces. */
  let bOnly: { strings: Set<string>; numbers: Set<number> };
  const bTeamIds = ['team_zqxB_0', 'team_zqxB_1', 'team_zqxB_2'];
  const bActionIds = ['ac_zqxB_0', 'ac_zqxB_1', 'ac_zqxB_2', 'ac_zqxB_3'];
  const bIdempotencyKeys: { key: string; path: string; body: Json; id: string }[] = [];

  beforeAll(async () => {
    const dataset = readDataset();
    dataset.plans!.push({ name: 'isolation', restApi: true, rateLimitPerMinute: 10_000_000 });
    dataset.organizations![0].plan = 'isolation';
    dataset.organizations![1].plan = 'isolation';
    dataset.organizations!.push(orgB());
    t = await createTestApp({ dataset, now: NOW, env: { AUTH_FAILURES_PER_MINUTE: '10000000' } });
    ops = operationsOf((await inject({ method: 'GET', url: '/openapi.json' })).json());

    // B writes first, with keys and bodies that A will send again.
    for (const [i, [path, body]] of (
      [
        ['/v1/teams', { name: 'zqxB created team' }],
        ['/v1/actions', { title: 'zqxB created action', subteamId: 'team_zqxB_1' }],
        ['/v1/teams', { name: 'Web' }],
        ['/v1/actions', { title: 'zqxB second action' }],
      ] as const
    ).entries()) {
      const key = `zqxB-idem-${i}-key`;
      const res = await inject({ method: 'POST', url: path, payload: body, headers: { authorization: `Bearer ${B_KEY}`, 'idempotency-key': key } });
      expect(res.statusCode, res.body).toBe(200);
      bIdempotencyKeys.push({ key, path, body: body as Json, id: res.json().id });
    }
    bBefore = await snapshot(B_KEY);

    const b = { strings: new Set<string>(), numbers: new Set<number>() };
    for (const v of Object.values(bBefore.bodies)) leaves(v, b);
    for (const c of bBefore.cursors) b.strings.add(c);
    const others = { strings: new Set<string>(), numbers: new Set<number>() };
    for (const key of [KEYS.acme, KEYS.beta]) for (const v of Object.values((await snapshot(key)).bodies)) leaves(v, others);
    bOnly = {
      // Short or shared values (statuses, 'Web', dates shared by chance) say nothing of B.
      strings: new Set([...b.strings].filter((s) => s.length >= 6 && !others.strings.has(s))),
      numbers: new Set([...b.numbers].filter((n) => n >= 100 && !others.numbers.has(n))),
    };
    // The markers are really there: the check below has something to find.
    expect(bOnly.numbers.has(B_MEMBERS)).toBe(true);
    expect([...bOnly.strings].filter((s) => s.includes('zqxB')).length).toBeGreaterThan(40);
    expect([...bOnly.strings].filter((s) => s.endsWith('.777Z')).length).toBeGreaterThan(20);
    expect(bBefore.cursors.length).toBeGreaterThan(3);
  }, 120_000);
  afterAll(() => t.close());

  /** The request salted with B's values, or undefined when the draw leaves it as generated. */
  function salt(op: Operation, q: [string, string][], body: Record<string, Json> | undefined, headers: Record<string, string>, path: string, rng: Rng) {
    let p = path;
    if (rng.chance(0.5)) {
      const cursor = rng.pick(bBefore.cursors);
      if (op.params.some((x) => x.name === 'cursor')) q.push(['cursor', cursor]);
    }
    const sub = q.find(([k]) => k === 'subteamId');
    if (sub && rng.chance(0.7)) sub[1] = rng.pick(bTeamIds);
    else if (op.params.some((x) => x.name === 'subteamId') && rng.chance(0.4)) q.push(['subteamId', rng.pick(bTeamIds)]);
    if (op.path.includes('{id}') && rng.chance(0.7)) p = op.path.replace('{id}', rng.pick(bActionIds));
    if (body && 'subteamId' in body && rng.chance(0.5)) body.subteamId = rng.pick(bTeamIds);
    if (body && op.path === '/teams' && rng.chance(0.5)) body.name = rng.pick(['zqxB created team', 'zqxB team 0', 'zqxB team 2']);
    if (op.method === 'POST' && rng.chance(0.5)) {
      const same = bIdempotencyKeys.filter((k) => k.path === `/v1${op.path}`);
      const k = rng.pick(same.length ? same : bIdempotencyKeys);
      headers['idempotency-key'] = k.key;
      // Half the time the very body B sent: A must still get its own resource, not B's replay.
      if (rng.chance(0.5) && k.path === `/v1${op.path}`) return { path: p, body: k.body as Record<string, Json>, replayOf: k };
    }
    return { path: p, body, replayOf: undefined };
  }

  it('no answer to A holds what only B produces, and nothing of B changes', async () => {
    const states: Record<string, FuzzState> = {};
    for (const key of [KEYS.acme, KEYS.beta]) {
      const teams = (await get('/v1/teams', key)).json().items as { id: string; name: string }[];
      const actions = (await get('/v1/actions', key)).json().items as { $id: string }[];
      states[key] = { teamIds: teams.map((x) => x.id), teamNames: new Set(), actionIds: actions.map((a) => a.$id), idempotency: new Map() };
    }
    const aKeys = new Map<string, string>(); // A's key + Idempotency-Key -> the id A created with it
    const aWrote = new Set<string>(); // values A itself wrote (taken from B): A's own data from then on
    let checked = 0;
    let salted = 0;

    await fc.assert(
      fc.asyncProperty(fc.boolean(), fc.nat({ max: ops.length - 1 }), fc.integer({ min: 1, max: 2 ** 31 - 1 }), async (acme, opIndex, seed) => {
        const key = acme ? KEYS.acme : KEYS.beta;
        const op = ops[opIndex];
        const rng = new Rng(seed);
        const d = draftValid(op, states[key], rng);
        const s = salt(op, d.query, d.body, d.headers, d.path, rng);
        d.path = s.path;
        d.body = s.body;
        const req = toRequest(d, 'isolation', [], { auth: `Bearer ${key}` });
        const res = await inject({ method: req.method, url: req.url, headers: req.headers, payload: req.payload } as InjectOptions);
        checked++;
        const sent = `${decodeURIComponent(req.url)} ${req.payload ?? ''} ${JSON.stringify(req.headers)}`;
        if (sent.includes('zqxB')) salted++;
        const where = `${req.method} ${req.url} ${req.payload ?? ''} -> ${res.statusCode} ${res.body.slice(0, 300)}`;
        expect(res.statusCode, where).toBeLessThan(500);

        // B's ids are answered exactly as ids that exist nowhere.
        const bAction = op.path.includes('{id}') && bActionIds.some((id) => req.url.includes(`/${id}`));
        const ownKey = req.method === 'POST' ? aKeys.get(`${key} ${req.headers['idempotency-key']}`) : undefined;
        if (res.statusCode === 409 && res.json().error.code === 'idempotency_key_reused') {
          // Only A's own earlier use of the key counts, never B's.
          expect(ownKey, where).toBeDefined();
        } else if (bAction) {
          expect(res.statusCode, where).toBe(404);
          expect(res.json(), where).toEqual({ error: { code: 'not_found', message: 'Action not found.' } });
        } else if (req.payload && /"subteamId":"team_zqxB_/.test(req.payload) && res.statusCode !== 401) {
          expect(res.statusCode, where).toBe(400);
          expect(res.json().error.code, where).toBe('invalid_request');
        }
        if (s.replayOf && res.statusCode === 200) {
          // Never B's resource; a replay only of what A itself created with that key.
          expect(res.json().id, where).not.toBe(s.replayOf.id);
          const own = aKeys.get(`${key} ${req.headers['idempotency-key']}`);
          if (res.headers['idempotent-replayed']) expect(res.json().id, where).toBe(own);
          else expect(own, where).toBeUndefined();
        }

        // Nothing only B produces, unless A sent or wrote it itself.
        const found = { strings: new Set<string>(), numbers: new Set<number>() };
        leaves(res.json() as Json, found);
        for (const v of found.strings) {
          for (const b of bOnly.strings) {
            if (v.includes(b) && !sent.includes(b) && !aWrote.has(b)) expect.fail(`A's answer holds B's ${JSON.stringify(b)}: ${where}`);
          }
        }
        for (const n of found.numbers) if (bOnly.numbers.has(n)) expect.fail(`A's answer holds B's number ${n}: ${where}`);

        if (res.statusCode === 200 && req.method !== 'GET' && req.payload) {
          leaves(JSON.parse(req.payload) as Json, found);
          for (const v of found.strings) aWrote.add(v);
          const created = res.json() as { id: string; name?: string };
          if (req.method === 'POST') aKeys.set(`${key} ${req.headers['idempotency-key']}`, created.id);
          if (op.path === '/teams') states[key].teamIds.push(created.id);
          if (op.path === '/actions') states[key].actionIds.push(created.id);
        }
      }),
      { seed: 4242, numRuns: 600, endOnFailure: true },
    );
    expect(checked).toBe(600);
    expect(salted).toBeGreaterThan(150);

    // Nothing of B changed: every answer its key can see is the same as before.
    const bAfter = await snapshot(B_KEY);
    // Comment cursors are sealed with a fresh IV each time: compare whether there is one, not its bytes.
    const comparable = (page: string, body: Json) =>
      page.startsWith('/v1/comments') && body && typeof body === 'object' && !Array.isArray(body) && body.nextCursor
        ? { ...body, nextCursor: '(opaque)' }
        : body;
    for (const page of Object.keys(bBefore.bodies)) {
      expect(comparable(page, bAfter.bodies[page]), page).toEqual(comparable(page, bBefore.bodies[page]));
    }
    expect(Object.keys(bAfter.bodies)).toEqual(Object.keys(bBefore.bodies));
  }, 180_000);
});
