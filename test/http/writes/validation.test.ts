import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../helpers/app.js';
import { expectDocumented } from '../../helpers/openapi.js';
import { KEY_A, KEY_B, NOW, post, writesDataset } from './fixture.js';

describe('write validation', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ dataset: writesDataset(), now: NOW });
  });
  afterAll(() => t.close());

  const send = async (method: 'POST' | 'PATCH', url: string, headers: Record<string, string>, payload?: unknown) => {
    const res = await t.app.inject({ method, url, headers, ...(payload === undefined ? {} : { payload: payload as string }) });
    await expectDocumented(t.app, method, url, res);
    return res;
  };

  let n = 0;
  const fresh = () => `validation-key-${++n}`;

  const cases: [string, 'POST' | 'PATCH', string, () => Record<string, string>, unknown, number, string][] = [
    ['POST without Idempotency-Key', 'POST', '/v1/actions', () => post(KEY_A, undefined), { title: 'Ok title' }, 400, 'idempotency_key_required'],
    ['Idempotency-Key too short', 'POST', '/v1/actions', () => post(KEY_A, 'short12'), { title: 'Ok title' }, 400, 'invalid_idempotency_key'],
    ['Idempotency-Key too long', 'POST', '/v1/actions', () => post(KEY_A, 'k'.repeat(129)), { title: 'Ok title' }, 400, 'invalid_idempotency_key'],
    ['Idempotency-Key with a space', 'POST', '/v1/actions', () => post(KEY_A, 'has space!'), { title: 'Ok title' }, 400, 'invalid_idempotency_key'],
    ['teams without Idempotency-Key', 'POST', '/v1/teams', () => post(KEY_A, undefined), { name: 'New' }, 400, 'idempotency_key_required'],
    ['title of 1 character', 'POST', '/v1/actions', () => post(KEY_A, fresh()), { title: 'x' }, 400, 'invalid_request'],
    ['title of 121 characters', 'POST', '/v1/actions', () => post(KEY_A, fresh()), { title: 'x'.repeat(121) }, 400, 'invalid_request'],
    ['missing title', 'POST', '/v1/actions', () => post(KEY_A, fresh()), { description: 'd' }, 400, 'invalid_request'],
    ['description of 501', 'POST', '/v1/actions', () => post(KEY_A, fresh()), { title: 'Ok', description: 'd'.repeat(501) }, 400, 'invalid_request'],
    ['status is not writable', 'POST', '/v1/actions', () => post(KEY_A, fresh()), { title: 'Ok', status: 'done' }, 400, 'invalid_request'],
    [
      'startDate is not writable',
      'POST',
      '/v1/actions',
      () => post(KEY_A, fresh()),
      { title: 'Ok', startDate: '2026-11-20T12:00:00Z' },
      400,
      'invalid_request',
    ],
    ['endDate without offset', 'POST', '/v1/actions', () => post(KEY_A, fresh()), { title: 'Ok', endDate: '2026-12-01T00:00:00' }, 400, 'invalid_request'],
    ['endDate before start', 'POST', '/v1/actions', () => post(KEY_A, fresh()), { title: 'Ok', endDate: '2026-11-19T00:00:00Z' }, 400, 'invalid_request'],
    ['subteamId of another org', 'POST', '/v1/actions', () => post(KEY_A, fresh()), { title: 'Ok', subteamId: 'team_b' }, 400, 'invalid_request'],
    ['subteamId of 65 characters', 'POST', '/v1/actions', () => post(KEY_A, fresh()), { title: 'Ok', subteamId: 't'.repeat(65) }, 400, 'invalid_request'],
    ['body is an array', 'POST', '/v1/actions', () => post(KEY_A, fresh()), [{ title: 'Ok' }], 400, 'invalid_json'],
    ['body is not JSON', 'POST', '/v1/actions', () => post(KEY_A, fresh(), { 'content-type': 'application/json' }), '{"title":', 400, 'invalid_json'],
    ['body is text/plain', 'POST', '/v1/actions', () => post(KEY_A, fresh(), { 'content-type': 'text/plain' }), 'title=x', 400, 'invalid_json'],
    ['no body', 'POST', '/v1/actions', () => post(KEY_A, fresh()), undefined, 400, 'invalid_json'],
    ['empty JSON body', 'POST', '/v1/actions', () => post(KEY_A, fresh(), { 'content-type': 'application/json' }), '', 400, 'invalid_json'],
    ['body over 64 KiB', 'POST', '/v1/actions', () => post(KEY_A, fresh()), { title: 'Ok', description: 'd'.repeat(70_000) }, 400, 'payload_too_large'],
    ['team name empty after trim', 'POST', '/v1/teams', () => post(KEY_A, fresh()), { name: '   ' }, 400, 'invalid_request'],
    ['team name of 81 after trim', 'POST', '/v1/teams', () => post(KEY_A, fresh()), { name: ` ${'n'.repeat(81)} ` }, 400, 'invalid_request'],
    ['team name taken, other case and spaces', 'POST', '/v1/teams', () => post(KEY_A, fresh()), { name: '  wEB ' }, 409, 'team_name_taken'],
    ['team unknown field', 'POST', '/v1/teams', () => post(KEY_A, fresh()), { name: 'X', id: 'team_x' }, 400, 'invalid_request'],
    ['PATCH empty body', 'PATCH', '/v1/actions/act_a1', () => post(KEY_A, undefined), {}, 400, 'invalid_request'],
    ['PATCH unknown status', 'PATCH', '/v1/actions/act_a1', () => post(KEY_A, undefined), { status: 'archived' }, 400, 'invalid_request'],
    ['PATCH startDate', 'PATCH', '/v1/actions/act_a1', () => post(KEY_A, undefined), { startDate: '2026-11-20T12:00:00Z' }, 400, 'invalid_request'],
    [
      'PATCH endDate before startDate',
      'PATCH',
      '/v1/actions/act_a1',
      () => post(KEY_A, undefined),
      { endDate: '2026-10-31T23:59:59.999Z' },
      400,
      'invalid_request',
    ],
    ['PATCH unknown team', 'PATCH', '/v1/actions/act_a1', () => post(KEY_A, undefined), { subteamId: 'team_b' }, 400, 'invalid_request'],
    ['PATCH title of 1', 'PATCH', '/v1/actions/act_a1', () => post(KEY_A, undefined), { title: 'x' }, 400, 'invalid_request'],
    ['PATCH unknown action', 'PATCH', '/v1/actions/act_nope', () => post(KEY_A, undefined), { title: 'New title' }, 404, 'not_found'],
    ["PATCH another org's action", 'PATCH', '/v1/actions/act_b1', () => post(KEY_A, undefined), { title: 'Hijack' }, 404, 'not_found'],
    ['POST without a key', 'POST', '/v1/actions', () => ({ 'idempotency-key': fresh() }), { title: 'x' }, 401, 'unauthorized'],
  ];

  it.each(cases)('%s -> %i %s', async (_name, method, url, headers, payload, status, code) => {
    const res = await send(method, url, headers(), payload);
    expect(res.statusCode).toBe(status);
    expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(res.json().error.code).toBe(code);
    expect(res.json().error.message.length).toBeGreaterThan(0);
  });

  it('stores nothing for refused requests', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/v1/actions', headers: post(KEY_A, undefined) });
    expect(res.json().items.map((a: { $id: string }) => a.$id)).toEqual(['act_a1']);
    const teams = await t.app.inject({ method: 'GET', url: '/v1/teams', headers: post(KEY_A, undefined) });
    expect(teams.json().items.map((x: { name: string }) => x.name)).toEqual(['Web']);
  });

  it("leaves another organization's action unchanged after a refused PATCH", async () => {
    const res = await t.app.inject({ method: 'GET', url: '/v1/actions', headers: post(KEY_B, undefined) });
    expect(res.json().items).toEqual([
      {
        $id: 'act_b1',
        title: 'B action',
        description: 'private to B',
        startDate: '2026-11-02T09:00:00.000Z',
        endDate: null,
        status: 'done',
        subteamId: 'team_b',
        subteamName: 'Ops',
        createdAt: '2026-11-02T09:00:00.000Z',
      },
    ]);
  });
});
