import Fastify from 'fastify';
import { Secret, TOTP } from 'otpauth';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiError } from '../../src/contract/errors.js';
import { operatorActor } from '../../src/domain/audit.js';
import { inviteMember } from '../../src/domain/members.js';
import { PSEUDO_LOCALE } from '../../src/i18n/index.js';
import { refusalWords, registerConsoleErrors } from '../../src/console/plugins/errors.js';
import { speakerFor } from '../../src/console/words.js';
import { INVITATION_UNUSABLE } from '../../src/domain/members.js';
import * as passkeys from '../../src/domain/passkeys.js';
import { PASSWORD_REFUSED } from '../../src/domain/passwords.js';
import { ACCEPTANCE_LIMITED, BREAK_GLASS_NEEDS_PASSKEY, CHOOSE_ORGANIZATION, SIGN_IN_REFUSED } from '../../src/domain/sessions.js';
import { SSO_NO_ROLE, SSO_NOT_SET_UP, SSO_REFUSED, SSO_WRONG_DOMAIN } from '../../src/domain/sso/oidc.js';
import { SSO_SAML_NOT_SET_UP } from '../../src/domain/sso/saml-sign-in.js';
import { DOMAIN_TAKEN, SSO_REQUIRED_FOR_PASSWORD, TXT_NOT_FOUND } from '../../src/domain/sso/settings.js';
import { PASSKEY_REQUIRED_NOT_CODE, REPLACE_FACTOR_REFUSED, TWO_FACTOR_REFUSED } from '../../src/domain/totp.js';
import { NOW, readDataset } from '../fixtures/dataset.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { CONSOLE_PASSWORD, ConsoleClient, joinConsole } from '../helpers/console-client.js';
import { allowWordsOf, baseAllowedWords, englishLeft, pseudoConsole, type PseudoConsole } from '../helpers/pseudo.js';
import { optionsOn, SoftAuthenticator } from '../console/passkeys-authenticator.js';

/**
 * Issue 57: signing in (the page, its refusals, the invitation, the two-factor steps), the passkey
 * blocks, the owner's single sign-on settings and every error page of the console say every word
 * from the reader's catalogue: rendered in the pseudo-locale, no plain-English word is left but the
 * organization's own data; and German and Arabic readers get their sentences, plurals included.
 */
let p: PseudoConsole;
beforeAll(async () => {
  p = await pseudoConsole();
}, 120_000);
afterAll(() => p?.t.close());

const codeAt = (secret: string, at: Date) =>
  new TOTP({ secret: Secret.fromBase32(secret), digits: 6, period: 30, algorithm: 'SHA1' }).generate({ timestamp: at.getTime() });
/** A browser with no session whose language is `lang`. */
const visitor = (app: TestApp['app'], lang = PSEUDO_LOCALE, ip = '198.51.100.70') => {
  const c = new ConsoleClient(app, ip);
  c.headers['accept-language'] = lang;
  return c;
};
/**
 * Acronyms that every language writes as they are (QR, HTTP, XML, TXT): with no vowel and no letter
 * the pseudo-locale accents, they come out of it lengthened but in plain ASCII, as these.
 */
const PSEUDO_ACRONYMS = ['QQQR', 'HHHHTTP', 'XXXML', 'TTTXT'];
const left = (body: string, extra: Iterable<string> = []) => {
  const allowed = new Set([...p.allowed, ...PSEUDO_ACRONYMS]);
  allowWordsOf(allowed, extra);
  return englishLeft(body, allowed);
};
const NOW_OF_DEMO = new Date('2026-11-20T12:00:00.000Z');

