import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadDataset, type Dataset } from '../../src/domain/dataset.js';
import { moderatePulse } from '../../src/domain/moderation.js';
import { createTestApp, get, type TestApp } from '../helpers/app.js';
import { operatorActor } from '../../src/domain/audit.js';

/**
 * Issue 26, item 1: a reviewer watched GET /pulses while moderators reviewed a week not yet
 * released. `r4_p5` went FLAGGED, then CLEAN again; at the release the cell's one comment was
 * r4_p5's, so the flip named its author. A moderation before the release now shows nowhere until
 * the release (CONTRACT.md section 5): GET /pulses shows the status a pulse arrived with until a
 * release covers it, then the status it had at that release.
 */
const ORG = 'org_review4';
const KEY = 'cp_test_review4_0123456789abcdef';
const W47 = Date.parse('2026-11-16T00:00:00.000Z'); // a Monday
const HOUR = 3_600_000;
const DAY = 24 * HOUR;

type P = { id: string; comment: string | null; moderationStatus: 'CLEAN' | 'FLAGGED'; createdAt: string };
const cell = (
  prefix: string,
  monday: number,
  n: number,
  withComment: (i: number) => boolean,
  status: (i: number) => 'CLEAN' | 'FLAGGED' = () => 'CLEAN',
): P[] =>
  Array.from({ length: n }, (_, i) => ({
    id: `${prefix}_p${i + 1}`,
    comment: withComment(i + 1) ? `words of ${prefix}_p${i + 1}` : null,
    moderationStatus: status(i + 1),
    createdAt: new Date(monday + DAY + i * HOUR).toISOString(),
  }));

function dataset(ps: P[], first: boolean): Dataset {
  return {
    organizations: [
      {
        id: ORG,
        name: 'Review 4',
        plan: 'business',
        memberCount: 10,
        createdAt: '2026-01-01T00:00:00.000Z',
        deletedAt: null,
        ...(first
          ? { apiKeys: [{ key: KEY, name: 'watcher', revoked: false }], teams: [{ id: 'team_r4', name: 'R4', createdAt: '2026-01-01T00:00:00.000Z' }] }
          : {}),
        pulses: ps.map((p) => ({ ...p, level: 3, reason: null, subteamId: 'team_r4' })),
      },
    ],
  };
}

