import { copyFileSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { sql } from '../../src/db/executor.js';
import { migrate, MIGRATIONS_DIR } from '../../src/db/migrate.js';
import { PgliteExecutor } from '../../src/db/pglite.js';

/**
 * Migration 0013 on a database of 0012: an organization that existed keeps the key its comments
 * were ordered by (a NULL salt, read as its id), a new one gets 16 random bytes, and the status a
 * released pulse showed stays what GET /pulses shows.
 */
describe('migration 0013 on a database of 0012', () => {
  const dir = mkdtempSync(join(tmpdir(), 'cp-mig13-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('keeps existing organizations on their id key, salts new ones at random, and keeps the shown status', async () => {
    for (const f of readdirSync(MIGRATIONS_DIR).filter((f) => f < '0013')) copyFileSync(join(MIGRATIONS_DIR, f), join(dir, f));
    const db = await PgliteExecutor.open();
    try {
      await migrate(db, `${dir}/`);
      const q = (text: string, params: unknown[] = []) => db.query<Record<string, unknown>>(sql('test.mig13', text), params);
      await q(`INSERT INTO organizations (id, name, plan, created_at) VALUES ('org_old', 'Old', 'business', '2026-01-01Z')`);
      await q(
        `INSERT INTO pulses (org_id, id, level, moderation_status, status_at_release, created_at) VALUES ('org_old', 'p_1', 3, 'FLAGGED', 'CLEAN', '2026-11-03Z')`,
      );
      await migrate(db);
      await q(
        `INSERT INTO organizations (id, name, plan, created_at) VALUES ('org_new', 'New', 'business', '2026-01-01Z'), ('org_new2', 'New 2', 'business', '2026-01-01Z')`,
      );
      const rows = await q(`SELECT id, order_salt FROM organizations ORDER BY id`);
      expect(rows.map((r) => [r.id, r.order_salt === null ? null : (r.order_salt as Uint8Array).length])).toEqual([
        ['org_new', 16],
        ['org_new2', 16],
        ['org_old', null],
      ]);
      expect(Buffer.from(rows[0].order_salt as Uint8Array).equals(Buffer.from(rows[1].order_salt as Uint8Array))).toBe(false);
      expect(await q(`SELECT id, moderation_status, shown_status FROM pulses`)).toEqual([{ id: 'p_1', moderation_status: 'FLAGGED', shown_status: 'CLEAN' }]);
    } finally {
      await db.close();
    }
  });
});
