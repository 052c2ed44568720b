import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { joinConsole, type ConsoleClient } from '../helpers/console-client.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { allowWordsOf, englishLeft, pseudoConsole, type PseudoConsole } from '../helpers/pseudo.js';
import { AUDIT_ACTIONS } from '../../src/contract/schemas/admin-audit.js';
import { auditWords } from '../../src/console/words.js';
import { CATALOGUES, LOCALES, translator } from '../../src/i18n/index.js';
import { operatorActor } from '../../src/domain/audit.js';
import { listMembers, setMemberRoleAndTeams, type MemberRole } from '../../src/domain/members.js';
import { listOrgTeams } from '../../src/domain/teams.js';

/**
 * Issue 57: the Members page (invitations, roles and teams), the Account page and the audit log in
 * the reader's language, with no English left; and a member's own language, chosen on the Account
 * page, which their pages follow from the next request whatever the browser asks for.
 */

/**
 * The passkey parts of these pages (the owner's requirement on the Members page, the Account
 * page's passkeys) are the passkeys area's words (src/console/pages/passkeys/view.ts), proven there.
 */
const withoutPasskeys = (body: string) =>
  body.replace(/<h2 id="passkeys">[\s\S]*?(?=<h2>)/, '').replace(/<h2>Passkeys for owners and admins<\/h2>[\s\S]*?<\/form>/, '');

let p: PseudoConsole;
const by: Partial<Record<MemberRole, ConsoleClient>> = {};
beforeAll(async () => {
  p = await pseudoConsole();
  for (const role of ['owner', 'admin', 'viewer'] as const) by[role] = await p.member(role, `${role}.pseudo@members.example.com`);
  // A manager of the demo's first team: invited as a viewer, then given the team (an invitation by the operator names none).
  by.manager = await p.member('viewer', 'manager.pseudo@members.example.com');
  const [team] = await listOrgTeams(p.t.db, p.orgId);
  const m = (await listMembers(p.t.db, p.orgId)).find((x) => x.email === 'manager.pseudo@members.example.com')!;
  await setMemberRoleAndTeams(p.t.db, p.orgId, m.id, 'manager', [team!.id], operatorActor(null), new Date('2026-11-20T12:00:00.000Z'));
});
afterAll(() => p?.t.close());
const as = (role: MemberRole) => by[role]!;

describe('the Members, Account and Audit log pages in the pseudo-locale', () => {
  it('the Members page as an owner: the table, the invitation form and its link box, a refusal, a role changed', async () => {
    const owner = as('owner');
    allowWordsOf(p.allowed, ['new.lead@members.example.com']);
    const page = await owner.get('/console/members');
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain('<html lang="en-XA">');
    expect(englishLeft(withoutPasskeys(page.body), p.allowed)).toEqual([]);

    // Without SMTP_URL the link is shown once, in the owner's words; the invitations table appears.
    const invited = await owner.submit('/console/members', '/console/members/invite', { email: 'new.lead@members.example.com', role: 'viewer' });
    expect(invited.statusCode).toBe(200);
    expect(invited.body).toContain('id="invitation-link"');
    expect(invited.body).toContain('<code>SMTP_URL</code>');
    expect(invited.body).toContain('id="invitations-caption"');
    expect(englishLeft(withoutPasskeys(invited.body), p.allowed)).toEqual([]);

    // A refusal of the domain (an address that is not one) in the owner's words, with its status.
    const refused = await owner.submit('/console/members', '/console/members/invite', { email: 'not-an-address', role: 'viewer' });
    expect(refused.statusCode).toBe(400);
    expect(refused.body).toContain('role="alert"');
    expect(englishLeft(withoutPasskeys(refused.body), p.allowed)).toEqual([]);

    const id = /<td>viewer\.pseudo@members\.example\.com<\/td>[\s\S]*?action="\/console\/members\/([^/"]+)\/role"/.exec(page.body)?.[1];
    expect(id).toMatch(/^mem_/);
    const changed = await owner.submit('/console/members', `/console/members/${id}/role`, { role: 'admin' });
    expect(changed.statusCode).toBe(200);
    expect(changed.body).toContain('role="status"');
    expect(englishLeft(withoutPasskeys(changed.body), p.allowed)).toEqual([]);
    await owner.submit('/console/members', `/console/members/${id}/role`, { role: 'viewer' });
  });

  for (const role of ['owner', 'admin', 'viewer', 'manager'] as const) {
    it(`the Account page as ${role}`, async () => {
      const res = await as(role).get('/console/account');
      expect(res.statusCode).toBe(200);
      expect(res.body).toContain('<html lang="en-XA">');
      expect(res.body).toContain('<option value="" selected>');
      expect(englishLeft(withoutPasskeys(res.body), p.allowed)).toEqual([]);
    });
  }

  for (const role of ['owner', 'admin', 'viewer'] as const) {
    it(`the Audit log as ${role}, filtered and not`, async () => {
      for (const url of ['/console/audit', '/console/audit?actor=member', '/console/audit?action=member.removed']) {
        const res = await as(role).get(url);
        expect(res.statusCode, url).toBe(200);
        expect(res.body).toContain('<html lang="en-XA">');
        expect(englishLeft(res.body, p.allowed), url).toEqual([]);
      }
    });
  }

  it('a manager has no Members page nor Audit log; their Account and Sessions pages are in their words', async () => {
    expect((await as('manager').get('/console/members')).statusCode).toBe(403);
    expect((await as('manager').get('/console/audit')).statusCode).toBe(403);
    const sessions = await as('manager').get('/console/sessions');
    expect(englishLeft(sessions.body, p.allowed)).toEqual([]);
  });

  it('retention: saved, refused, and read by the others', async () => {
    const saved = await as('owner').submit('/console/audit', '/console/audit/retention', { auditDays: '730', deliveryDays: '1' });
    expect(saved.statusCode).toBe(200);
    expect(englishLeft(saved.body, p.allowed)).toEqual([]);
    const refused = await as('owner').submit('/console/audit', '/console/audit/retention', { auditDays: '29', deliveryDays: '1' });
    expect(refused.statusCode).toBe(400);
    expect(englishLeft(refused.body, p.allowed)).toEqual([]);
  });

  it('ending the other sessions says so in the reader’s words', async () => {
    const other = await p.member('viewer', 'second.device@members.example.com');
    const res = await other.submit('/console/sessions', '/console/sessions/end-others', {});
    expect(res.statusCode).toBe(200);
    expect(englishLeft(res.body, p.allowed)).toEqual([]);
  });
});