describe('moderation before release is visible nowhere until the release', () => {
  let t: TestApp;
  // Thursday of W48: W47 has ended but is not released yet (24 hours after its end: Tuesday 00:00 + ...).
  let clock = W47 + 7 * DAY + 12 * HOUR;
  // W47, team R4: a cell of 8, where only r4_p5 has a comment; r4_p7 arrived FLAGGED, r4_p8 arrived CLEAN.
  const week = cell(
    'r4',
    W47,
    8,
    (i) => i === 5,
    (i) => (i === 7 ? 'FLAGGED' : 'CLEAN'),
  );
  const pulsesPage = async () => {
    const res = await get(t.app, `/v1/pulses?from=2026-11-16T00:00:00.000Z&to=2026-11-23T00:00:00.000Z&limit=200`, KEY);
    expect(res.statusCode).toBe(200);
    return {
      body: res.body,
      etag: res.headers.etag,
      status: Object.fromEntries(res.json().items.map((p: { id: string; moderationStatus: string }) => [p.id, p.moderationStatus])),
    };
  };

  beforeAll(async () => {
    t = await createTestApp({ dataset: dataset(week, true), clock: () => new Date(clock) });
  });
  afterAll(() => t.close());

  it('GET /pulses stays byte-identical while a moderator flags and un-flags the one pulse with a comment before the release (r4_p5)', async () => {
    const before = await pulsesPage();
    expect(before.status).toMatchObject({ r4_p5: 'CLEAN', r4_p7: 'FLAGGED' });
    await moderatePulse(t.db, ORG, 'r4_p5', 'FLAGGED', operatorActor(), new Date());
    expect(await pulsesPage()).toEqual(before);
    await moderatePulse(t.db, ORG, 'r4_p5', 'CLEAN', operatorActor(), new Date());
    expect(await pulsesPage()).toEqual(before);
    // Moderations that stay until the release: one arrived FLAGGED and is cleared, one arrived CLEAN and is flagged.
    await moderatePulse(t.db, ORG, 'r4_p7', 'CLEAN', operatorActor(), new Date());
    await moderatePulse(t.db, ORG, 'r4_p8', 'FLAGGED', operatorActor(), new Date());
    expect(await pulsesPage()).toEqual(before);
    // The comments of W47 are not released yet: nothing there either.
    const comments = await get(t.app, '/v1/comments?from=2026-11-16&to=2026-11-22', KEY);
    expect(comments.json()).toMatchObject({ items: [], releasedThrough: null });
  });

  it('the release decides by the status then, and GET /pulses shows that status from the release on', async () => {
    clock = W47 + 9 * DAY; // W47 ended two days ago: released by the next answer that covers it
    const comments = await get(t.app, '/v1/comments?from=2026-11-16&to=2026-11-22', KEY);
    expect(comments.statusCode).toBe(200);
    // The cell holds 6 CLEAN pulses at the release: r4_p8 was flagged, and r4_p7, cleared, arrived
    // FLAGGED (one public life per pulse: shown FLAGGED once, FLAGGED for good). r4_p5's comment is released.
    expect(comments.json()).toMatchObject({ items: [{ comment: 'words of r4_p5' }], suppressed: false, releasedThrough: '2026-11-22' });
    const after = await pulsesPage();
    expect(after.status).toEqual({
      r4_p1: 'CLEAN',
      r4_p2: 'CLEAN',
      r4_p3: 'CLEAN',
      r4_p4: 'CLEAN',
      r4_p5: 'CLEAN',
      r4_p6: 'CLEAN',
      r4_p7: 'FLAGGED',
      r4_p8: 'FLAGGED',
    });
    // After the release, moderation hides the comment and GET /pulses keeps the status at the release.
    await moderatePulse(t.db, ORG, 'r4_p5', 'FLAGGED', operatorActor(), new Date());
    expect(await pulsesPage()).toEqual(after);
    expect((await get(t.app, '/v1/comments?from=2026-11-16&to=2026-11-22', KEY)).json().items).toEqual([]);
    await moderatePulse(t.db, ORG, 'r4_p5', 'CLEAN', operatorActor(), new Date());
  });

  it('a late pool: flag and un-flag before the pool is released leave GET /pulses as the pulses arrived', async () => {
    // Five late pulses reach the released W47; one (l_p3) has a comment. The pool is not released until an answer covers it.
    const late = cell('l', W47, 5, (i) => i === 3);
    await loadDataset(t.db, dataset(late, false));
    const before = await pulsesPage();
    expect(before.status).toMatchObject({ l_p1: 'CLEAN', l_p3: 'CLEAN' });
    await moderatePulse(t.db, ORG, 'l_p3', 'FLAGGED', operatorActor(), new Date());
    expect(await pulsesPage()).toEqual(before);
    await moderatePulse(t.db, ORG, 'l_p3', 'CLEAN', operatorActor(), new Date());
    expect(await pulsesPage()).toEqual(before);
    // Flagged until the pool's release. Whether the pool is due is decided on the statuses as shown
    // (5 CLEAN as they arrived), never on a moderation no answer shows: the next answer releases it,
    // with l_p1 frozen FLAGGED, so the other 4 make a remainder below 5, withheld for good.
    await moderatePulse(t.db, ORG, 'l_p1', 'FLAGGED', operatorActor(), new Date());
    expect(await pulsesPage()).toEqual(before);
    const comments = await get(t.app, '/v1/comments?from=2026-11-16&to=2026-11-22', KEY);
    expect(comments.json()).toMatchObject({ items: [{ comment: 'words of r4_p5' }], suppressed: true });
    const released = await pulsesPage();
    expect(released.status).toMatchObject({ l_p1: 'FLAGGED', l_p2: 'CLEAN', l_p3: 'CLEAN', l_p4: 'CLEAN', l_p5: 'CLEAN' });
    // Cleared after the release: no answer changes (one public life per pulse).
    await moderatePulse(t.db, ORG, 'l_p1', 'CLEAN', operatorActor(), new Date());
    expect(await pulsesPage()).toEqual(released);
    expect((await get(t.app, '/v1/comments?from=2026-11-16&to=2026-11-22', KEY)).body).toBe(comments.body);
  });
});
