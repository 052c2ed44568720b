import { createWriteStream, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { finished } from 'node:stream/promises';
import { afterAll, describe, expect, it } from 'vitest';
import { unpackBackup } from '../../src/db/backup.js';
import type { DatabaseExecutor } from '../../src/db/executor.js';
import { migrate } from '../../src/db/migrate.js';
import { PgliteExecutor } from '../../src/db/pglite.js';
import { operatorActor } from '../../src/domain/audit.js';
import { backupDatabase } from '../../src/domain/backup.js';
import { CommentReleases, listCommentPage } from '../../src/domain/comments.js';
import { loadDataset } from '../../src/domain/dataset.js';
import { ingestPulses } from '../../src/domain/ingest.js';

/**
 * Issue 40, case 4: a restored backup served beside its original. The original froze a week after
 * the backup was taken; the copy froze it later, with a late pulse inside that both had received,
 * so comparing the two answers isolated that pulse's comment. A backup now releases every week
 * already due before it copies (CONTRACT.md section 5), so both start from the same freezes and
 * the late pulse waits in a late pool in both. The embedded database on disk, as `backup` takes it.
 */
const ORG = 'org_fork';
const SECRET = 'fork-secret-0123456789abcdef0123456789ab';
const W = Date.parse('2026-11-02T00:00:00.000Z');
const NOW = new Date(W + 9 * 86_400_000); // the week ended two days ago: due, not yet asked about
const RANGE = { from: '2026-11-02', to: '2026-11-08', limit: 100 };
const pulse = (id: string, hour: number, comment: string | null) => ({
  id,
  level: 3,
  reason: null,
  comment,
  moderationStatus: 'CLEAN' as const,
  subteamId: null,
  createdAt: new Date(W + hour * 3_600_000).toISOString(),
});

describe('a restored backup served beside its original (issue 40, case 4)', () => {
  const root = mkdtempSync(join(tmpdir(), 'cp-fork-'));
  const dbs: DatabaseExecutor[] = [];
  afterAll(async () => {
    for (const db of dbs) await db.close();
    rmSync(root, { recursive: true, force: true });
  });

  it('answers a late pulse alike in both: the backup froze every week already due', async () => {
    const original = await PgliteExecutor.open(join(root, 'original'));
    dbs.push(original);
    await migrate(original);
    await loadDataset(original, {
      organizations: [
        {
          id: ORG,
          name: 'Fork',
          plan: 'business',
          memberCount: 6,
          createdAt: '2026-01-01T00:00:00.000Z',
          deletedAt: null,
          pulses: Array.from({ length: 5 }, (_, i) => pulse(`f_${i}`, 10 + i, i === 0 ? 'on time' : null)),
        },
      ],
    });
    const file = join(root, 'backup.tar.gz');
    const out = createWriteStream(file);
    await backupDatabase(original, out, { secret: SECRET, releaseDelayHours: 0, now: NOW });
    out.end();
    await finished(out);
    await unpackBackup(file, join(root, 'copy'));
    const copy = await PgliteExecutor.open(join(root, 'copy'));
    dbs.push(copy);

    const releases = new CommentReleases(SECRET, 0);
    // The original is asked about the week first; then the same late pulse reaches both.
    const before = await listCommentPage(original, ORG, RANGE, releases, NOW);
    expect(before.items).toEqual([{ comment: 'on time' }]);
    for (const db of [original, copy]) await ingestPulses(db, ORG, [pulse('late', 20, 'the late words')], operatorActor(), NOW);
    const answers = [];
    for (const db of [original, copy]) answers.push(await listCommentPage(db, ORG, RANGE, releases, NOW));
    // Before the fix the copy froze the week with the late pulse in its cell: 'the late words' appeared there alone.
    expect(answers[1]).toEqual(answers[0]);
    expect(answers[0]).toMatchObject({ items: [{ comment: 'on time' }], suppressed: true });
  }, 120_000);
});
