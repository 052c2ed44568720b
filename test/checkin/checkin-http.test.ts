import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KEYS, readDataset } from '../fixtures/dataset.js';
import { createTestApp, get, type TestApp } from '../helpers/app.js';
import { operatorActor } from '../../src/domain/audit.js';
import { createRespondent, moveRespondent, replaceRoster } from '../../src/domain/checkins/roster.js';
import { updateCheckinSettings } from '../../src/domain/checkins/settings.js';
import { runRounds } from '../../src/domain/checkins/rounds.js';
import { sql } from '../../src/db/executor.js';
import { answer, linkToken, openAndIssue } from './helpers.js';

/**
 * The check-in face over HTTP (CONTRACT.md section 12): a roster of 6 in Web and 2 in Small, a
 * round mailed to a recording mailer, every link opened, a token issued once, every answer
 * written through the pulse door in the right team (none for Small), a token spent once.
 */
describe('check-ins over HTTP', () => {
  let t: TestApp;
  let now = new Date('2026-11-23T09:30:00.000Z'); // Monday of the week 2026-11-23, after the default 09:00 UTC round
  const mails: { to: string; subject: string; text: string }[] = [];
  const ORG = 'org_acme';
  const op = operatorActor('127.0.0.1');

  beforeAll(async () => {
    t = await createTestApp({ dataset: readDataset(), clock: () => now, env: { COMMENTS_RELEASE_DELAY_HOURS: '24' } });
    for (let i = 1; i <= 6; i++) await createRespondent(t.db, ORG, { email: `web${i}@acme.test`, team: 'Web' }, op, now);
    await createRespondent(t.db, ORG, { email: 'small1@acme.test', team: 'Small' }, op, now);
    await createRespondent(t.db, ORG, { email: 'small2@acme.test', team: 'Small' }, op, now);
    await updateCheckinSettings(t.db, ORG, { reasons: ['workload', 'team'], flagWords: ['idiot'] }, op, now);
    const report = await runRounds(t.db, { linkFor: (o, tok) => `http://127.0.0.1:3000/checkin/o/${o}#${tok}`, send: async (m) => void mails.push(m) }, now);
    expect(report).toEqual({ mailed: 8, reminded: 0, failed: 0 });
  });
  afterAll(async () => t?.close());

  it('mails each respondent once, a link whose token rides in the fragment', async () => {
    expect(mails.map((m) => m.to).sort()).toEqual(['small1@acme.test', 'small2@acme.test', ...[1, 2, 3, 4, 5, 6].map((i) => `web${i}@acme.test`)]);
    expect(mails.every((m) => linkToken(m.text)?.length === 32)).toBe(true);
    expect(mails[0].subject).toBe('How was your week? (Acme)');
    // A second run (another process, or the next tick) sends nothing again.
    expect(await runRounds(t.db, { linkFor: () => 'x', send: async (m) => void mails.push(m) }, now)).toEqual({ mailed: 0, reminded: 0, failed: 0 });
    expect(mails).toHaveLength(8);
  });

  it('answers: team of 6 under its team key, team of 2 without a team; pulses at the hour; second answer 409, second issuance 409', async () => {
    const byMail = new Map(mails.map((m) => [m.to, linkToken(m.text)!]));
    const web1 = await openAndIssue(t.app, ORG, byMail.get('web1@acme.test')!);
    expect(web1.opened).toMatchObject({
      orgName: 'Acme',
      week: '2026-11-23',
      teamId: 'team_web',
      teamName: 'Web',
      suite: 'RSABSSA-SHA384-PSS-Randomized',
      reasons: ['workload', 'team'],
      issued: false,
    });
    const small1 = await openAndIssue(t.app, ORG, byMail.get('small1@acme.test')!);
    expect(small1.opened).toMatchObject({ teamId: null, teamName: null });

    now = new Date('2026-11-23T10:47:12.345Z');
    const r1 = await answer(t.app, ORG, web1, { level: 4, reason: 'workload', comment: 'Good week' });
    expect(r1.statusCode, r1.body).toBe(200);
    expect(r1.json()).toEqual({ commentsFrom: '2026-12-01T00:00:00.000Z' });
    const again = await answer(t.app, ORG, web1, { level: 1 });
    expect(again.statusCode).toBe(409);
    expect(again.json()).toEqual({ error: { code: 'invalid_transition', message: 'This check-in token was already used: one answer per token.' } });
    expect((await answer(t.app, ORG, small1, { level: 2, comment: 'What an IDIOT plan.' })).statusCode).toBe(200);

    const reissue = await t.app.inject({
      method: 'POST',
      url: `/checkin/o/${ORG}/issue`,
      payload: { token: byMail.get('web1@acme.test'), blindedMessage: web1.message },
    });
    expect(reissue.statusCode).toBe(409);
    expect(reissue.json().error.code).toBe('invalid_transition');
    // Opened again: the page learns it was issued already.
    const reopened = await t.app.inject({ method: 'POST', url: `/checkin/o/${ORG}/open`, payload: { token: byMail.get('web1@acme.test') } });
    expect(reopened.json().issued).toBe(true);

    const pulses = await get(t.app, '/v1/pulses?from=2026-11-23T00:00:00.000Z&to=2026-11-24T00:00:00.000Z', KEYS.acme);
    expect(pulses.statusCode).toBe(200);
    const items = (
      pulses.json() as {
        items: { level: number; reason: string | null; subteamId: string | null; subteamName: string | null; moderationStatus: string; createdAt: string }[];
      }
    ).items;
    expect(
      items
        .map(({ level, reason, subteamId, subteamName, moderationStatus, createdAt }) => ({
          level,
          reason,
          subteamId,
          subteamName,
          moderationStatus,
          createdAt,
        }))
        .sort((a, b) => a.level - b.level),
    ).toEqual([
      { level: 2, reason: null, subteamId: null, subteamName: null, moderationStatus: 'FLAGGED', createdAt: '2026-11-23T10:00:00.000Z' },
      { level: 4, reason: 'workload', subteamId: 'team_web', subteamName: 'Web', moderationStatus: 'CLEAN', createdAt: '2026-11-23T10:00:00.000Z' },
    ]);
    const stats = await get(t.app, '/v1/stats', KEYS.acme);
    expect(stats.statusCode).toBe(200);
  });

  it('refuses what is not a token, a bad link, unknown fields, a reason not offered, a comment over 2,000 characters', async () => {
    const byMail = new Map(mails.map((m) => [m.to, linkToken(m.text)!]));
    const web2 = await openAndIssue(t.app, ORG, byMail.get('web2@acme.test')!);
    const forged = { ...web2, signature: Buffer.alloc(256, 7).toString('base64url') };
    expect((await answer(t.app, ORG, forged, { level: 3 })).json().error).toEqual({
      code: 'invalid_request',
      message: 'The check-in token does not verify under a published key of this organization.',
    });
    expect((await answer(t.app, 'org_beta', web2, { level: 3 })).statusCode).toBe(400);
    expect((await answer(t.app, ORG, web2, { level: 6 })).json().error.message).toBe("'level' must be an integer from 1 to 5.");
    expect((await answer(t.app, ORG, web2, { level: 3, reason: 'salary' })).statusCode).toBe(400);
    expect((await answer(t.app, ORG, web2, { level: 3, comment: 'x'.repeat(2001) })).json().error.message).toBe("'comment' must be at most 2000 characters.");
    const extra = await t.app.inject({
      method: 'POST',
      url: '/checkin/answer',
      payload: { orgId: ORG, keyId: web2.keyId, message: web2.message, signature: web2.signature, level: 3, email: 'web2@acme.test' },
    });
    expect(extra.json().error).toEqual({ code: 'invalid_request', message: "Unknown body field 'email'." });
    // None of those spent the token: the real answer still goes in.
    expect((await answer(t.app, ORG, web2, { level: 3, comment: 'x'.repeat(2000) })).statusCode).toBe(200);
    const bad = await t.app.inject({ method: 'POST', url: `/checkin/o/${ORG}/open`, payload: { token: 'A'.repeat(32) } });
    expect(bad.statusCode).toBe(404);
    expect(bad.json().error).toEqual({ code: 'not_found', message: 'This check-in link is not valid or has closed.' });
    // A link of one organization opens nothing in another.
    expect((await t.app.inject({ method: 'POST', url: '/checkin/o/org_beta/open', payload: { token: byMail.get('web3@acme.test') } })).statusCode).toBe(404);
  });

  it('publishes the same keys to every caller, cacheable; serves the page under the console CSP with its script from the service', async () => {
    const a = await t.app.inject({ method: 'GET', url: `/checkin/keys/${ORG}`, headers: { 'user-agent': 'a', 'x-forwarded-for': '10.0.0.1' } });
    const b = await t.app.inject({ method: 'GET', url: `/checkin/keys/${ORG}`, headers: { 'user-agent': 'b' } });
    expect(a.body).toBe(b.body);
    expect(a.headers['cache-control']).toBe('public, max-age=60');
    expect((a.json().keys as { teamId: string | null }[]).map((k) => k.teamId).sort()).toEqual([null, 'team_web'].sort());
    const page = await t.app.inject({ method: 'GET', url: `/checkin/o/${ORG}` });
    expect(page.statusCode).toBe(200);
    expect(page.headers['content-security-policy']).toBe(
      "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; frame-ancestors 'none'; form-action 'self'; base-uri 'none'",
    );
    expect(page.headers['referrer-policy']).toBe('no-referrer');
    // The script is bundled at build time and named by its content's hash (test/ops/bundle.test.ts).
    const src = /<script src="(\/checkin\/assets\/checkin\.[0-9a-f]{16}\.js)" defer><\/script>/.exec(page.body)?.[1];
    expect(src, page.body).toBeDefined();
    expect(page.body).toContain('<p id="nojs" class="notice error"><span data-m="checkin.noScript">This page needs JavaScript');
    // Every language ships inside the one script: choosing one makes no request (section 12).
    expect(page.body).toContain('<select id="lang" name="lang">');
    expect(page.body).not.toMatch(/<script>|<script(?![^>]*src=")|\sstyle="|\son\w+="/);
    expect(page.body).not.toMatch(/https?:\/\//);
    const js = await t.app.inject({ method: 'GET', url: src! });
    expect(js.statusCode).toBe(200);
    expect(js.headers['content-type']).toBe('text/javascript; charset=utf-8');
    expect(js.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    expect(js.body).toContain('RSABSSA');
    expect(js.body.length).toBeGreaterThan(10_000);
    for (const word of ['Wöchentlicher Check-in', 'Point hebdomadaire', '週次チェックイン', '每周签到', 'الاستطلاع الأسبوعي', 'Haftalık nabız anketi']) {
      expect(js.body).toContain(word);
    }
  });

  it('a team that falls under 5 answers without a team from the next round; participation counts show only from 5', async () => {
    const { participation } = await import('../../src/domain/checkins/rounds.js');
    const cells = await participation(t.db, ORG, now);
    expect(cells).toEqual([
      { week: '2026-11-23', teamId: 'team_web', teamName: 'Web', invited: 6, opened: null, answered: null },
      { week: '2026-11-23', teamId: null, teamName: null, invited: null, opened: null, answered: null },
    ]);
    await moveRespondent(
      t.db,
      ORG,
      (await t.db.query<{ id: string }>(sql('t', `SELECT id FROM respondents WHERE org_id = 'org_acme' AND email = 'web6@acme.test'`)))[0].id,
      'Data',
      op,
      now,
    );
    const r = await replaceRoster(t.db, ORG, 'email,team\nweb1@acme.test,Web\nweb2@acme.test,Web\n', op, now);
    expect(r).toEqual({ added: 0, removed: 6, moved: 0, unchanged: 2 });
  });

  it('limits issuance and answers per address in memory: 429 with Retry-After, another address unaffected', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 610; i++) {
      const r = await t.app.inject({
        method: 'POST',
        url: '/checkin/answer',
        remoteAddress: '192.0.2.77',
        payload: { orgId: ORG, keyId: 'ck_x', message: 'AA', signature: 'AA', level: 3 },
      });
      statuses.push(r.statusCode);
      if (r.statusCode === 429) {
        expect(r.headers['retry-after']).toBe('60');
        expect(r.json().error.code).toBe('rate_limited');
      }
    }
    expect(statuses.filter((s) => s === 400)).toHaveLength(600);
    expect(statuses.slice(600)).toEqual(Array(10).fill(429));
    expect(
      (
        await t.app.inject({
          method: 'POST',
          url: '/checkin/answer',
          remoteAddress: '192.0.2.78',
          payload: { orgId: ORG, keyId: 'ck_x', message: 'AA', signature: 'AA', level: 3 },
        })
      ).statusCode,
    ).toBe(400);
  });

  it('CHECKIN_REQUESTS_PER_MINUTE sets the limit per address', async () => {
    const small = await createTestApp({ dataset: readDataset(), env: { CHECKIN_REQUESTS_PER_MINUTE: '3' } });
    try {
      const send = () =>
        small.app.inject({
          method: 'POST',
          url: '/checkin/answer',
          remoteAddress: '192.0.2.90',
          payload: { orgId: ORG, keyId: 'ck_x', message: 'AA', signature: 'AA', level: 3 },
        });
      const statuses = [];
      for (let i = 0; i < 5; i++) statuses.push((await send()).statusCode);
      expect(statuses).toEqual([400, 400, 400, 429, 429]);
    } finally {
      await small.close();
    }
  });
});
