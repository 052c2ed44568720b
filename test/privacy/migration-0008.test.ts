import { copyFileSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { sql } from '../../src/db/executor.js';
import { migrate, MIGRATIONS_DIR } from '../../src/db/migrate.js';
import { PgliteExecutor } from '../../src/db/pglite.js';
import { CommentReleases, listCommentPage } from '../../src/domain/comments.js';
import { moderatePulse } from '../../src/domain/moderation.js';
import { operatorActor } from '../../src/domain/audit.js';

/**
 * Migration 0008 on a database released under the rule of issue 9: a cell withdrawn by a flag comes
 * back without the flagged comment, pulses of the frozen week that were not members are recorded as
 * frozen (never released, no late pool), GET /pulses keeps showing the flagged member as CLEAN.
 */
describe('migration 0008 on comments released by migration 0003', () => {
  const dir = mkdtempSync(join(tmpdir(), 'cp-mig-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('keeps every promise of the old release and lets withdrawn cells come back without the flagged comment', async () => {
    for (const f of readdirSync(MIGRATIONS_DIR).filter((f) => f < '0007')) copyFileSync(join(MIGRATIONS_DIR, f), join(dir, f));
    const db = await PgliteExecutor.open();
    try {
      await migrate(db, `${dir}/`);
      const q = (text: string, params: unknown[] = []) => db.query(sql('test.mig', text), params);
      await q(`INSERT INTO organizations (id, name, plan, created_at) VALUES ('org_m', 'M', 'business', '2026-01-01Z')`);
      await q(`INSERT INTO teams (org_id, id, name, created_at) VALUES ('org_m', 'a', 'A', '2026-01-01Z')`);
      // W45: six CLEAN members with comments (m_1 flagged after the release), m_7 FLAGGED at the release, m_8 arrived late.
      await q(`INSERT INTO pulses (org_id, id, level, comment, moderation_status, subteam_id, created_at)
               SELECT 'org_m', 'm_' || g, 3, 'c' || g, 'CLEAN', 'a', '2026-11-03T10:00:00Z'::timestamptz + g * interval '1 hour'
                 FROM generate_series(1, 8) g`);
      await q(`UPDATE pulses SET moderation_status = 'FLAGGED' WHERE org_id = 'org_m' AND id = 'm_7'`);
      await q(`INSERT INTO comment_release_spans VALUES ('org_m', '2026-11-02', '2026-11-02', now())`);
      await q(`INSERT INTO comment_cells (org_id, week, cell, sample, released) VALUES ('org_m', '2026-11-02', 'team:a', 6, true)`);
      await q(`INSERT INTO comment_release_members (org_id, pulse_id, week, grp, cell, rank, comment, visible)
               SELECT 'org_m', 'm_' || g, '2026-11-02', 'team:a', 'team:a', sha256(convert_to('m_' || g, 'UTF8')), 'c' || g, true
                 FROM generate_series(1, 6) g`);
      // The old trigger withdraws the whole cell when m_1 is flagged.
      await q(`UPDATE pulses SET moderation_status = 'FLAGGED' WHERE org_id = 'org_m' AND id = 'm_1'`);
      expect(await q(`SELECT count(*)::int AS n FROM comment_release_members WHERE visible`)).toEqual([{ n: 0 }]);

      await migrate(db);
      const releases = new CommentReleases('migration-secret-0123456789abcdef0123', 0);
      const now = new Date('2026-11-20T00:00:00Z');
      const page = await listCommentPage(db, 'org_m', { from: '2026-11-02', to: '2026-11-08', limit: 100 }, releases, now);
      expect(page.items.map((i) => i.comment).sort()).toEqual(['c2', 'c3', 'c4', 'c5', 'c6']);
      expect(page.suppressed).toBe(false);
      expect(await q(`SELECT id, shown_status FROM pulses WHERE shown_status IS NOT NULL`)).toEqual([{ id: 'm_1', shown_status: 'CLEAN' }]);
      // Frozen CLEAN as shown (migration 0021): m_1 is shown CLEAN, as at its release, and m_8 was frozen CLEAN.
      expect(await q(`SELECT grp, frozen_clean FROM comment_frozen_groups`)).toEqual([{ grp: 'team:a', frozen_clean: 7 }]);
      expect(await q(`SELECT count(*)::int AS n FROM comment_release_members`)).toEqual([{ n: 8 }]);

      // The late m_8 and the formerly FLAGGED m_7 are frozen: setting them around never releases them.
      await moderatePulse(db, 'org_m', 'm_7', 'CLEAN', operatorActor(), new Date());
      await moderatePulse(db, 'org_m', 'm_1', 'CLEAN', operatorActor(), new Date());
      const after = await listCommentPage(db, 'org_m', { from: '2026-11-02', to: '2026-11-08', limit: 100 }, releases, now);
      expect(after.items.map((i) => i.comment).sort()).toEqual(['c1', 'c2', 'c3', 'c4', 'c5', 'c6']);
      expect(after.suppressed).toBe(false);
      expect(await q(`SELECT count(*)::int AS n FROM pulses WHERE shown_status IS NOT NULL`)).toEqual([{ n: 1 }]);
    } finally {
      await db.close();
    }
  });
});