describe('signing in, in the pseudo-locale', () => {
  it('the sign-in page, a wrong password and the limit after 10 are all from the catalogue', async () => {
    const c = visitor(p.t.app);
    const page = await c.get('/console/sign-in');
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain('<html lang="en-XA">');
    expect(left(page.body)).toEqual([]);

    await p.member('owner', 'limited.owner@members.example.com');
    const wrong = await c.submit('/console/sign-in', '/console/sign-in', { email: 'limited.owner@members.example.com', password: 'not the password at all' });
    expect(wrong.statusCode).toBe(401);
    expect(wrong.body).toContain('role="alert">[');
    expect(left(wrong.body, ['limited.owner@members.example.com'])).toEqual([]);

    for (let i = 0; i < 10; i++) await c.submit('/console/sign-in', '/console/sign-in', { email: 'limited.owner@members.example.com', password: `wrong ${i}` });
    const limited = await c.submit('/console/sign-in', '/console/sign-in', { email: 'limited.owner@members.example.com', password: CONSOLE_PASSWORD });
    expect(limited.statusCode).toBe(401);
    expect(left(limited.body, ['limited.owner@members.example.com'])).toEqual([]);

    const withoutSso = await c.get('/console/sign-in?without-sso=1');
    expect(left(withoutSso.body)).toEqual([]);
  }, 60_000);

  it('the invitation page, a password too short, and a link that cannot be used', async () => {
    const inv = await inviteMember(p.t.db, p.orgId, { email: 'invited.pseudo@members.example.com', role: 'viewer' }, operatorActor('192.0.2.200'), NOW_OF_DEMO);
    const c = visitor(p.t.app);
    const page = await c.get(`/console/invitations/${inv.token}`);
    expect(page.statusCode).toBe(200);
    expect(left(page.body, ['invited.pseudo@members.example.com'])).toEqual([]);
    const short = await c.submit(`/console/invitations/${inv.token}`, `/console/invitations/${inv.token}`, { password: 'short' });
    expect(short.statusCode).toBe(400);
    expect(left(short.body, ['invited.pseudo@members.example.com'])).toEqual([]);
    const unusable = await c.get('/console/invitations/no-such-invitation');
    expect(unusable.statusCode).toBe(404);
    expect(left(unusable.body)).toEqual([]);
  });

  it('setting up two-factor, the recovery codes, and the code step with a wrong code', async () => {
    const admin = await p.member('admin', 'two.factor@members.example.com');
    admin.followChanges = false;
    const enroll = await admin.get('/console/two-factor/enroll');
    expect(enroll.statusCode).toBe(200);
    expect(left(enroll.body)).toEqual([]);
    const wrong = await admin.postOnly('/console/two-factor/enroll', { _csrf: ConsoleClient.token(enroll.body), code: '000000', password: CONSOLE_PASSWORD });
    expect(wrong.statusCode).toBe(400);
    expect(left(wrong.body)).toEqual([]);
    const again = await admin.get('/console/two-factor/enroll');
    const code = codeAt(/id="totp-secret">([^<]+)</.exec(again.body)![1].replace(/\s+/g, ''), NOW_OF_DEMO);
    const done = await admin.postOnly('/console/two-factor/enroll', { _csrf: ConsoleClient.token(again.body), code, password: CONSOLE_PASSWORD });
    expect(done.statusCode).toBe(303);
    const codes = await admin.get('/console/two-factor/recovery-codes');
    expect(codes.statusCode).toBe(200);
    expect(codes.body).toContain('data-copy="recovery-codes" data-copied="[');
    expect(left(codes.body)).toEqual([]);

    const c = visitor(p.t.app, PSEUDO_LOCALE, '198.51.100.71');
    c.followChanges = false;
    const half = await c.submit('/console/sign-in', '/console/sign-in', { email: 'two.factor@members.example.com', password: CONSOLE_PASSWORD });
    expect(half.headers.location).toBe('/console/two-factor');
    const step = await c.get('/console/two-factor');
    expect(step.statusCode).toBe(200);
    expect(left(step.body)).toEqual([]);
    const refused = await c.postOnly('/console/two-factor', { _csrf: ConsoleClient.token(step.body), code: '000000' });
    expect(refused.statusCode).toBe(401);
    expect(refused.body).toContain('role="alert">[');
    expect(left(refused.body)).toEqual([]);
  });
});

