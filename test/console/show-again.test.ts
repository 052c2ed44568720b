import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { operatorActor } from '../../src/domain/audit.js';
import { moderatePulse } from '../../src/domain/moderation.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { type ConsoleClient, joinConsole } from '../helpers/console-client.js';

/**
 * Issue 40, item 3: "Show again" on a comment whose pulse is not CLEAN answers as "Show again" on
 * any other comment does: the page says nothing that another comment's answer would not say. The
 * comment itself stays out of answers while its pulse is not CLEAN (moderation after release), as
 * it would have left them had it never been hidden.
 */
const ORG = 'org_show';
const W = Date.parse('2026-11-02T00:00:00.000Z');
const NOW = new Date(W + 9 * 86_400_000);
const PAGE = '/console/comments?from=2026-11-02&to=2026-11-08';

describe('show again on a comment whose pulse is flagged (issue 40, item 3)', () => {
  let t: TestApp;
  let admin: ConsoleClient;
  beforeAll(async () => {
    t = await createTestApp({
      now: NOW,
      env: { COMMENTS_RELEASE_DELAY_HOURS: '0' },
      dataset: {
        organizations: [
          {
            id: ORG,
            name: 'Show',
            plan: 'business',
            memberCount: 6,
            createdAt: '2026-01-01T00:00:00.000Z',
            deletedAt: null,
            pulses: Array.from({ length: 6 }, (_, i) => ({
              id: `s_${i}`,
              level: 3,
              reason: null,
              comment: `words of s_${i}`,
              moderationStatus: 'CLEAN' as const,
              subteamId: null,
              createdAt: new Date(W + (i + 1) * 3_600_000).toISOString(),
            })),
          },
        ],
      },
    });
    admin = await joinConsole(t, ORG, 'admin@example.com', 'admin', NOW);
    admin.followChanges = false; // the test follows the redirect itself, to see where it leads
  });
  afterAll(() => t.close());

  const handleOf = (body: string, comment: string) => {
    const li = body.split('<li>').find((x) => x.includes(`<bdi>${comment}</bdi>`));
    const handle = li && /name="handle" value="([^"]+)"/.exec(li)?.[1];
    expect(handle, `a handle for ${comment}`).toBeDefined();
    return handle!;
  };
  /** Posts the form and returns what the member is told: the status, where it leads and the message on the page it leads to. */
  const press = async (action: 'hide' | 'show', comment: string) => {
    const page = (await admin.get(PAGE)).body;
    const res = await admin.submit(PAGE, `/console/comments/${action}`, { handle: handleOf(page, comment), from: '2026-11-02', to: '2026-11-08' });
    const next = res.statusCode === 303 ? (await admin.get(res.headers.location as string)).body : res.body;
    const message = /<p[^>]*role="status"[^>]*>([\s\S]*?)<\/p>|class="notice[^"]*"[^>]*>([\s\S]*?)<\//.exec(next);
    return { status: res.statusCode, location: res.headers.location, message: message?.[1] ?? message?.[2] ?? null };
  };

  it('answers alike for a CLEAN and a FLAGGED pulse, and the flagged one stays out of answers', async () => {
    await press('hide', 'words of s_1');
    await press('hide', 'words of s_2');
    await moderatePulse(t.db, ORG, 's_2', 'FLAGGED', operatorActor(), NOW);
    const clean = await press('show', 'words of s_1');
    const flagged = await press('show', 'words of s_2');
    expect(clean.message).not.toBeNull();
    expect(clean).toMatchObject({ status: 303, location: '/console/comments?from=2026-11-02&to=2026-11-08' }); // back to the range the form was on
    expect(flagged).toEqual(clean);
    const page = (await admin.get(PAGE)).body;
    expect(page).toContain('<bdi>words of s_1</bdi>');
    expect(page).not.toContain('<bdi>words of s_2</bdi>');
    // Cleared again, it returns like any comment whose pulse is CLEAN.
    await moderatePulse(t.db, ORG, 's_2', 'CLEAN', operatorActor(), NOW);
    expect((await admin.get(PAGE)).body).toContain('<bdi>words of s_2</bdi>');
  });
});
