import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DatabaseExecutor } from '../../src/db/executor.js';
import { PgExecutor } from '../../src/db/pg.js';
import { operatorActor } from '../../src/domain/audit.js';
import { CommentReleases, listCommentPage, listCommentPageWithHandles, updateCommentHidden } from '../../src/domain/comments.js';
import { loadDataset } from '../../src/domain/dataset.js';
import { moderatePulse } from '../../src/domain/moderation.js';
import { createTestDatabase, DB_KIND, type TestDatabase } from '../helpers/db.js';

/**
 * Issue 40: on PostgreSQL with two processes, the console's "Show again" pressed at the moment the
 * operator flags the same pulse left the FLAGGED pulse's comment in every answer in 29 of 80
 * tries. One change at a time per pulse (CONTRACT.md section 5): both lock the pulse's row, so
 * whichever comes second sees the first. Two connection pools stand for the two processes (the
 * race is between their transactions in the database); on PGlite there is one connection, and the
 * same sequence runs for the rule's sake.
 */
const ORG = 'org_race';
const W = Date.parse('2026-11-02T00:00:00.000Z');
const NOW = new Date(W + 9 * 86_400_000);
const TRIALS = DB_KIND === 'postgres' ? 80 : 10;
const RANGE = { from: '2026-11-02', to: '2026-11-08', limit: 100 };

describe(`show again and a flag of the same pulse at once (${DB_KIND}, ${TRIALS} trials)`, () => {
  let t: TestDatabase;
  let other: DatabaseExecutor;
  const releases = new CommentReleases('race-secret-0123456789abcdef0123456789', 0);

  beforeAll(async () => {
    t = await createTestDatabase();
    other = t.url ? new PgExecutor({ connectionString: t.url, max: 4 }) : t.db;
    await loadDataset(t.db, {
      organizations: [
        {
          id: ORG,
          name: 'Race',
          plan: 'business',
          memberCount: 6,
          createdAt: '2026-01-01T00:00:00.000Z',
          deletedAt: null,
          pulses: Array.from({ length: 6 }, (_, i) => ({
            id: `r_${i}`,
            level: 3,
            reason: null,
            comment: `words ${i}`,
            moderationStatus: 'CLEAN' as const,
            subteamId: null,
            createdAt: new Date(W + (i + 1) * 3_600_000).toISOString(),
          })),
        },
      ],
    });
  });
  afterAll(async () => {
    if (other !== t.db) await other.close();
    await t.close();
  });

  it('never leaves the comment of a FLAGGED pulse in an answer, whichever order the two meet in', async () => {
    const first = await listCommentPageWithHandles(t.db, ORG, RANGE, releases, NOW);
    expect(first.list.items).toHaveLength(6);
    const handle = first.handles[first.list.items.findIndex((c) => c.comment === 'words 0')];
    let leaked = 0;
    for (let i = 0; i < TRIALS; i++) {
      await updateCommentHidden(t.db, ORG, handle, true, operatorActor(), NOW);
      await Promise.all([
        updateCommentHidden(t.db, ORG, handle, false, operatorActor(), NOW),
        moderatePulse(other, ORG, 'r_0', 'FLAGGED', operatorActor(), NOW),
      ]);
      const page = await listCommentPage(t.db, ORG, RANGE, releases, NOW);
      if (page.items.some((c) => c.comment === 'words 0')) leaked++;
      await moderatePulse(t.db, ORG, 'r_0', 'CLEAN', operatorActor(), NOW);
      // Cleared again, the comment is back (it is not hidden): the next trial starts from there.
      expect((await listCommentPage(t.db, ORG, RANGE, releases, NOW)).items.map((c) => c.comment)).toContain('words 0');
    }
    expect(leaked).toBe(0);
  }, 300_000);
});