describe('single sign-on settings, in the pseudo-locale', () => {
  it("the owner's page, a domain added, and a refusal", async () => {
    const owner = await p.member('owner');
    const page = await owner.get('/console/sso');
    expect(page.statusCode).toBe(200);
    expect(left(page.body)).toEqual([]);
    const added = await owner.submit('/console/sso', '/console/sso/domains', { domain: 'pseudo-sso.example.org' });
    expect(added.statusCode).toBe(200);
    expect(added.body).toContain('role="status">[');
    expect(left(added.body, ['pseudo-sso.example.org'])).toEqual([]);
    const refused = await owner.submit('/console/sso', '/console/sso/required', { required: 'true' });
    expect(refused.statusCode).toBe(400);
    expect(left(refused.body, ['pseudo-sso.example.org'])).toEqual([]);
  });

  it('an SSO sign-in of an organization without one is refused in words', async () => {
    const res = await visitor(p.t.app).get('/console/sso/saml/org_none/start');
    expect(res.statusCode).toBe(404);
    expect(left(res.body)).toEqual([]);
  });
});

describe('error pages, in the pseudo-locale', () => {
  it('404 of an unknown console path, 403 of a page the role cannot see, 401 after the session ended', async () => {
    const viewer = await p.member('viewer');
    const missing = await viewer.get('/console/no-such-page');
    expect(missing.statusCode).toBe(404);
    expect(left(missing.body)).toEqual([]);
    const forbidden = await viewer.get('/console/sso');
    expect(forbidden.statusCode).toBe(403);
    expect(left(forbidden.body)).toEqual([]);

    // A form of a member page posted without a session (it ended): the form cookie's token passes, the guard says why.
    const c = visitor(p.t.app);
    const posted = await c.post('/console/sessions/end-others', { _csrf: ConsoleClient.token((await c.get('/console/sign-in')).body) });
    expect(posted.statusCode).toBe(401);
    expect(left(posted.body)).toEqual([]);
  });

  it('the CSRF refusal, and a NUL byte in a form field', async () => {
    const c = visitor(p.t.app);
    const csrf = await c.post('/console/sign-in', { email: 'a@example.com', password: 'x' });
    expect(csrf.statusCode).toBe(403);
    expect(left(csrf.body)).toEqual([]);
    const nul = await c.submit('/console/sign-in', '/console/sign-in', { email: 'a\u0000@example.com', password: 'x' });
    expect(nul.statusCode).toBe(400);
    // The refusal names the field as the form sends it ('email'): an identifier, as code is, not a word to translate.
    expect(nul.body).toContain('&#39;email&#39;');
    expect(left(nul.body, ['email'])).toEqual([]);
    const german = await visitor(p.t.app, 'de').submit('/console/sign-in', '/console/sign-in', { email: 'a\u0000@example.com', password: 'x' });
    expect(german.body).toContain('<h1>Anfrage abgelehnt</h1>');
    expect(german.body).toContain('Das Formularfeld „email“ enthält ein Steuerzeichen (etwa NUL), das die Konsole nicht annimmt.');
  });

  it('429 and 500: the error pages of a rate limit and of a failure', async () => {
    const app = Fastify();
    await app.register(
      async (scope) => {
        registerConsoleErrors(scope);
        scope.get('/limited', async () => {
          throw new ApiError('rate_limited', 'Too many requests.', { 'retry-after': '60' });
        });
        scope.get('/broken', async () => {
          throw new Error('a bug');
        });
      },
      { prefix: '/console' },
    );
    try {
      const headers = { 'accept-language': PSEUDO_LOCALE };
      const limited = await app.inject({ url: '/console/limited', headers });
      expect(limited.statusCode).toBe(429);
      expect(limited.headers['retry-after']).toBe('60');
      expect(englishLeft(limited.body, baseAllowedWords())).toEqual([]);
      const broken = await app.inject({ url: '/console/broken', headers });
      expect(broken.statusCode).toBe(500);
      expect(englishLeft(broken.body, baseAllowedWords())).toEqual([]);

      const german = await app.inject({ url: '/console/limited', headers: { 'accept-language': 'de' } });
      expect(german.body).toContain('<h1>Zu viele Anfragen</h1>');
      expect(german.body).toContain('Von hier kamen zu viele Anfragen; versuchen Sie es in einer Minute erneut.');
      const english = await app.inject({ url: '/console/limited' });
      expect(english.body).toContain('Too many requests came from here; try again in a minute.');
    } finally {
      await app.close();
    }
  });
});

