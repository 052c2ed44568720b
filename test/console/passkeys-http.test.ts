/**
 * Issue 55, item 5: passkeys over HTTP, driven by a software authenticator (passkeys-authenticator.ts)
 * so that every refusal runs on both engines: registration from the Account page after the password
 * again, sign-in as the second factor and alone, a replayed answer, a cloned credential whose counter
 * goes back, a removed passkey, another origin, a challenge of another session; the requirement for
 * owners and admins. test/console/passkeys-browser.test.ts proves the same steps in Chromium.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from '../../src/db/executor.js';
import {
  mayUsePasskeySignIn,
  mustUsePasskey,
  PASSKEY_HELD_USE_YOURS,
  PASSKEY_LAST_REQUIRED,
  PASSKEY_PASSWORD_REFUSED,
  PASSKEY_REFUSED,
  PASSKEY_REGISTRATION_REFUSED,
  PASSKEY_REQUIREMENT_NEEDS_OWN,
  relyingPartyOf,
} from '../../src/domain/passkeys.js';
import { SSO_REQUIRED_FOR_PASSWORD } from '../../src/domain/sso/settings.js';
import { PASSKEY_REQUIRED_NOT_CODE } from '../../src/domain/totp.js';
import { escapeHtml } from '../../src/http/html.js';
import { NOW, readDataset } from '../fixtures/dataset.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { CONSOLE_PASSWORD, ConsoleClient, joinConsole } from '../helpers/console-client.js';
import { optionsOn, SoftAuthenticator } from './passkeys-authenticator.js';

const ORIGIN = 'http://localhost:3000';
const ORG = 'org_acme';
const html = (text: string) => escapeHtml(text);

describe('passkeys over HTTP (issue 55)', () => {
  let t: TestApp;
  /** The service's clock: NOW, moved by the test of expiry only. */
  let clock = NOW.getTime();
  beforeAll(async () => {
    t = await createTestApp({ dataset: readDataset(), clock: () => new Date(clock), env: { PUBLIC_BASE_URL: ORIGIN } });
  }, 60_000);
  afterAll(async () => t?.close());

  const audit = async (memberId: string, action: string) =>
    t.db.query<{ details: Record<string, unknown>; address: string | null }>(
      sql('t.audit', `SELECT details, address FROM audit_events WHERE target_id = $1 AND action = $2 ORDER BY created_at, id`),
      [memberId, action],
    );
  const memberId = async (email: string) => (await t.db.query<{ id: string }>(sql('t.member', `SELECT id FROM members WHERE email = $1`), [email]))[0].id;
  const passkeyRows = async (id: string) =>
    t.db.query<{ id: string; name: string; sign_count: string | number; last_used_at: unknown }>(
      sql('t.passkeys', `SELECT id, name, sign_count, last_used_at FROM member_passkeys WHERE member_id = $1 ORDER BY created_at, id`),
      [id],
    );

  /** Adds a passkey from the Account page: the password again, then the ceremony's form shown once. */
  async function register(c: ConsoleClient, device: SoftAuthenticator, name: string, opts: { from?: string } = {}) {
    const from = opts.from ?? '/console/account';
    const started = await c.postOnly('/console/account/passkeys', { _csrf: ConsoleClient.token((await c.get(from)).body), name, password: CONSOLE_PASSWORD });
    expect(started.statusCode).toBe(303);
    expect(started.headers.location).toBe(from);
    const page = (await c.get(from)).body;
    const options = optionsOn(page, '/console/account/passkeys/new');
    const done = await c.postOnly('/console/account/passkeys/new', { _csrf: ConsoleClient.token(page), name, response: device.register(options) });
    return { done, options, page };
  }

  async function signInWithPassword(c: ConsoleClient, email: string) {
    const res = await c.submit('/console/sign-in', '/console/sign-in', { email, password: CONSOLE_PASSWORD });
    expect(res.statusCode).toBe(303);
    return res.headers.location;
  }

  it('the relying party is the public address; an IP address has none', () => {
    expect(relyingPartyOf('http://localhost:3000')).toEqual({ id: 'localhost', origin: 'http://localhost:3000', name: 'Climate Pulse' });
    expect(relyingPartyOf('https://pulse.example.com/')).toEqual({ id: 'pulse.example.com', origin: 'https://pulse.example.com', name: 'Climate Pulse' });
    expect(relyingPartyOf('http://127.0.0.1:3000')).toBeNull();
    expect(relyingPartyOf('http://[::1]:3000')).toBeNull();
  });

  it('registration asks for the password again, then the device; the passkey is listed, named, audited', async () => {
    const c = await joinConsole(t, ORG, 'pk.register@example.com', 'viewer', NOW, '198.51.100.31');
    c.followChanges = false;
    const id = await memberId('pk.register@example.com');
    const account = (await c.get('/console/account')).body;
    expect(account).toContain('<h2 id="passkeys">Passkeys</h2>');
    expect(account).toContain('<p>You have no passkey yet.</p>');
    expect(account).toMatch(/<script src="\/console\/assets\/passkeys\.[0-9a-f]{16}\.js" defer><\/script>/);
    // A wrong password: no ceremony, nothing stored.
    const wrong = await c.postOnly('/console/account/passkeys', { _csrf: ConsoleClient.token(account), name: 'Laptop', password: 'not the password' });
    expect(wrong.statusCode).toBe(401);
    expect(wrong.body).toContain(html(PASSKEY_PASSWORD_REFUSED));
    expect(wrong.body).not.toContain('data-passkey="register"');

    const device = new SoftAuthenticator(ORIGIN);
    const { done, options, page } = await register(c, device, 'Laptop <b>');
    expect(page).toContain('<h2 id="passkey-create">Create the passkey &quot;Laptop &lt;b&gt;&quot;</h2>');
    const o = JSON.parse(options);
    expect(o.rp).toEqual({ name: 'Climate Pulse', id: 'localhost' });
    expect(o.user.name).toBe('pk.register@example.com');
    expect(Buffer.from(o.user.id, 'base64url').toString()).toBe(id);
    expect(o.authenticatorSelection).toEqual({ residentKey: 'required', requireResidentKey: true, userVerification: 'required' });
    expect(done.statusCode).toBe(303);
    expect(done.headers.location).toBe('/console/account');
    const after = (await c.get('/console/account')).body;
    expect(after).toContain(html('Passkey "Laptop <b>" added. You can now use it to sign in.'));
    expect(after).toContain('<td>Laptop &lt;b&gt;</td>');
    const rows = await passkeyRows(id);
    expect(rows.map((r) => r.name)).toEqual(['Laptop <b>']);
    expect((await audit(id, 'member.passkey_added')).map((a) => a.details)).toEqual([{ passkey: rows[0].id, name: 'Laptop <b>' }]);

    // The ceremony's form is shown once: a reload has none, and its answer cannot be posted again.
    expect((await c.get('/console/account')).body).not.toContain('data-passkey="register"');
    const again = await c.postOnly('/console/account/passkeys/new', {
      _csrf: ConsoleClient.token(page),
      name: 'Laptop <b>',
      response: device.register(options),
    });
    expect(again.statusCode).toBe(400);
    expect(again.body).toContain(html(PASSKEY_REGISTRATION_REFUSED));
    // A name other than the one the password was given with: refused (the challenge is bound to it).
    const second = await c.postOnly('/console/account/passkeys', { _csrf: ConsoleClient.token(after), name: 'Phone', password: CONSOLE_PASSWORD });
    expect(second.statusCode).toBe(303);
    const secondPage = (await c.get('/console/account')).body;
    const secondOptions = optionsOn(secondPage, '/console/account/passkeys/new');
    expect(JSON.parse(secondOptions).excludeCredentials).toEqual([
      { id: device.credentials[0].id.toString('base64url'), type: 'public-key', transports: ['internal'] },
    ]);
    const renamed = await c.postOnly('/console/account/passkeys/new', {
      _csrf: ConsoleClient.token(secondPage),
      name: 'Other',
      response: device.register(secondOptions),
    });
    expect(renamed.statusCode).toBe(400);
    // Another session of the same member (signed in by the passkey) cannot use this session's challenge.
    const other = new ConsoleClient(t.app, '198.51.100.32');
    other.followChanges = false;
    const otherSignIn = (await other.get('/console/sign-in')).body;
    const signedIn = await other.postOnly('/console/sign-in/passkey', {
      _csrf: ConsoleClient.token(otherSignIn),
      response: device.authenticate(optionsOn(otherSignIn, '/console/sign-in/passkey'), { credential: device.credentials[0] }),
    });
    expect(signedIn.statusCode).toBe(303);
    const otherAccount = (await other.get('/console/account')).body;
    const stolen = await other.postOnly('/console/account/passkeys/new', {
      _csrf: ConsoleClient.token(otherAccount),
      name: 'Phone',
      response: device.register(secondOptions),
    });
    expect(stolen.statusCode).toBe(400);
    expect(stolen.body).toContain(html(PASSKEY_REGISTRATION_REFUSED));
    expect((await passkeyRows(id)).length).toBe(1);
  });

  it('a passkey is the second factor after the password, and signs in alone; each use is audited', async () => {
    const c = await joinConsole(t, ORG, 'pk.use@example.com', 'admin', NOW, '198.51.100.33');
    c.followChanges = false;
    const id = await memberId('pk.use@example.com');
    const device = new SoftAuthenticator(ORIGIN);
    expect((await register(c, device, 'Key')).done.statusCode).toBe(303);

    // Second factor: the password leads to the second step, which offers the passkey (no code form: no TOTP).
    const second = new ConsoleClient(t.app, '198.51.100.34');
    second.followChanges = false;
    expect(await signInWithPassword(second, 'pk.use@example.com')).toBe('/console/two-factor');
    expect((await second.get('/console/overview')).headers.location).toBe('/console/two-factor');
    const step = (await second.get('/console/two-factor')).body;
    expect(step).toContain('<button type="submit">Use a passkey</button>');
    expect(step).toContain('<form method="post" action="/console/two-factor" class="stack" hidden>');
    const options = optionsOn(step, '/console/two-factor/passkey');
    expect(JSON.parse(options).allowCredentials).toEqual([
      { id: device.credentials[0].id.toString('base64url'), type: 'public-key', transports: ['internal'] },
    ]);
    const half = second.cookies.get('cp_session');
    const answer = device.authenticate(options);
    const done = await second.postOnly('/console/two-factor/passkey', { _csrf: ConsoleClient.token(step), response: answer });
    expect(done.statusCode).toBe(303);
    expect(done.headers.location).toBe('/console/overview');
    expect(second.cookies.get('cp_session')).not.toBe(half);
    expect((await second.get('/console/overview')).statusCode).toBe(200);
    const [row] = await passkeyRows(id);
    expect(Number(row.sign_count)).toBe(1);
    expect(row.last_used_at).not.toBeNull();
    expect((await audit(id, 'member.signed_in')).map((a) => a.details)).toContainEqual({ twoFactor: true, passkey: row.id, passkeyName: 'Key' });

    // Alone: from the sign-in page, with no email or password.
    const alone = new ConsoleClient(t.app, '198.51.100.35');
    alone.followChanges = false;
    const signInPage = (await alone.get('/console/sign-in')).body;
    expect(signInPage).toContain('<button type="submit" class="secondary">Sign in with a passkey</button>');
    // Its script is a file of the console's assets, like every other: nothing inline (the CSP allows none).
    expect(signInPage).not.toMatch(
      /<script(?! (type="module" )?src="\/console\/assets\/[a-z]+\.[0-9a-f]{16}\.js"( defer)?><\/script>)|<style|\sstyle=|\son[a-z]+=/i,
    );
    expect(signInPage).toMatch(/<script src="\/console\/assets\/passkeys\.[0-9a-f]{16}\.js" defer><\/script>/);
    const signInOptions = optionsOn(signInPage, '/console/sign-in/passkey');
    expect(JSON.parse(signInOptions)).toMatchObject({ rpId: 'localhost', userVerification: 'required' });
    expect(JSON.parse(signInOptions).allowCredentials).toBeUndefined();
    const aloneAnswer = device.authenticate(signInOptions);
    const signedIn = await alone.postOnly('/console/sign-in/passkey', { _csrf: ConsoleClient.token(signInPage), response: aloneAnswer });
    expect(signedIn.statusCode).toBe(303);
    expect(signedIn.headers.location).toBe('/console/overview');
    expect((await alone.get('/console/account')).body).toContain('Signed in as <strong>pk.use@example.com</strong>');
    expect((await audit(id, 'member.signed_in')).map((a) => a.details)).toContainEqual({ twoFactor: true, passkey: row.id, passkeyName: 'Key', alone: true });

    // The same answer posted again: its challenge is used. From another browser (form cookie): bound to the first.
    const replay = new ConsoleClient(t.app, '198.51.100.36');
    replay.followChanges = false;
    const replayPage = (await replay.get('/console/sign-in')).body;
    const replayed = await replay.postOnly('/console/sign-in/passkey', { _csrf: ConsoleClient.token(replayPage), response: aloneAnswer });
    expect(replayed.statusCode).toBe(401);
    expect(replayed.body).toContain(html(PASSKEY_REFUSED));
    expect(replayed.headers['set-cookie']?.toString() ?? '').not.toContain('cp_session=');
    const sameBrowser = new ConsoleClient(t.app, '198.51.100.35');
    sameBrowser.cookies.set('cp_form', alone.cookies.get('cp_form')!);
    sameBrowser.followChanges = false;
    const twice = await sameBrowser.postOnly('/console/sign-in/passkey', { _csrf: alone.cookies.get('cp_form')!, response: aloneAnswer });
    expect(twice.statusCode).toBe(401);

    // An answer made for another origin (a phishing site's page): refused, and audited as a failed sign-in.
    const phished = new ConsoleClient(t.app, '198.51.100.37');
    phished.followChanges = false;
    const phishedPage = (await phished.get('/console/sign-in')).body;
    const fromElsewhere = device.authenticate(optionsOn(phishedPage, '/console/sign-in/passkey'), { origin: 'http://localhost.evil.example' });
    const refused = await phished.postOnly('/console/sign-in/passkey', { _csrf: ConsoleClient.token(phishedPage), response: fromElsewhere });
    expect(refused.statusCode).toBe(401);
    expect((await audit(id, 'member.sign_in_failed')).map((a) => a.details)).toEqual([{ step: 'passkey' }]);
    // Garbage in the response field: the same refusal.
    const garbage = await phished.postOnly('/console/sign-in/passkey', { _csrf: ConsoleClient.token(phishedPage), response: '{"id":1}' });
    expect(garbage.statusCode).toBe(401);
    expect(garbage.body).toContain(html(PASSKEY_REFUSED));
    expect(await mayUsePasskeySignIn(t.db, ORG, id)).toBe(true);
  });

  it('while SSO is required, the break-glass owner gets in by passkey, alone or after the password, never by a code; others by passkey are refused', async () => {
    const glass = await joinConsole(t, ORG, 'pk.glass@example.com', 'owner', NOW, '198.51.100.70');
    glass.followChanges = false;
    const other = await joinConsole(t, ORG, 'pk.other@example.com', 'owner', NOW, '198.51.100.71');
    other.followChanges = false;
    const glassId = await memberId('pk.glass@example.com');
    const otherId = await memberId('pk.other@example.com');
    const glassKey = new SoftAuthenticator(ORIGIN);
    const otherKey = new SoftAuthenticator(ORIGIN);
    expect((await register(glass, glassKey, 'Safe key')).done.statusCode).toBe(303);
    expect((await register(other, otherKey, 'Other key')).done.statusCode).toBe(303);
    // The organization's IdP, required, with pk.glass as its break-glass owner (set as the SSO page does).
    await t.db.query(
      sql(
        't.sso_required',
        `INSERT INTO sso_settings (org_id, kind, oidc_issuer, oidc_client_id, oidc_client_secret_sealed, required, break_glass_member_id, created_at, updated_at)
         VALUES ($1, 'oidc', 'https://idp.example.com', 'climate-pulse', 'sealed:v1:unused', true, $2, $3, $3)`,
      ),
      [ORG, glassId, NOW],
    );
    try {
      expect(await mayUsePasskeySignIn(t.db, ORG, glassId)).toBe(true);
      expect(await mayUsePasskeySignIn(t.db, ORG, otherId)).toBe(false);
      const alone = async (device: SoftAuthenticator, address: string) => {
        const b = new ConsoleClient(t.app, address);
        b.followChanges = false;
        const page = (await b.get('/console/sign-in')).body;
        return b.postOnly('/console/sign-in/passkey', {
          _csrf: ConsoleClient.token(page),
          response: device.authenticate(optionsOn(page, '/console/sign-in/passkey')),
        });
      };
      // Another owner's passkey alone: refused, no session.
      const refused = await alone(otherKey, '198.51.100.72');
      expect(refused.statusCode).toBe(401);
      expect(refused.headers['set-cookie']?.toString() ?? '').not.toContain('cp_session=');
      // Another owner's password: refused with the reason (after a right password only).
      const otherPassword = await new ConsoleClient(t.app, '198.51.100.73').submit('/console/sign-in', '/console/sign-in', {
        email: 'pk.other@example.com',
        password: CONSOLE_PASSWORD,
      });
      expect(otherPassword.statusCode).toBe(401);
      expect(otherPassword.body).toContain(html(SSO_REQUIRED_FOR_PASSWORD));
      // The break-glass owner's passkey alone: in.
      const inAlone = await alone(glassKey, '198.51.100.74');
      expect(inAlone.statusCode).toBe(303);
      expect(inAlone.headers.location).toBe('/console/overview');
      // Their password leads to the passkey step, where a code is refused.
      const second = new ConsoleClient(t.app, '198.51.100.75');
      second.followChanges = false;
      expect(await signInWithPassword(second, 'pk.glass@example.com')).toBe('/console/two-factor');
      expect(await mustUsePasskey(t.db, { orgId: ORG, id: glassId, role: 'owner' })).toBe(true);
      const step = (await second.get('/console/two-factor')).body;
      const done = await second.postOnly('/console/two-factor/passkey', {
        _csrf: ConsoleClient.token(step),
        response: glassKey.authenticate(optionsOn(step, '/console/two-factor/passkey')),
      });
      expect(done.statusCode).toBe(303);
      expect(done.headers.location).toBe('/console/overview');
      expect((await second.get('/console/overview')).statusCode).toBe(200);
    } finally {
      await t.db.query(sql('t.sso_off', 'DELETE FROM sso_settings WHERE org_id = $1'), [ORG]);
    }
  });

  it('a cloned credential whose counter goes back is refused and audited; a removed passkey is refused', async () => {
    const c = await joinConsole(t, ORG, 'pk.clone@example.com', 'viewer', NOW, '198.51.100.38');
    c.followChanges = false;
    const id = await memberId('pk.clone@example.com');
    const device = new SoftAuthenticator(ORIGIN);
    expect((await register(c, device, 'Original')).done.statusCode).toBe(303);
    const signInWith = async (opts: { counter?: number } = {}) => {
      const b = new ConsoleClient(t.app, '198.51.100.39');
      b.followChanges = false;
      const page = (await b.get('/console/sign-in')).body;
      return b.postOnly('/console/sign-in/passkey', {
        _csrf: ConsoleClient.token(page),
        response: device.authenticate(optionsOn(page, '/console/sign-in/passkey'), opts),
      });
    };
    for (let i = 0; i < 3; i++) expect((await signInWith()).statusCode).toBe(303);
    const [row] = await passkeyRows(id);
    expect(Number(row.sign_count)).toBe(3);
    // The clone answers with a counter it copied earlier (2), then with the same one as the last use (3).
    for (const counter of [2, 3]) {
      const res = await signInWith({ counter });
      expect(res.statusCode).toBe(401);
      expect(res.body).toContain(html(PASSKEY_REFUSED));
    }
    const refusals = (await audit(id, 'member.passkey_refused')).map((a) => a.details);
    expect(refusals.sort((x, y) => Number(x.received) - Number(y.received))).toEqual([
      { passkey: row.id, name: 'Original', reason: 'counter', stored: 3, received: 2 },
      { passkey: row.id, name: 'Original', reason: 'counter', stored: 3, received: 3 },
    ]);
    expect(Number((await passkeyRows(id))[0].sign_count)).toBe(3);
    // The real one, further on, still signs in.
    expect((await signInWith({ counter: 10 })).statusCode).toBe(303);

    // Renamed, then removed: it signs in nowhere.
    const account = (await c.get('/console/account')).body;
    const renamed = await c.postOnly(`/console/account/passkeys/${row.id}/rename`, { _csrf: ConsoleClient.token(account), name: 'Old laptop' });
    expect(renamed.statusCode).toBe(303);
    expect((await c.get('/console/account')).body).toContain(html('The passkey is now called "Old laptop".'));
    const removed = await c.postOnly(`/console/account/passkeys/${row.id}/remove`, { _csrf: ConsoleClient.token(account) });
    expect(removed.statusCode).toBe(303);
    expect((await c.get('/console/account')).body).toContain(html('Passkey "Old laptop" removed: it no longer signs you in.'));
    expect(await passkeyRows(id)).toEqual([]);
    expect((await audit(id, 'member.passkey_renamed')).map((a) => a.details)).toEqual([{ passkey: row.id, name: 'Old laptop' }]);
    expect((await audit(id, 'member.passkey_removed')).map((a) => a.details)).toEqual([{ passkey: row.id, name: 'Old laptop' }]);
    const afterRemoval = await signInWith();
    expect(afterRemoval.statusCode).toBe(401);
    expect(afterRemoval.body).toContain(html(PASSKEY_REFUSED));
    // Another member's passkey cannot be renamed or removed by id.
    const stranger = await joinConsole(t, ORG, 'pk.stranger@example.com', 'owner', NOW, '198.51.100.40');
    const strangerDevice = new SoftAuthenticator(ORIGIN);
    expect((await register(stranger, strangerDevice, 'Mine')).done.statusCode).toBe(303);
    const [theirs] = await passkeyRows(await memberId('pk.stranger@example.com'));
    const notMine = await c.postOnly(`/console/account/passkeys/${theirs.id}/remove`, { _csrf: ConsoleClient.token(account) });
    expect(notMine.statusCode).toBe(404);
    expect((await passkeyRows(await memberId('pk.stranger@example.com'))).length).toBe(1);
  });

  it('an answer after 5 minutes, or to a challenge of another step, is refused', async () => {
    const c = await joinConsole(t, ORG, 'pk.late@example.com', 'viewer', NOW, '198.51.100.46');
    c.followChanges = false;
    const device = new SoftAuthenticator(ORIGIN);
    expect((await register(c, device, 'Late')).done.statusCode).toBe(303);
    const b = new ConsoleClient(t.app, '198.51.100.47');
    b.followChanges = false;
    const page = (await b.get('/console/sign-in')).body;
    const options = optionsOn(page, '/console/sign-in/passkey');
    try {
      clock = NOW.getTime() + 5 * 60_000;
      const late = await b.postOnly('/console/sign-in/passkey', { _csrf: ConsoleClient.token(page), response: device.authenticate(options) });
      expect(late.statusCode).toBe(401);
      expect(late.body).toContain(html(PASSKEY_REFUSED));
    } finally {
      clock = NOW.getTime();
    }
    // A second step's challenge (bound to a half-signed-in session) does not sign in alone.
    const half = new ConsoleClient(t.app, '198.51.100.48');
    half.followChanges = false;
    expect(await signInWithPassword(half, 'pk.late@example.com')).toBe('/console/two-factor');
    const step = (await half.get('/console/two-factor')).body;
    const secondStep = device.authenticate(optionsOn(step, '/console/two-factor/passkey'));
    const elsewhere = await half.postOnly('/console/sign-in/passkey', { _csrf: ConsoleClient.token(step), response: secondStep });
    expect(elsewhere.statusCode).toBe(401);
    // ... and the sign-in page's options work in time.
    const inTime = await b.postOnly('/console/sign-in/passkey', { _csrf: ConsoleClient.token(page), response: device.authenticate(options) });
    expect(inTime.statusCode).toBe(303);
  });

  it('passkeys required for owners and admins: enforced at sign-in and on open sessions, with a way to add one', async () => {
    const owner = await joinConsole(t, 'org_beta', 'pk.owner@example.com', 'owner', NOW, '198.51.100.41');
    const admin = await joinConsole(t, 'org_beta', 'pk.admin@example.com', 'admin', NOW, '198.51.100.42');
    const admin2 = await joinConsole(t, 'org_beta', 'pk.admin2@example.com', 'admin', NOW, '198.51.100.49');
    // A second session of admin2, opened by the password before admin2 had a passkey.
    const admin2Password = new ConsoleClient(t.app, '198.51.100.50');
    admin2Password.followChanges = false;
    expect(await signInWithPassword(admin2Password, 'pk.admin2@example.com')).toBe('/console/overview');
    admin2.followChanges = false;
    const admin2Device = new SoftAuthenticator(ORIGIN);
    expect((await register(admin2, admin2Device, 'Admin2 key')).done.statusCode).toBe(303);
    const viewer = await joinConsole(t, 'org_beta', 'pk.viewer@example.com', 'viewer', NOW, '198.51.100.43');
    for (const c of [owner, admin, viewer]) c.followChanges = false;
    // An owner without a passkey cannot turn it on (they would be held at once).
    const members = (await owner.get('/console/members')).body;
    expect(members).toContain('<button type="submit" class="secondary">Require passkeys for owners and admins</button>');
    const early = await owner.post('/console/members/passkeys', { _csrf: ConsoleClient.token(members), required: 'true' });
    expect(early.statusCode).toBe(400);
    expect(early.body).toContain(html(PASSKEY_REQUIREMENT_NEEDS_OWN));
    const ownerDevice = new SoftAuthenticator(ORIGIN);
    expect((await register(owner, ownerDevice, 'Owner key')).done.statusCode).toBe(303);
    const on = await owner.postOnly('/console/members/passkeys', { _csrf: ConsoleClient.token(members), required: 'true' });
    expect(on.statusCode).toBe(303);
    expect((await owner.get('/console/members')).body).toContain('Owners and admins must now sign in with a passkey.');
    const [req] = await t.db.query<{ details: unknown }>(
      sql('t.req', `SELECT details FROM audit_events WHERE org_id = 'org_beta' AND action = 'organization.passkeys_required'`),
    );
    expect(req.details).toEqual({ required: true });

    // The owner's own session proved a passkey (it registered one): it goes on. The viewer is not concerned.
    expect((await owner.get('/console/keys')).statusCode).toBe(200);
    expect((await viewer.get('/console/keys')).statusCode).toBe(200);
    // The admin's open session is held at its next request, and can do nothing else.
    expect((await admin.get('/console/keys')).headers.location).toBe('/console/passkeys/required');
    const held = (await admin.get('/console/passkeys/required')).body;
    expect(held).toContain('Your organization requires owners and admins to sign in with a passkey. Add one to continue.');
    const blocked = await admin.postOnly('/console/keys', { _csrf: ConsoleClient.token(held), name: 'x', scope: 'read' });
    expect(blocked.statusCode).toBe(303);
    expect(blocked.headers.location).toBe('/console/passkeys/required');
    // Adding one there asks for the password again; the session then steps up under a new id.
    const adminDevice = new SoftAuthenticator(ORIGIN);
    const before = admin.cookies.get('cp_session');
    const { done } = await register(admin, adminDevice, 'Admin key', { from: '/console/passkeys/required' });
    expect(done.statusCode).toBe(303);
    expect(done.headers.location).toBe('/console/account');
    expect(admin.cookies.get('cp_session')).not.toBe(before);
    expect((await admin.get('/console/account')).body).toContain(html('Passkey "Admin key" added.'));
    expect((await admin.get('/console/keys')).statusCode).toBe(200);

    // At sign-in: the password, then the passkey; a code is refused for them even with TOTP.
    const fresh = new ConsoleClient(t.app, '198.51.100.44');
    fresh.followChanges = false;
    expect(await signInWithPassword(fresh, 'pk.admin@example.com')).toBe('/console/two-factor');
    const step = (await fresh.get('/console/two-factor')).body;
    const code = await fresh.postOnly('/console/two-factor', { _csrf: ConsoleClient.token(step), code: '123456' });
    expect(code.statusCode).toBe(401);
    expect(code.body).toContain(html(PASSKEY_REQUIRED_NOT_CODE));
    const passkeyStep = await fresh.postOnly('/console/two-factor/passkey', {
      _csrf: ConsoleClient.token(step),
      response: adminDevice.authenticate(optionsOn(step, '/console/two-factor/passkey')),
    });
    expect(passkeyStep.statusCode).toBe(303);
    expect((await fresh.get('/console/keys')).statusCode).toBe(200);

    // admin2's session opened by the password is held; having a passkey, it must use it: a new
    // one made with the password alone would make the requirement a password's.
    expect((await admin2Password.get('/console/keys')).headers.location).toBe('/console/passkeys/required');
    const held2 = (await admin2Password.get('/console/passkeys/required')).body;
    expect(held2).toContain('Use your passkey to continue.');
    expect(held2).not.toContain('action="/console/account/passkeys"');
    const sneak = await admin2Password.postOnly('/console/account/passkeys', {
      _csrf: ConsoleClient.token(held2),
      name: 'Mine now',
      password: CONSOLE_PASSWORD,
    });
    expect(sneak.statusCode).toBe(401);
    expect(sneak.body).toContain(html(PASSKEY_HELD_USE_YOURS));
    const used = await admin2Password.postOnly('/console/two-factor/passkey', {
      _csrf: ConsoleClient.token(held2),
      response: admin2Device.authenticate(optionsOn(held2, '/console/two-factor/passkey')),
    });
    expect(used.statusCode).toBe(303);
    expect((await admin2Password.get('/console/keys')).statusCode).toBe(200);

    // The last passkey of an owner or admin stays while it is required.
    const adminAccount = (await admin.get('/console/account')).body;
    const [adminKey] = await passkeyRows(await memberId('pk.admin@example.com'));
    const last = await admin.postOnly(`/console/account/passkeys/${adminKey.id}/remove`, { _csrf: ConsoleClient.token(adminAccount) });
    expect(last.statusCode).toBe(400);
    expect(last.body).toContain(html(PASSKEY_LAST_REQUIRED));
    expect((await passkeyRows(await memberId('pk.admin@example.com'))).length).toBe(1);
  });
});
