import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from '../../src/db/executor.js';
import { loadDataset } from '../../src/domain/dataset.js';
import { createTestDatabase, TEST_DATABASE_URL, type TestDatabase } from '../helpers/db.js';
import { startServerProcess, type ServerProcess } from '../helpers/process.js';

const KEY = 'cp_test_release_0123456789abcdef';
const ORG = 'org_release';
const MONDAY = Date.parse('2026-11-02T00:00:00.000Z');

describe.skipIf(!TEST_DATABASE_URL)('the release of a week across server processes on one PostgreSQL', () => {
  let t: TestDatabase;
  const servers: ServerProcess[] = [];
  beforeAll(async () => {
    t = await createTestDatabase();
    const teams = ['t_a', 't_b', 't_c', 't_d'];
    await loadDataset(t.db, {
      organizations: [
        {
          id: ORG,
          name: 'Release',
          plan: 'business',
          memberCount: 10,
          createdAt: '2026-01-01T00:00:00.000Z',
          deletedAt: null,
          apiKeys: [{ key: KEY, name: 'ci', revoked: false }],
          teams: teams.map((id) => ({ id, name: id, createdAt: '2026-01-01T00:00:00.000Z' })),
          pulses: Array.from({ length: 1000 }, (_, i) => ({
            id: `rp_${i}`,
            level: 1 + (i % 5),
            reason: null,
            comment: `comment ${i}`,
            moderationStatus: i % 9 === 0 ? ('FLAGGED' as const) : ('CLEAN' as const),
            subteamId: i % 50 === 0 ? null : teams[i % 4],
            createdAt: new Date(MONDAY + i * 600_000).toISOString(),
          })),
        },
      ],
    });
  });
  afterAll(async () => {
    await Promise.all(servers.map((s) => s.stop('SIGKILL')));
    await t.close();
  });

  it('two processes answering the first request for a week at the same moment give identical answers, and the release exists once', async () => {
    const [a, b] = await Promise.all([startServerProcess({ DATABASE_URL: t.url! }), startServerProcess({ DATABASE_URL: t.url! })]);
    servers.push(a, b);
    const walk = async (url: string) => {
      const out: string[] = [];
      let cursor: string | null = null;
      do {
        const res: Response = await fetch(`${url}/v1/comments?from=2026-11-02&to=2026-11-08&limit=100${cursor ? `&cursor=${cursor}` : ''}`, {
          headers: { authorization: `Bearer ${KEY}` },
        });
        expect(res.status).toBe(200);
        const body = await res.json();
        out.push(...body.items.map((x: { comment: string }) => x.comment), `suppressed=${body.suppressed}`);
        cursor = body.nextCursor;
      } while (cursor);
      return out.join('\n');
    };
    const answers = await Promise.all(Array.from({ length: 16 }, (_, i) => walk(i % 2 ? a.url : b.url)));
    expect(new Set(answers).size).toBe(1);
    const clean = Array.from({ length: 1000 }, (_, i) => i).filter((i) => i % 9 !== 0).length;
    // Every CLEAN pulse's comment is released: each team and the 17 CLEAN pulses without a team are cells of at least 5.
    expect(answers[0].split('\n').filter((l) => l.startsWith('comment ')).length).toBe(clean);
    expect(answers[0]).not.toContain('suppressed=true');

    const count = async (table: string) =>
      (await t.db.query<{ n: number }>(sql(`test.count.${table}`, `SELECT count(*)::int AS n FROM ${table} WHERE org_id = $1`), [ORG]))[0].n;
    // Every pulse of the week is recorded once (the FLAGGED ones with their status, never released).
    expect(await count('comment_release_members')).toBe(1000);
    expect(await count('comment_cells')).toBe(5); // four teams and the pulses without a team
    expect(await count('comment_frozen_groups')).toBe(5);
  });
});
