import { afterEach, describe, expect, it } from 'vitest';
import { loadDataset, type Dataset } from '../../src/domain/dataset.js';
import { moderatePulse } from '../../src/domain/moderation.js';
import { operatorActor } from '../../src/domain/audit.js';
import { createTestApp, get, type TestApp } from '../helpers/app.js';

/**
 * Issue 40, cases 1-3: a released comment tied to one pulse through moderation. Each case as the
 * reviewer played it, with `COMMENTS_RELEASE_DELAY_HOURS=0`, against CONTRACT.md section 5 as
 * amended: one public life per pulse (a pulse shown FLAGGED stays FLAGGED and its comment is never
 * released) and nothing live behind `suppressed` (freezing, due late pools and `suppressed` follow
 * statuses as shown, never a moderation no answer shows yet).
 */
const ORG = 'org_life';
const KEY = 'cp_test_life_0123456789abcdef';
const W = Date.parse('2026-11-02T00:00:00.000Z'); // a Monday
const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const RANGE = 'from=2026-11-02&to=2026-11-08';
const PULSES = `/v1/pulses?from=2026-11-02T00:00:00.000Z&to=2026-11-09T00:00:00.000Z&limit=200`;

type P = { id: string; comment: string | null; moderationStatus: 'CLEAN' | 'FLAGGED'; createdAt: string };
const pulse = (id: string, hour: number, comment: string | null = null, moderationStatus: 'CLEAN' | 'FLAGGED' = 'CLEAN'): P => ({
  id,
  comment,
  moderationStatus,
  createdAt: new Date(W + hour * HOUR).toISOString(),
});

function dataset(ps: P[], first: boolean): Dataset {
  return {
    organizations: [
      {
        id: ORG,
        name: 'Life',
        plan: 'business',
        memberCount: 10,
        createdAt: '2026-01-01T00:00:00.000Z',
        deletedAt: null,
        ...(first
          ? { apiKeys: [{ key: KEY, name: 'watcher', revoked: false }], teams: [{ id: 'team_l', name: 'L', createdAt: '2026-01-01T00:00:00.000Z' }] }
          : {}),
        pulses: ps.map((p) => ({ ...p, level: 3, reason: null, subteamId: 'team_l' })),
      },
    ],
  };
}

