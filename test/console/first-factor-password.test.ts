/**
 * Issue 52, L5: a first second factor was enrolled from any open session without the password, so
 * a session left open (or its cookie) could bind the account to someone else's authenticator app.
 * Every enrollment now asks for the password again, through checkPassword and the sign-in limits.
 */
import { Secret, TOTP } from 'otpauth';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { operatorActor } from '../../src/domain/audit.js';
import { listMembers, updateRequireTwoFactor } from '../../src/domain/members.js';
import { REPLACE_FACTOR_REFUSED } from '../../src/domain/totp.js';
import { NOW, readDataset } from '../fixtures/dataset.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { CONSOLE_PASSWORD, ConsoleClient, joinConsole } from '../helpers/console-client.js';

const ORG = 'org_acme';
const REFUSAL_HTML = REPLACE_FACTOR_REFUSED.replace(/'/g, '&#39;');

const codeOf = (page: string) => {
  const secret = /id="totp-secret">([^<]+)</.exec(page)![1].replace(/\s+/g, '');
  return new TOTP({ secret: Secret.fromBase32(secret), digits: 6, period: 30, algorithm: 'SHA1' }).generate({ timestamp: NOW.getTime() });
};

describe('issue 52 L5: a first second factor needs the password again', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ dataset: readDataset(), now: NOW });
  }, 60_000);
  afterAll(async () => t?.close());

  const twoFactorOf = async (email: string) => (await listMembers(t.db, ORG)).find((m) => m.email === email)!.twoFactor;

  it('the page asks for the current password; without it, or with a wrong one, the right code turns nothing on', async () => {
    const member = await joinConsole(t, ORG, 'first.factor@example.com', 'viewer', NOW, '198.51.100.21');
    member.followChanges = false;
    const page = (await member.get('/console/two-factor/enroll')).body;
    expect(page).toContain('<p>Enter your password to confirm that the app you set up is yours.</p>');
    expect(page).toContain(
      '<label for="f-password">Current password</label> <input type="password" name="password" autocomplete="current-password" required id="f-password">',
    );
    const code = codeOf(page);
    for (const password of [undefined, '', 'not the password at all']) {
      const form = { _csrf: ConsoleClient.token(page), code, ...(password === undefined ? {} : { password }) };
      const res = await member.postOnly('/console/two-factor/enroll', form);
      expect(res.statusCode, String(password)).toBe(401);
      expect(res.body).toContain(REFUSAL_HTML);
      expect(await twoFactorOf('first.factor@example.com')).toBe(false);
    }
    // The page shown again made a new secret: its code, with the password, turns two-factor on.
    const again = (await member.get('/console/two-factor/enroll')).body;
    const done = await member.postOnly('/console/two-factor/enroll', { _csrf: ConsoleClient.token(again), code: codeOf(again), password: CONSOLE_PASSWORD });
    expect(done.statusCode).toBe(303);
    expect(done.headers.location).toBe('/console/two-factor/recovery-codes');
    expect(await twoFactorOf('first.factor@example.com')).toBe(true);
  });

  it('enrollment required by the organization (a step of signing in) asks for it too', async () => {
    await joinConsole(t, 'org_beta', 'owner.beta@example.com', 'owner', NOW);
    const member = await joinConsole(t, 'org_beta', 'required.factor@example.com', 'admin', NOW, '198.51.100.22');
    member.followChanges = false;
    await updateRequireTwoFactor(t.db, 'org_beta', true, operatorActor('192.0.2.1'), NOW);
    expect((await member.get('/console/keys')).headers.location).toBe('/console/two-factor/enroll');
    const page = (await member.get('/console/two-factor/enroll')).body;
    expect(page).toContain('Your organization requires two-factor authentication.');
    const refused = await member.postOnly('/console/two-factor/enroll', { _csrf: ConsoleClient.token(page), code: codeOf(page) });
    expect(refused.statusCode).toBe(401);
    expect(refused.body).toContain(REFUSAL_HTML);
    expect((await member.get('/console/keys')).headers.location).toBe('/console/two-factor/enroll');
    const again = (await member.get('/console/two-factor/enroll')).body;
    const done = await member.postOnly('/console/two-factor/enroll', { _csrf: ConsoleClient.token(again), code: codeOf(again), password: CONSOLE_PASSWORD });
    expect(done.statusCode).toBe(303);
    expect((await member.get('/console/keys')).statusCode).toBe(200);
  });

  it('wrong passwords at enrollment spend the sign-in limits: after 10, the right password is refused at enrollment and at sign-in', async () => {
    const member = await joinConsole(t, ORG, 'limited.factor@example.com', 'viewer', NOW, '198.51.100.23');
    member.followChanges = false;
    for (let i = 0; i < 10; i++) {
      const page = (await member.get('/console/two-factor/enroll')).body;
      const res = await member.postOnly('/console/two-factor/enroll', {
        _csrf: ConsoleClient.token(page),
        code: codeOf(page),
        password: `wrong password ${i}`,
      });
      expect(res.statusCode).toBe(401);
    }
    const page = (await member.get('/console/two-factor/enroll')).body;
    const right = await member.postOnly('/console/two-factor/enroll', { _csrf: ConsoleClient.token(page), code: codeOf(page), password: CONSOLE_PASSWORD });
    expect(right.statusCode).toBe(401);
    expect(right.body).toContain(REFUSAL_HTML);
    expect(await twoFactorOf('limited.factor@example.com')).toBe(false);
    // The account's limit is the sign-in's own: a sign-in from elsewhere with the right password is refused.
    const elsewhere = new ConsoleClient(t.app, '203.0.113.9');
    elsewhere.followChanges = false;
    const signIn = await elsewhere.submit('/console/sign-in', '/console/sign-in', { email: 'limited.factor@example.com', password: CONSOLE_PASSWORD });
    expect(signIn.statusCode).toBe(401);
  });
});