describe('refusals of the domain, in words', () => {
  it("an English reader reads the domain's own messages, word for word", () => {
    const en = speakerFor('en');
    const said = [
      SIGN_IN_REFUSED,
      ACCEPTANCE_LIMITED,
      INVITATION_UNUSABLE,
      BREAK_GLASS_NEEDS_PASSKEY,
      CHOOSE_ORGANIZATION,
      SSO_REQUIRED_FOR_PASSWORD,
      PASSKEY_REQUIRED_NOT_CODE,
      REPLACE_FACTOR_REFUSED,
      TWO_FACTOR_REFUSED,
      PASSWORD_REFUSED,
      passkeys.PASSKEY_REFUSED,
      passkeys.PASSKEY_PASSWORD_REFUSED,
      passkeys.PASSKEY_REGISTRATION_REFUSED,
      passkeys.PASSKEY_LAST_REQUIRED,
      passkeys.PASSKEY_REQUIREMENT_NEEDS_OWN,
      passkeys.PASSKEY_HELD_USE_YOURS,
      passkeys.PASSKEYS_NEED_A_NAME,
      SSO_REFUSED,
      SSO_NOT_SET_UP,
      SSO_SAML_NOT_SET_UP,
      SSO_NO_ROLE,
      SSO_WRONG_DOMAIN,
      DOMAIN_TAKEN,
      TXT_NOT_FOUND,
      'The password must be at least 12 characters long.',
      'The client id must be text of 1 to 512 characters.',
      'The identity provider at https://idp.example.com did not answer OpenID Connect discovery: timed out',
      "Line 3 of the group mappings needs the form 'group = role'.",
    ];
    for (const m of said) expect(refusalWords(en, new ApiError('invalid_request', m))).toBe(m);
    // Each of them is the catalogue's, not the English message passed through: German differs.
    const de = speakerFor('de');
    for (const m of said) expect(refusalWords(de, new ApiError('invalid_request', m)), m).not.toBe(m);
  });

  it('a known refusal with values is said in the language; one this console does not know keeps its English, introduced in the language', () => {
    const de = speakerFor('de');
    expect(refusalWords(de, new ApiError('invalid_request', 'The client id must be text of 1 to 512 characters.'))).toBe(
      'Die Client-ID muss ein Text von 1 bis 512 Zeichen sein.',
    );
    expect(
      refusalWords(de, new ApiError('invalid_request', 'The identity provider at https://idp.example.com did not answer OpenID Connect discovery: timed out')),
    ).toBe('Der Identitätsanbieter unter https://idp.example.com hat auf die OpenID-Connect-Discovery nicht geantwortet: timed out');
    expect(refusalWords(de, new ApiError('invalid_request', 'A refusal added later.'))).toBe(
      'Nicht angenommen. Die Erklärung des Dienstes, auf Englisch: A refusal added later.',
    );
  });
});

