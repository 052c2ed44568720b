import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CommentReleases } from '../../src/domain/comments.js';
import { loadDataset } from '../../src/domain/dataset.js';
import { importPulses } from '../../src/domain/import.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { operatorActor } from '../../src/domain/audit.js';

const ORG = 'org_frozen_import';

describe('imports into weeks whose comments are already released', () => {
  let t: TestDatabase;
  const dir = mkdtempSync(join(tmpdir(), 'cp-frozen-'));
  beforeAll(async () => {
    t = await createTestDatabase();
    await loadDataset(t.db, {
      organizations: [
        {
          id: ORG,
          name: 'Frozen',
          plan: 'business',
          createdAt: '2026-01-01T00:00:00.000Z',
          teams: [{ id: 'team_f', name: 'F', createdAt: '2026-01-01T00:00:00.000Z' }],
          pulses: Array.from({ length: 6 }, (_, i) => ({
            id: `fz_${i}`,
            level: 3,
            reason: null,
            comment: `c ${i}`,
            moderationStatus: 'CLEAN' as const,
            subteamId: 'team_f',
            createdAt: `2026-11-0${3 + (i % 3)}T10:00:00.000Z`,
          })),
        },
      ],
    });
    // The week of 2026-11-02 is released (frozen); the week of 2026-11-09 is not.
    await new CommentReleases('frozen-import-secret-0123456789abcdef', 0).ensureReleased(t.db, ORG, '2026-11-02', '2026-11-02');
  });
  afterAll(async () => {
    await t.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('import-pulses says how many imported pulses fall into frozen weeks, on the week boundaries exactly', async () => {
    const rows = [
      ['late_1', '2026-11-02T00:00:00.000Z'], // first instant of the frozen week
      ['late_2', '2026-11-05T12:00:00.000Z'],
      ['late_3', '2026-11-08T23:59:59.999Z'], // last instant of the frozen week
      ['new_1', '2026-11-09T00:00:00.000Z'],
      ['new_2', '2026-11-01T23:59:59.999Z'],
    ].map(([id, createdAt]) => JSON.stringify({ id, level: 2, reason: null, comment: 'late', moderationStatus: 'CLEAN', subteamId: 'team_f', createdAt }));
    const file = join(dir, 'late.ndjson');
    writeFileSync(file, `${rows.join('\n')}\n`);
    const summary = await importPulses(t.db, { orgId: ORG, file, onError: 'abort' }, operatorActor(), new Date());
    expect(summary).toMatchObject({ imported: 5, pulsesInFrozenWeeks: 3 });
  });

  it('a dataset whose date-times carry offsets is counted by UTC week, on the boundaries exactly', async () => {
    const pulse = (id: string, createdAt: string) => ({
      id,
      level: 2,
      reason: null,
      comment: 'late',
      moderationStatus: 'CLEAN' as const,
      subteamId: null,
      createdAt,
    });
    const summary = await loadDataset(t.db, {
      organizations: [
        {
          id: ORG,
          name: 'Frozen',
          plan: 'business',
          createdAt: '2026-01-01T00:00:00.000Z',
          pulses: [
            pulse('off_1', '2026-11-09T01:30:00+02:00'), // 2026-11-08T23:30Z: in the frozen week
            pulse('off_2', '2026-11-01T20:00:00-05:00'), // 2026-11-02T01:00Z: in the frozen week
            pulse('off_3', '2026-11-02T01:00:00+02:00'), // 2026-11-01T23:00Z: the week before
            pulse('off_4', '2026-11-04T12:00:00+02:00'), // inside the frozen week whichever way it is read
          ],
        },
      ],
    });
    // Read by their local dates, off_1 and off_2 would fall outside and off_3 inside: 2, not 3.
    expect(summary).toMatchObject({ pulses: 4, pulsesInFrozenWeeks: 3 });
  });
});
