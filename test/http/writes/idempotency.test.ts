import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from '../../../src/db/executor.js';
import { purgeIdempotencyRecords } from '../../../src/db/repositories/idempotency.js';
import { createTestApp, type TestApp } from '../../helpers/app.js';
import { expectDocumented } from '../../helpers/openapi.js';
import { KEY_A, KEY_A2, KEY_B, NOW, post, writesDataset } from './fixture.js';

describe('idempotent writes', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ dataset: writesDataset(), now: NOW });
  });
  afterAll(() => t.close());

  const create = async (key: string, idem: string, body: unknown, url = '/v1/actions') => {
    const res = await t.app.inject({ method: 'POST', url, headers: post(key, idem), payload: body as object });
    await expectDocumented(t.app, 'POST', url, res);
    return res;
  };
  const actions = async (key = KEY_A) =>
    (await t.app.inject({ method: 'GET', url: '/v1/actions', headers: post(key, undefined) })).json().items as Record<string, unknown>[];

  it('creates an action with startDate = createdAt = now and status active', async () => {
    const res = await create(KEY_A, 'create-action-1', {
      title: 'Workshop',
      description: 'Monthly',
      endDate: '2026-12-01T00:00:00+01:00',
      subteamId: 'team_web',
    });
    expect(res.statusCode).toBe(200);
    expect(res.headers['idempotent-replayed']).toBeUndefined();
    const { id } = res.json();
    expect(id).toMatch(/^act_[0-9A-Za-z]{16}$/);
    expect(Object.keys(res.json())).toEqual(['id']);
    expect((await actions()).find((a) => a.$id === id)).toEqual({
      $id: id,
      title: 'Workshop',
      description: 'Monthly',
      startDate: '2026-11-20T12:00:00.000Z',
      endDate: '2026-11-30T23:00:00.000Z',
      status: 'active',
      subteamId: 'team_web',
      subteamName: 'Web',
      createdAt: '2026-11-20T12:00:00.000Z',
    });
  });

  it('replays the same status and body, under /v1 and /api/v1 alike, and creates nothing more', async () => {
    const first = await create(KEY_A, 'replay-key-0001', { title: 'Once only', subteamId: null });
    const before = (await actions()).length;
    const again = await create(KEY_A, 'replay-key-0001', { subteamId: null, title: 'Once only' }); // other key order, same JSON
    const alias = await create(KEY_A, 'replay-key-0001', { title: 'Once only', subteamId: null }, '/api/v1/actions');
    for (const r of [again, alias]) {
      expect(r.statusCode).toBe(first.statusCode);
      expect(r.body).toBe(first.body);
      expect(r.headers['idempotent-replayed']).toBe('true');
    }
    expect((await actions()).length).toBe(before);
  });

  it('refuses the same key for a different body or path with 409 idempotency_key_reused', async () => {
    await create(KEY_A, 'reuse-key-00001', { title: 'First body' });
    const other = await create(KEY_A, 'reuse-key-00001', { title: 'Second body' });
    expect(other.statusCode).toBe(409);
    expect(other.json().error.code).toBe('idempotency_key_reused');
    const path = await create(KEY_A, 'reuse-key-00001', { name: 'First body' }, '/v1/teams');
    expect(path.statusCode).toBe(409);
    expect(path.json().error.code).toBe('idempotency_key_reused');
  });

  it('scopes keys by API key and organization', async () => {
    const a = await create(KEY_A, 'scoped-key-0001', { title: 'Scoped' });
    const a2 = await create(KEY_A2, 'scoped-key-0001', { title: 'Scoped' });
    const b = await create(KEY_B, 'scoped-key-0001', { title: 'Scoped' });
    expect(new Set([a.json().id, a2.json().id, b.json().id]).size).toBe(3);
    expect(a2.headers['idempotent-replayed']).toBeUndefined();
  });

  it('stores only 2xx outcomes: a refused request can be retried with the same key', async () => {
    const bad = await create(KEY_A, 'retry-after-400', { title: 'Ok', subteamId: 'team_missing' });
    expect(bad.statusCode).toBe(400);
    const good = await create(KEY_A, 'retry-after-400', { title: 'Ok', subteamId: 'team_web' });
    expect(good.statusCode).toBe(200);
    expect(good.headers['idempotent-replayed']).toBeUndefined();
  });

  it('answers 50 concurrent POST /v1/actions with one key by one action and 50 identical 200s', async () => {
    const before = (await actions()).length;
    const all = await Promise.all(Array.from({ length: 50 }, () => create(KEY_A, 'concurrent-action', { title: 'Concurrent' })));
    expect(all.map((r) => r.statusCode)).toEqual(Array(50).fill(200));
    expect(new Set(all.map((r) => r.json().id)).size).toBe(1);
    expect(all.filter((r) => r.headers['idempotent-replayed'] === 'true').length).toBe(49);
    expect((await actions()).length).toBe(before + 1);
  });

  it('answers 50 concurrent POST /v1/teams with one key by one team', async () => {
    const all = await Promise.all(Array.from({ length: 50 }, () => create(KEY_A, 'concurrent-team', { name: ' Platform ' }, '/v1/teams')));
    expect(all.map((r) => r.statusCode)).toEqual(Array(50).fill(200));
    const bodies = new Set(all.map((r) => r.body));
    expect(bodies.size).toBe(1);
    expect(all[0].json()).toEqual({ id: expect.stringMatching(/^team_[0-9A-Za-z]{16}$/), name: 'Platform' });
    const teams = (await t.app.inject({ method: 'GET', url: '/v1/teams', headers: post(KEY_A, undefined) })).json().items;
    expect(teams.map((x: { name: string }) => x.name)).toEqual(['Platform', 'Web']);
  });

  it('answers the same name under 20 different keys at once with one 200 and 19 team_name_taken', async () => {
    const all = await Promise.all(Array.from({ length: 20 }, (_, i) => create(KEY_A, `race-name-${i}-xx`, { name: 'Racers' }, '/v1/teams')));
    expect(all.filter((r) => r.statusCode === 200).length).toBe(1);
    expect(all.filter((r) => r.statusCode === 409 && r.json().error.code === 'team_name_taken').length).toBe(19);
  });

  it('edits an action: fields change, null clears the team, status and startDate stay', async () => {
    const patch = (body: unknown) => t.app.inject({ method: 'PATCH', url: '/v1/actions/act_a1', headers: post(KEY_A, undefined), payload: body as object });
    const r1 = await patch({ title: 'Retro, second round', description: '', endDate: '2026-11-01T09:00:00.000Z' });
    expect(r1.statusCode).toBe(200);
    expect(r1.json()).toEqual({ id: 'act_a1' });
    const r2 = await patch({ subteamId: null });
    expect(r2.statusCode).toBe(200);
    expect((await actions()).find((a) => a.$id === 'act_a1')).toEqual({
      $id: 'act_a1',
      title: 'Retro, second round',
      description: '',
      startDate: '2026-11-01T09:00:00.000Z',
      endDate: '2026-11-01T09:00:00.000Z',
      status: 'active',
      subteamId: null,
      subteamName: null,
      createdAt: '2026-11-01T09:00:00.000Z',
    });
    const r3 = await patch({ subteamId: 'team_web' });
    expect(r3.statusCode).toBe(200);
    expect((await actions()).find((a) => a.$id === 'act_a1')?.subteamName).toBe('Web');
  });

  it('finds an action whose id has the full 128 characters', async () => {
    const res = await t.app.inject({ method: 'PATCH', url: `/v1/actions/${'a'.repeat(128)}`, headers: post(KEY_A, undefined), payload: { title: 'Long id' } });
    expect(res.statusCode).toBe(404); // routed and looked up: no such action, not a refused path
    expect(res.json()).toEqual({ error: { code: 'not_found', message: 'Action not found.' } });
    const tooLong = await t.app.inject({
      method: 'PATCH',
      url: `/v1/actions/${'a'.repeat(129)}`,
      headers: post(KEY_A, undefined),
      payload: { title: 'Long id' },
    });
    expect(tooLong.statusCode).toBe(400);
    expect(tooLong.json().error.code).toBe('invalid_request');
  });

  it("returns 404 for org A's key on org B's action and leaves it unchanged", async () => {
    const res = await t.app.inject({ method: 'PATCH', url: '/v1/actions/act_b1', headers: post(KEY_A, undefined), payload: { title: 'Hijacked' } });
    expect(res.statusCode).toBe(404);
    expect(res.json()).toEqual({ error: { code: 'not_found', message: 'Action not found.' } });
    expect((await actions(KEY_B)).find((a) => a.$id === 'act_b1')).toEqual({
      $id: 'act_b1',
      title: 'B action',
      description: 'private to B',
      startDate: '2026-11-02T09:00:00.000Z',
      endDate: null,
      status: 'done',
      subteamId: 'team_b',
      subteamName: 'Ops',
      createdAt: '2026-11-02T09:00:00.000Z',
    });
  });

  it('purges records older than the retention, after which the key creates anew', async () => {
    const first = await create(KEY_A, 'purge-key-00001', { title: 'Before purge' });
    await t.db.query(sql('test.age', `UPDATE idempotency_records SET created_at = now() - interval '25 hours' WHERE idempotency_key = 'purge-key-00001'`));
    const young = await create(KEY_A, 'purge-key-00002', { title: 'Young' });
    expect(await purgeIdempotencyRecords(t.db, 24)).toBe(1);
    const again = await create(KEY_A, 'purge-key-00001', { title: 'Before purge' });
    expect(again.statusCode).toBe(200);
    expect(again.headers['idempotent-replayed']).toBeUndefined();
    expect(again.json().id).not.toBe(first.json().id);
    const youngAgain = await create(KEY_A, 'purge-key-00002', { title: 'Young' });
    expect(youngAgain.headers['idempotent-replayed']).toBe('true');
    expect(youngAgain.json().id).toBe(young.json().id);
  });
});