describe('German and Arabic readers', () => {
  it('the invitation says its password rule with the plural of the language', async () => {
    const inv = await inviteMember(p.t.db, p.orgId, { email: 'eingeladen@members.example.com', role: 'admin' }, operatorActor('192.0.2.200'), NOW_OF_DEMO);
    const german = await visitor(p.t.app, 'de-DE,de;q=0.9').get(`/console/invitations/${inv.token}`);
    expect(german.body).toContain('<html lang="de">');
    expect(german.body).toContain(
      '<p>Sie sind als <strong>Admin</strong> mit der E-Mail-Adresse <strong>eingeladen@members.example.com</strong> eingeladen. Wählen Sie ein Passwort mit mindestens 12 Zeichen.</p>',
    );
    const arabic = await visitor(p.t.app, 'ar').get(`/console/invitations/${inv.token}`);
    expect(arabic.body).toContain('<html lang="ar" dir="rtl">');
    expect(arabic.body).toContain(
      '<p>أنت مدعو بصفة <strong>مسؤول</strong> بالبريد الإلكتروني <strong>eingeladen@members.example.com</strong>. اختر كلمة مرور لا تقل عن 12 محرفًا.</p>',
    );
    const short = await visitor(p.t.app, 'ar').submit(`/console/invitations/${inv.token}`, `/console/invitations/${inv.token}`, { password: 'short' });
    expect(short.body).toContain('يجب ألا يقل طول كلمة المرور عن 12 محرفًا.');
  });

  it('a refused sign-in and the error pages, in German and Arabic', async () => {
    const de = visitor(p.t.app, 'de', '198.51.100.80');
    const wrong = await de.submit('/console/sign-in', '/console/sign-in', { email: 'niemand@example.com', password: 'falsch und lang genug' });
    expect(wrong.body).toContain(
      'E-Mail-Adresse oder Passwort stimmen nicht, oder es gab zu viele Versuche. Nach 10 Fehlversuchen ist die Anmeldung 15 Minuten lang gesperrt.',
    );
    const viewer = await p.member('viewer');
    viewer.headers['accept-language'] = 'de';
    const forbidden = await viewer.get('/console/sso');
    expect(forbidden.body).toContain('<h1>Nicht erlaubt</h1>');
    expect(forbidden.body).toContain('Ihre Rolle (Betrachter) erlaubt das nicht; fragen Sie einen Inhaber.');
    viewer.headers['accept-language'] = 'ar';
    const missing = await viewer.get('/console/no-such-page');
    expect(missing.body).toContain('<html lang="ar" dir="rtl">');
    expect(missing.body).toContain('<h1>الصفحة غير موجودة</h1>');
  });
});

