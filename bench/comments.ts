/**
 * The first release of a week of comments: one transaction that freezes a 1,000-pulse week of
 * 20 teams (CONTRACT.md section 5). Timed on the bench PostgreSQL through the service's own
 * domain code, on fresh weeks of a fresh organization, so each run measures a first release.
 */
import { randomBytes } from 'node:crypto';
import { PgExecutor } from '../src/db/pg.js';
import { CommentReleases } from '../src/domain/comments.js';
import { loadDataset } from '../src/domain/dataset.js';

const WEEK = 7 * 86_400_000;

export async function benchCommentRelease(url: string, runs = 7): Promise<{ pulsesPerWeek: number; runs: number[]; medianMs: number }> {
  const db = new PgExecutor({ connectionString: url, max: 2 });
  try {
    const org = `org_bench_release_${randomBytes(4).toString('hex')}`;
    const teams = Array.from({ length: 20 }, (_, i) => `team_r${i}`);
    const firstMonday = Date.parse('2025-01-06T00:00:00.000Z');
    await loadDataset(db, {
      organizations: [{
        id: org, name: 'Release bench', plan: 'business', memberCount: 1000, createdAt: '2025-01-01T00:00:00.000Z', deletedAt: null,
        teams: teams.map((id) => ({ id, name: id, createdAt: '2025-01-01T00:00:00.000Z' })),
        pulses: Array.from({ length: runs * 1000 }, (_, i) => ({
          id: `rel_${i}`, level: 1 + (i % 5), reason: null, comment: i % 3 ? `comment ${i}` : null,
          moderationStatus: i % 17 ? ('CLEAN' as const) : ('FLAGGED' as const), subteamId: teams[i % 20],
          createdAt: new Date(firstMonday + Math.floor(i / 1000) * WEEK + (i % 1000) * 600_000).toISOString(),
        })),
      }],
    });
    const releases = new CommentReleases('bench-secret-0123456789abcdef0123456789', 0);
    const times: number[] = [];
    for (let w = 0; w < runs; w++) {
      const week = new Date(firstMonday + w * WEEK).toISOString().slice(0, 10);
      const t0 = performance.now();
      await releases.ensureReleased(db, org, week, week, new Date());
      times.push(performance.now() - t0);
    }
    const sorted = [...times].sort((a, b) => a - b);
    return { pulsesPerWeek: 1000, runs: times.map((t) => Math.round(t * 10) / 10), medianMs: Math.round(sorted[Math.floor(runs / 2)] * 10) / 10 };
  } finally {
    await db.close();
  }
}
