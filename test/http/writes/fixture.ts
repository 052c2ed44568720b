import type { Dataset } from '../../../src/domain/dataset.js';

export const KEY_A = 'cp_test_writes_a_0123456789abcdef';
export const KEY_A2 = 'cp_test_writes_a2_0123456789abcdef';
export const KEY_B = 'cp_test_writes_b_0123456789abcdef';
export const NOW = new Date('2026-11-20T12:00:00.000Z');

export const writesDataset = (): Dataset => ({
  organizations: [
    {
      id: 'org_a',
      name: 'A',
      plan: 'business',
      memberCount: 10,
      createdAt: '2026-01-01T00:00:00.000Z',
      apiKeys: [{ key: KEY_A }, { key: KEY_A2 }],
      teams: [{ id: 'team_web', name: 'Web', createdAt: '2026-01-01T00:00:00.000Z' }],
      actions: [
        {
          id: 'act_a1',
          title: 'Retro on workload',
          description: null,
          startDate: '2026-11-01T09:00:00.000Z',
          endDate: null,
          status: 'active',
          subteamId: 'team_web',
          createdAt: '2026-11-01T09:00:00.000Z',
        },
      ],
    },
    {
      id: 'org_b',
      name: 'B',
      plan: 'business',
      memberCount: 5,
      createdAt: '2026-01-01T00:00:00.000Z',
      apiKeys: [{ key: KEY_B }],
      teams: [{ id: 'team_b', name: 'Ops', createdAt: '2026-01-01T00:00:00.000Z' }],
      actions: [
        {
          id: 'act_b1',
          title: 'B action',
          description: 'private to B',
          startDate: '2026-11-02T09:00:00.000Z',
          endDate: null,
          status: 'done',
          subteamId: 'team_b',
          createdAt: '2026-11-02T09:00:00.000Z',
        },
      ],
    },
  ],
});

export const post = (key: string, idem: string | undefined, extra: Record<string, string> = {}) => ({
  authorization: `Bearer ${key}`,
  ...(idem === undefined ? {} : { 'idempotency-key': idem }),
  ...extra,
});