describe('passkeys, in the pseudo-locale (a console reached by a name)', () => {
  const ORIGIN = 'http://localhost:3000';
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ dataset: readDataset(), now: NOW, env: { PUBLIC_BASE_URL: ORIGIN } });
  }, 60_000);
  afterAll(async () => t?.close());

  it("the sign-in page's passkey block, the Account page's section with a passkey, and the second step", async () => {
    const email = 'pk.pseudo@example.com';
    const allowed = new Set([...baseAllowedWords(), ...PSEUDO_ACRONYMS]);
    allowWordsOf(allowed, [email, 'Acme', 'Laptop']);
    const c = await joinConsole(t, 'org_acme', email, 'viewer', NOW, '198.51.100.90');
    c.headers['accept-language'] = PSEUDO_LOCALE;
    const device = new SoftAuthenticator(ORIGIN);
    const account = await c.get('/console/account');
    const section = (body: string) => body.slice(body.indexOf('<h2 id="passkeys">'), body.indexOf('<h2>', body.indexOf('<h2 id="passkeys">') + 5));
    expect(englishLeft(section(account.body), allowed)).toEqual([]);
    // The password again, then the ceremony's form, then the passkey listed.
    const started = await c.postOnly('/console/account/passkeys', { _csrf: ConsoleClient.token(account.body), name: 'Laptop', password: CONSOLE_PASSWORD });
    expect(started.statusCode).toBe(303);
    const ceremony = await c.get('/console/account');
    expect(ceremony.body).toMatch(/data-failed="\[[^"]+\]" data-unsupported="\[[^"]+\]"/);
    const block = ceremony.body.slice(ceremony.body.indexOf('<section aria-labelledby="passkey-create"'));
    expect(englishLeft(block.slice(0, block.indexOf('</section>')), allowed)).toEqual([]);
    const options = optionsOn(ceremony.body, '/console/account/passkeys/new');
    const done = await c.postOnly('/console/account/passkeys/new', {
      _csrf: ConsoleClient.token(ceremony.body),
      name: 'Laptop',
      response: device.register(options),
    });
    expect(done.statusCode).toBe(303);
    const listed = await c.get('/console/account');
    expect(listed.body).toContain('<td>Laptop</td>');
    expect(englishLeft(section(listed.body), allowed)).toEqual([]);

    const v = visitor(t.app, PSEUDO_LOCALE, '198.51.100.91');
    v.followChanges = false;
    const signIn = await v.get('/console/sign-in');
    expect(signIn.body).toContain('data-passkey="authenticate"');
    expect(englishLeft(signIn.body, allowed)).toEqual([]);
    const half = await v.submit('/console/sign-in', '/console/sign-in', { email, password: CONSOLE_PASSWORD });
    expect(half.headers.location).toBe('/console/two-factor');
    const step = await v.get('/console/two-factor');
    expect(step.body).toContain('action="/console/two-factor/passkey"');
    expect(englishLeft(step.body, allowed)).toEqual([]);
    const refused = await v.postOnly('/console/two-factor/passkey', { _csrf: ConsoleClient.token(step.body), response: '{}' });
    expect(refused.statusCode).toBe(401);
    expect(englishLeft(refused.body, allowed)).toEqual([]);
  });

  it('the page of a session the passkey requirement holds', async () => {
    const allowed = new Set([...baseAllowedWords(), ...PSEUDO_ACRONYMS]);
    allowWordsOf(allowed, ['pk.held@example.com', 'Acme']);
    const owner = await joinConsole(t, 'org_acme', 'pk.owner@example.com', 'owner', NOW, '198.51.100.92');
    const admin = await joinConsole(t, 'org_acme', 'pk.held@example.com', 'admin', NOW, '198.51.100.93');
    admin.headers['accept-language'] = PSEUDO_LOCALE;
    admin.followChanges = false;
    const account = (await owner.get('/console/account')).body;
    await owner.postOnly('/console/account/passkeys', { _csrf: ConsoleClient.token(account), name: 'Owner key', password: CONSOLE_PASSWORD });
    const ceremony = (await owner.get('/console/account')).body;
    const options = optionsOn(ceremony, '/console/account/passkeys/new');
    const device = new SoftAuthenticator(ORIGIN);
    expect(
      (await owner.postOnly('/console/account/passkeys/new', { _csrf: ConsoleClient.token(ceremony), name: 'Owner key', response: device.register(options) }))
        .statusCode,
    ).toBe(303);
    const members = (await owner.get('/console/members')).body;
    expect((await owner.postOnly('/console/members/passkeys', { _csrf: ConsoleClient.token(members), required: 'true' })).statusCode).toBe(303);
    expect((await admin.get('/console/keys')).headers.location).toBe('/console/passkeys/required');
    const held = await admin.get('/console/passkeys/required');
    expect(held.statusCode).toBe(200);
    expect(held.body).toContain('action="/console/account/passkeys"');
    expect(englishLeft(held.body, allowed)).toEqual([]);
    const wrong = await admin.postOnly('/console/account/passkeys', {
      _csrf: ConsoleClient.token(held.body),
      name: 'Mine',
      password: 'not my password at all',
    });
    expect(wrong.statusCode).toBe(401);
    expect(englishLeft(wrong.body, allowed)).toEqual([]);
  });
});
