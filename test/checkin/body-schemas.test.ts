import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readDataset } from '../fixtures/dataset.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { ApiError } from '../../src/contract/errors.js';
import { operatorActor } from '../../src/domain/audit.js';
import { answerCheckin, issueCheckinToken, openCheckin } from '../../src/domain/checkins/answers.js';
import { CheckinKeys } from '../../src/domain/checkins/keys.js';
import { createRespondent } from '../../src/domain/checkins/roster.js';
import { runRounds } from '../../src/domain/checkins/rounds.js';
import { updateCheckinSettings } from '../../src/domain/checkins/settings.js';
import { serviceSecret } from '../../src/db/repositories/secrets.js';
import { linkToken, openAndIssue, type ClientToken } from './helpers.js';

/**
 * The check-in face declares its bodies and paths as schemas (issue 54, item 8), and a body with
 * one fault gets the answer it got when the face checked bodies by hand: the same status, code
 * and words as the domain gives for it (the domain still checks, for its other callers).
 */
describe('the check-in face validates by schema, with its own answers', () => {
  let t: TestApp;
  const now = new Date('2026-11-23T09:30:00.000Z');
  const ORG = 'org_acme';
  const mails: { to: string; text: string }[] = [];
  let keys: CheckinKeys;
  let token: ClientToken;
  let spare: string;

  beforeAll(async () => {
    t = await createTestApp({ dataset: readDataset(), clock: () => now });
    const op = operatorActor('127.0.0.1');
    for (let i = 1; i <= 5; i++) await createRespondent(t.db, ORG, { email: `w${i}@acme.test`, team: 'Web' }, op, now);
    await updateCheckinSettings(t.db, ORG, { reasons: ['workload'] }, op, now);
    await runRounds(t.db, { linkFor: (o, tok) => `http://h/checkin/o/${o}#${tok}`, send: async (m) => void mails.push(m) }, now);
    token = await openAndIssue(t.app, ORG, linkToken(mails[0].text)!);
    spare = linkToken(mails[1].text)!;
    keys = new CheckinKeys(await serviceSecret(t.db, 'checkin_key_seal'));
  });
  afterAll(async () => t?.close());

  const refusal = async (p: Promise<unknown>) => {
    try {
      await p;
    } catch (err) {
      if (err instanceof ApiError) return { status: err.statusCode, error: { code: err.code, message: err.message } };
      throw err;
    }
    throw new Error('the domain accepted it');
  };
  const post = async (url: string, payload: unknown) => {
    const res = await t.app.inject({ method: 'POST', url, headers: { 'content-type': 'application/json' }, payload: JSON.stringify(payload) });
    return { status: res.statusCode, error: res.json().error };
  };

  it('an answer with one fault: the same answer as the domain gives', async () => {
    const good = { orgId: ORG, keyId: token.keyId, message: token.message, signature: token.signature, level: 3 };
    const faults: Record<string, unknown>[] = [
      { keyId: 'ck_' },
      { keyId: 7 },
      { message: 'not base64!' },
      { message: undefined },
      { signature: ['x'] },
      { level: 6 },
      { level: 2.5 },
      { level: '3' },
      { level: undefined },
      { comment: 5 },
      { team: 'yes' },
      { reason: 5 },
    ];
    for (const fault of faults) {
      const body = { ...good, ...fault };
      const { orgId, ...a } = body;
      const expected = await refusal(answerCheckin(t.db, keys, orgId as string, a, { releaseDelayHours: 0 }, now));
      const got = await post('/checkin/answer', body);
      expect(got, JSON.stringify(fault)).toEqual(expected);
      expect(got.status).toBe(400);
    }
    expect(await post('/checkin/answer', { ...good, orgId: 'no spaces' })).toEqual({
      status: 400,
      error: { code: 'invalid_request', message: "'orgId' must be an organization id." },
    });
    expect(await post('/checkin/answer', { ...good, email: 'w1@acme.test' })).toEqual({
      status: 400,
      error: { code: 'invalid_request', message: "Unknown body field 'email'." },
    });
    for (const notObject of [[good], 'x', 3, null]) {
      expect(await post('/checkin/answer', notObject)).toEqual({ status: 400, error: { code: 'invalid_json', message: 'The body must be a JSON object.' } });
    }
    // None of those spent the token.
    expect(
      (await t.app.inject({ method: 'POST', url: '/checkin/answer', payload: { ...good, reason: 'workload', comment: null, team: true } })).statusCode,
    ).toBe(200);
  });

  it('an opening or an issuance with one fault: the same answer as the domain gives', async () => {
    for (const tok of ['short', 42, undefined, 'A'.repeat(65)]) {
      const expected = await refusal(openCheckin(t.db, keys, ORG, tok, now));
      expect(expected.status).toBe(404);
      expect(await post(`/checkin/o/${ORG}/open`, tok === undefined ? {} : { token: tok })).toEqual(expected);
      expect(await post(`/checkin/o/${ORG}/issue`, tok === undefined ? { blindedMessage: 'AAAA' } : { token: tok, blindedMessage: 'AAAA' })).toEqual(expected);
    }
    for (const blinded of ['%%%', 12, undefined]) {
      const expected = await refusal(issueCheckinToken(t.db, keys, ORG, spare, blinded, now));
      expect(expected).toEqual({ status: 400, error: { code: 'invalid_request', message: "'blindedMessage' must be base64url." } });
      expect(await post(`/checkin/o/${ORG}/issue`, blinded === undefined ? { token: spare } : { token: spare, blindedMessage: blinded })).toEqual(expected);
    }
    expect(await post(`/checkin/o/${ORG}/open`, { token: spare, extra: 1 })).toEqual({
      status: 400,
      error: { code: 'invalid_request', message: "Unknown body field 'extra'." },
    });
    const badOrg = { status: 400, error: { code: 'invalid_request', message: "'orgId' must be an organization id." } };
    expect(await post('/checkin/o/a:b/open', { token: spare })).toEqual(badOrg);
    const keysRes = await t.app.inject({ method: 'GET', url: '/checkin/keys/a:b' });
    expect({ status: keysRes.statusCode, error: keysRes.json().error }).toEqual(badOrg);
    // The spare link is still whole: it opens.
    expect((await t.app.inject({ method: 'POST', url: `/checkin/o/${ORG}/open`, payload: { token: spare } })).statusCode).toBe(200);
  });
});