describe('one public life per pulse, nothing live behind suppressed (issue 40, cases 1-3)', () => {
  let t: TestApp;
  let clock = W + 2 * DAY;
  afterEach(() => t?.close());
  const open = async (ps: P[]) => {
    clock = W + 2 * DAY;
    t = await createTestApp({ dataset: dataset(ps, true), clock: () => new Date(clock), env: { COMMENTS_RELEASE_DELAY_HOURS: '0' } });
  };
  const status = async () =>
    Object.fromEntries((await get(t.app, PULSES, KEY)).json().items.map((p: { id: string; moderationStatus: string }) => [p.id, p.moderationStatus]));
  const comments = async (team = true) => {
    const res = await get(t.app, `/v1/comments?${RANGE}${team ? '&subteamId=team_l' : ''}`, KEY);
    expect(res.statusCode).toBe(200);
    const body = res.json();
    return { items: body.items.map((c: { comment: string }) => c.comment).sort(), suppressed: body.suppressed };
  };
  const moderate = (id: string, s: 'CLEAN' | 'FLAGGED') => moderatePulse(t.db, ORG, id, s, operatorActor(), new Date(clock));

  it('case 1: a pulse that arrived FLAGGED and was cleared before the release stays FLAGGED, and its comment is never released', async () => {
    // Six CLEAN pulses without a comment, and x, whose comment arrived FLAGGED (an upstream filter).
    await open([...Array.from({ length: 6 }, (_, i) => pulse(`c_${i}`, 10 + i)), pulse('x', 20, 'the words of x', 'FLAGGED')]);
    expect((await status()).x).toBe('FLAGGED');
    await moderate('x', 'CLEAN'); // a moderator clears it before the week is released
    expect((await status()).x).toBe('FLAGGED');
    clock = W + 8 * DAY; // the week has ended: the next answer releases it
    expect(await comments()).toEqual({ items: [], suppressed: false });
    expect((await status()).x).toBe('FLAGGED'); // it was CLEAN here before the fix: the flip named the comment's author
    // Flagged and cleared again after the release: nothing changes anywhere.
    await moderate('x', 'FLAGGED');
    await moderate('x', 'CLEAN');
    expect(await comments()).toEqual({ items: [], suppressed: false });
    expect(await comments(false)).toEqual({ items: [], suppressed: false });
    expect((await status()).x).toBe('FLAGGED');
  });

  it('case 2: a week whose only pulse is flagged (shown CLEAN) is frozen by the first answer that covers it', async () => {
    await open([pulse('x', 10, 'the words of x')]);
    await moderate('x', 'FLAGGED');
    clock = W + 8 * DAY;
    // Before the fix this answer left the week unfrozen (no CLEAN pulse now) and a later cell of 5 released x's comment alone.
    expect(await comments()).toEqual({ items: [], suppressed: false });
    expect((await status()).x).toBe('FLAGGED'); // frozen as it was at the release: its comment is never released
    await moderate('x', 'CLEAN');
    await loadDataset(
      t.db,
      dataset(
        Array.from({ length: 4 }, (_, i) => pulse(`late_${i}`, 30 + i, `late words ${i}`)),
        false,
      ),
    );
    expect(await comments()).toEqual({ items: [], suppressed: true }); // a late pool of 4, withheld
    await loadDataset(t.db, dataset([pulse('late_4', 40, 'late words 4')], false));
    expect(await comments()).toEqual({ items: ['late words 0', 'late words 1', 'late words 2', 'late words 3', 'late words 4'], suppressed: false });
    expect((await status()).x).toBe('FLAGGED');
  });

  it('case 3: flagging and clearing a lone late pulse moves nothing: suppressed stays true until its pool of 5 is released', async () => {
    await open(Array.from({ length: 5 }, (_, i) => pulse(`c_${i}`, 10 + i)));
    clock = W + 8 * DAY;
    expect(await comments()).toEqual({ items: [], suppressed: false }); // the week is frozen: a cell of 5 without comments
    await loadDataset(t.db, dataset([pulse('x', 30, 'the words of x')], false));
    const seen = [await comments()];
    await moderate('x', 'FLAGGED');
    seen.push(await comments());
    await moderate('x', 'CLEAN');
    seen.push(await comments());
    // Before the fix: true, false, true (the late pool counted statuses now), which named x.
    expect(seen).toEqual(Array.from({ length: 3 }, () => ({ items: [], suppressed: true })));
    await loadDataset(
      t.db,
      dataset(
        Array.from({ length: 4 }, (_, i) => pulse(`late_${i}`, 31 + i)),
        false,
      ),
    );
    expect(await comments()).toEqual({ items: ['the words of x'], suppressed: false }); // one comment among 5 pulses shown CLEAN
  });

  it('a late pool is due by its pulses as shown; one flagged at the release leaves a remainder of 4, withheld for good', async () => {
    await open(Array.from({ length: 5 }, (_, i) => pulse(`c_${i}`, 10 + i)));
    clock = W + 8 * DAY;
    expect(await comments()).toEqual({ items: [], suppressed: false });
    await loadDataset(
      t.db,
      dataset(
        Array.from({ length: 5 }, (_, i) => pulse(`late_${i}`, 30 + i, `late words ${i}`)),
        false,
      ),
    );
    await moderate('late_0', 'FLAGGED');
    expect(await comments()).toEqual({ items: [], suppressed: true });
    expect((await status()).late_0).toBe('FLAGGED');
    await moderate('late_0', 'CLEAN');
    expect(await comments()).toEqual({ items: [], suppressed: true });
    expect(await comments(false)).toEqual({ items: [], suppressed: true });
    expect((await status()).late_0).toBe('FLAGGED');
  });
});