describe('in German and in Arabic', () => {
  it('German: the retention saved, with its plurals', async () => {
    const owner = as('owner');
    owner.headers['accept-language'] = 'de-DE,de;q=0.9';
    try {
      const saved = await owner.submit('/console/audit', '/console/audit/retention', { auditDays: '730', deliveryDays: '1' });
      expect(saved.body).toContain('<html lang="de">');
      expect(saved.body).toContain('Aufbewahrung gespeichert: Audit-Einträge werden 730 Tage aufbewahrt, Webhook-Zustellprotokolle 1 Tag.');
      const members = await owner.get('/console/members');
      expect(members.body).toContain('<h2>Mitglied einladen</h2>');
      expect(members.body).toContain('<td>owner.pseudo@members.example.com</td><td>Inhaber</td><td>aus</td>');
    } finally {
      owner.headers['accept-language'] = 'en-XA';
    }
  });

  it('Arabic: right to left, and the retention an admin reads, with its plurals', async () => {
    const admin = as('admin');
    admin.headers['accept-language'] = 'ar';
    try {
      const res = await admin.get('/console/audit');
      expect(res.body).toContain('<html lang="ar" dir="rtl">');
      expect(res.body).toContain('<h1>سجل التدقيق</h1>');
      expect(res.body).toContain('<p>تُحفظ إدخالات التدقيق 730 يومًا، وسجلات تسليم خطافات الويب يومًا واحدًا؛ وتُحذف الأقدم منها. يمكن للمالكين تغيير ذلك.</p>');
    } finally {
      admin.headers['accept-language'] = 'en-XA';
    }
  });
});

describe("a member's own language", () => {
  it('chosen on the Account page, the next pages are in it whatever Accept-Language says; the browser’s language goes back to Accept-Language', async () => {
    const viewer = as('viewer');
    viewer.headers['accept-language'] = 'de';
    try {
      const before = await viewer.get('/console/account');
      expect(before.body).toContain('<html lang="de">');
      expect(before.body).toContain('<label for="f-language">Sprache</label>');
      for (const locale of LOCALES) expect(before.body).toContain(`<option value="${locale}" lang="${locale}">`);

      const chosen = await viewer.submit('/console/account', '/console/account/language', { language: 'ja' });
      expect(chosen.statusCode).toBe(200);
      expect(chosen.body).toContain('<html lang="ja">');
      expect(chosen.body).toContain('ページの言語を 日本語 にしました。');
      expect(chosen.body).toContain('<option value="ja" lang="ja" selected>');
      for (const url of ['/console/audit', '/console/sessions', '/console/account']) {
        const res = await viewer.get(url);
        expect(res.body, url).toContain('<html lang="ja">');
      }
      viewer.headers['accept-language'] = 'ar';
      expect((await viewer.get('/console/audit')).body).toContain('<h1>監査ログ</h1>');

      const browser = await viewer.submit('/console/account', '/console/account/language', { language: '' });
      expect(browser.statusCode).toBe(200);
      expect(browser.body).toContain('<html lang="ar" dir="rtl">');
      expect(browser.body).toContain('صفحاتك الآن تتبع لغة متصفحك.');
      expect(browser.body).toContain('<option value="" selected>');
      viewer.headers['accept-language'] = 'fr-CH, fr;q=0.9';
      expect((await viewer.get('/console/sessions')).body).toContain('<html lang="fr">');
    } finally {
      viewer.headers['accept-language'] = 'en-XA';
    }
  });

  it('a language the catalogues do not have is refused, and changes nothing', async () => {
    const admin = as('admin');
    admin.headers['accept-language'] = 'de';
    try {
      const res = await admin.submit('/console/account', '/console/account/language', { language: 'xx-YY' });
      expect(res.statusCode).toBe(400);
      expect(res.body).toContain('Wählen Sie eine Sprache aus der Liste.');
      expect(res.body).toContain('<option value="" selected>');
    } finally {
      admin.headers['accept-language'] = 'en-XA';
    }
  });
});

describe('the audit codes in words', () => {
  it('every code has words in every catalogue, told apart in each; auditWords takes the reader’s translator', () => {
    for (const locale of Object.keys(CATALOGUES)) {
      const t = translator(locale);
      const words = AUDIT_ACTIONS.map((a) => auditWords(a, t));
      expect(new Set(words).size, locale).toBe(AUDIT_ACTIONS.length);
      for (const w of words) expect(w, locale).not.toMatch(/^[a-z_]+\.[a-z_]+$/);
    }
    expect(auditWords('member.invited', translator('de'))).toBe('Mitglied eingeladen');
    expect(auditWords('member.invited')).toBe('Member invited');
    expect(auditWords('some.future_code', translator('de'))).toBe('some.future_code');
  });
});

describe('the invitation mail, in the inviter’s language', () => {
  let t: TestApp;
  let smtp: SMTPServer;
  const inbox: string[] = [];
  const NOW = new Date('2026-11-20T12:00:00.000Z');
  beforeAll(async () => {
    smtp = new SMTPServer({
      authOptional: true,
      disabledCommands: ['STARTTLS', 'AUTH'],
      onData(stream, _session, callback) {
        const chunks: Buffer[] = [];
        stream.on('data', (c: Buffer) => chunks.push(c));
        stream.on('end', () => {
          inbox.push(Buffer.concat(chunks).toString('utf8'));
          callback();
        });
      },
    });
    await new Promise<void>((resolve) => smtp.listen(0, '127.0.0.1', () => resolve()));
    const port = (smtp.server.address() as AddressInfo).port;
    t = await createTestApp({
      dataset: { organizations: [{ id: 'org_mail', name: 'Acme', plan: 'business', createdAt: '2026-01-01T00:00:00.000Z' }] },
      now: NOW,
      env: { SMTP_URL: `smtp://127.0.0.1:${port}`, MAIL_FROM: 'Climate Pulse <pulse@service.test>' },
    });
  });
  afterAll(async () => {
    await t?.close();
    await new Promise<void>((resolve) => smtp?.close(() => resolve()));
  });

  it('a German owner invites: the subject, the text and the page’s notice are German', async () => {
    const owner = await joinConsole(t, 'org_mail', 'chefin@mail.example.com', 'owner', NOW);
    owner.headers['accept-language'] = 'de';
    const res = await owner.submit('/console/members', '/console/members/invite', { email: 'neu@mail.example.com', role: 'admin' });
    expect(res.statusCode).toBe(200);
    expect(res.body).toContain('Einladung per E-Mail an neu@mail.example.com (Admin) gesendet.');
    expect(inbox).toHaveLength(1);
    const [head, ...body] = inbox[0]!.split('\r\n\r\n');
    expect(head.replace(/\r\n[ \t]+/g, ' ')).toContain('Subject: Ihre Einladung zu Acme bei Climate Pulse');
    const text = Buffer.from(
      body
        .join('\r\n\r\n')
        .replace(/=\r\n/g, '')
        .replace(/=([0-9A-F]{2})/g, (_, h: string) => String.fromCharCode(parseInt(h, 16))),
      'latin1',
    ).toString('utf8');
    expect(text).toContain('chefin@mail.example.com lädt Sie als Admin in die Climate-Pulse-Konsole von Acme ein.');
    expect(text).toContain('Wenn Sie diese Nachricht nicht erwartet haben, ignorieren Sie sie.');
  });
});
