import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { allowWordsOf, englishLeft, pseudoConsole, type PseudoConsole } from '../helpers/pseudo.js';
import type { ConsoleClient } from '../helpers/console-client.js';
import { operatorActor } from '../../src/domain/audit.js';
import { setDefaultLanguage } from '../../src/domain/checkins/settings.js';
import { getCheckinSettings } from '../../src/domain/checkins/settings.js';
import { roundNowState } from '../../src/domain/checkins/rounds.js';
import { insertRespondent } from '../../src/db/repositories/checkins.js';
import { sql } from '../../src/db/executor.js';
import { page } from '../../src/console/html.js';
import { sendNowView } from '../../src/console/pages/checkins/view.js';
import { speakerFor } from '../../src/console/words.js';
import { PSEUDO_LOCALE } from '../../src/i18n/index.js';

/**
 * Issue 57: the Check-ins and People pages (the schedule, the previews, the test mail, send now,
 * the rounds' status, a link sent again; the upload and its errors by line, search and pages,
 * moves and removals, the teams' summary, each person's mail language) in the pseudo-locale, with
 * no English left, as owners and admins see them; and a sentence with a plural in German and in
 * Arabic, right to left.
 */
const NOW = new Date('2026-11-20T12:00:00.000Z');
let p: PseudoConsole;
const ids: string[] = [];

beforeAll(async () => {
  p = await pseudoConsole(NOW);
  // The previews show the mails in the organization's default language: here the pseudo-locale's.
  await setDefaultLanguage(p.t.db, p.orgId, PSEUDO_LOCALE, operatorActor(null), NOW);
  // A person the identity provider keeps (no buttons), and the words the tests type (organization data).
  await insertRespondent(p.t.db, p.orgId, { id: 'rsp_pseudo_scim', email: 'kept.by.idp@example.com', teamId: null, createdAt: NOW, source: 'scim' });
  allowWordsOf(p.allowed, ['kept.by.idp@example.com', 'new.person@example.com', 'Zephyr', CSV, 'xyzzy']);
  const rows = await p.t.db.query<{ id: string }>(
    sql('t.pseudo.ids', `SELECT id FROM respondents WHERE org_id = $1 AND source <> 'scim' ORDER BY lower(email) LIMIT 2`),
    [p.orgId],
  );
  ids.push(...rows.map((r) => r.id));
}, 120_000);
afterAll(() => p?.t.close());

/** A people file with an error on line 3 and a duplicate on line 4 (its words are the organization's). */
const CSV = 'email,team\nnew.person@example.com,Zephyr\nnot-an-address,Zephyr\nnew.person@example.com,Zephyr';

const clean = (body: string) => expect(englishLeft(body, p.allowed)).toEqual([]);

describe.each(['owner', 'admin'] as const)('the Check-ins and People pages in the pseudo-locale, as %s', (role) => {
  let c: ConsoleClient;
  beforeAll(async () => {
    c = await p.member(role);
  });

  it('the Check-ins page, its refusals and notices, the test link, and the send-now confirmation', async () => {
    const checkins = await c.get('/console/checkins');
    expect(checkins.statusCode).toBe(200);
    expect(checkins.body).toContain('<html lang="en-XA">');
    clean(checkins.body);
    const refused = await c.submit('/console/checkins', '/console/checkins/settings', { weekday: '1', hour: '99', timeZone: 'Nowhere', reminderWeekday: '' });
    expect(refused.statusCode).toBe(400);
    clean(refused.body);
    const badZone = await c.submit('/console/checkins', '/console/checkins/settings', { weekday: '1', hour: '9', timeZone: 'Nowhere', reminderWeekday: '' });
    expect(badZone.statusCode).toBe(400);
    clean(badZone.body);
    const saved = await c.submit('/console/checkins', '/console/checkins/settings', { weekday: '1', hour: '9', timeZone: 'UTC', reminderWeekday: '4' });
    expect(saved.statusCode).toBe(200);
    clean(saved.body);
    const language = await c.submit('/console/checkins', '/console/checkins/language', { language: PSEUDO_LOCALE });
    expect(language.statusCode).toBe(200);
    clean(language.body);
    const noSmtp = await c.submit('/console/checkins', '/console/checkins/test-mail', {});
    expect(noSmtp.statusCode).toBe(409);
    clean(noSmtp.body);
    const test = await c.get('/console/checkins/test-link');
    expect(test.statusCode).toBe(200);
    clean(test.body);
    // Without SMTP the confirmation page is not offered: its view, in the reader's words, with the state of this week.
    const state = await roundNowState(p.t.db, p.orgId, NOW);
    const settings = await getCheckinSettings(p.t.db, p.orgId);
    const session = { member: { email: `pseudo@members.example.com`, role, id: 'mem_x' }, orgName: 'x', csrfToken: 'x', orgId: p.orgId } as never;
    clean(page(sendNowView(session, { ...state, startedAt: null, people: 7, reminderAt: state.scheduledAt }, settings, speakerFor(PSEUDO_LOCALE))));
    clean(page(sendNowView(session, { ...state, startedAt: null, people: 1, reminderAt: null }, settings, speakerFor(PSEUDO_LOCALE))));
  });

  it('the People page: teams, roster, search, pages, a person added and refused, moves, removals, languages and the upload with its errors', async () => {
    const people = await c.get('/console/people');
    expect(people.statusCode).toBe(200);
    clean(people.body);
    clean((await c.get('/console/people?q=xyzzy')).body);
    clean((await c.get('/console/people?q=example')).body);
    const added = await c.submit('/console/people', '/console/people', { email: `${role}.new.person@example.com`, team: 'Zephyr' });
    allowWordsOf(p.allowed, [`${role}.new.person@example.com`]);
    clean(added.body);
    const taken = await c.submit('/console/people', '/console/people', { email: `${role}.new.person@example.com`, team: '' });
    expect(taken.statusCode).toBe(400);
    clean(taken.body);
    const moved = await c.submit('/console/people', `/console/people/${ids[0]}/move`, { team: 'Zephyr', back: '' });
    expect(moved.statusCode).toBe(200);
    clean(moved.body);
    const scim = await c.submit('/console/people', '/console/people/rsp_pseudo_scim/move', { team: 'Zephyr', back: '' });
    expect(scim.statusCode).toBe(400);
    clean(scim.body);
    const languagePage = await c.get(`/console/people/${ids[0]}/language`);
    expect(languagePage.statusCode).toBe(200);
    clean(languagePage.body);
    const language = await c.submit(`/console/people/${ids[0]}/language`, `/console/people/${ids[0]}/language`, { language: 'de', back: '' });
    clean(language.body);
    const cleared = await c.submit(`/console/people/${ids[0]}/language`, `/console/people/${ids[0]}/language`, { language: '', back: '' });
    clean(cleared.body);
    const bulkMoved = await c.submit('/console/people', '/console/people/bulk', {
      do: 'move',
      team: '',
      back: '',
      [`pick-${ids[0]}`]: '1',
      [`pick-${ids[1]}`]: '1',
    });
    clean(bulkMoved.body);
    const none = await c.submit('/console/people', '/console/people/bulk', { do: 'move', team: '', back: '' });
    expect(none.statusCode).toBe(400);
    clean(none.body);
    const confirm = await c.submit('/console/people', '/console/people/bulk', { do: 'remove', back: '', [`pick-${ids[0]}`]: '1', [`pick-${ids[1]}`]: '1' });
    expect(confirm.body).toContain('<h1>');
    clean(confirm.body);
    const csvErrors = await c.submit('/console/people', '/console/people/replace', { csv: CSV });
    expect(csvErrors.statusCode).toBe(400);
    expect(csvErrors.body).toContain('<ul class="errors"><li>');
    clean(csvErrors.body);
    const choose = await c.submit('/console/people', '/console/people/replace', { csv: 'Zephyr,xyzzy\nnew.person@example.com,Zephyr' });
    clean(choose.body);
    const empty = await c.submit('/console/people', '/console/people/replace', { csv: '' });
    expect(empty.statusCode).toBe(400);
    clean(empty.body);
  });
});

describe('in German and in Arabic', () => {
  it('says a plural in German, and reads right to left in Arabic', async () => {
    const admin = await p.member('admin');
    const [a, b] = ids;
    admin.headers['accept-language'] = 'de';
    const de = await admin.submit('/console/people', '/console/people/bulk', { do: 'remove', back: '', [`pick-${a}`]: '1', [`pick-${b}`]: '1' });
    expect(de.body).toContain('<html lang="de">');
    expect(de.body).toContain('<h1>Diese Personen entfernen?</h1>');
    expect(de.body).toContain('<p>2 Personen werden von der Liste entfernt:</p>');
    expect(de.body).toContain('<button type="submit" class="danger">2 Personen entfernen</button>');
    const deCheckins = await admin.get('/console/checkins');
    expect(deCheckins.body).toContain('<h2>Sprache der E-Mails</h2>');

    admin.headers['accept-language'] = 'ar';
    const ar = await admin.submit('/console/people', '/console/people/bulk', { do: 'remove', back: '', [`pick-${a}`]: '1', [`pick-${b}`]: '1' });
    expect(ar.body).toContain('<html lang="ar" dir="rtl">');
    expect(ar.body).toContain('<p>سيُزال من القائمة شخصان:</p>');
    expect(ar.body).toContain('<button type="submit" class="danger">إزالة شخصين</button>');
    const arPeople = await admin.get('/console/people');
    expect(arPeople.body).toContain('<h1>الأشخاص</h1>');
  });

  it("a malformed upload is refused in the reader's words, before the page's handler runs", async () => {
    const owner = await p.member('owner');
    const res = await p.t.app.inject({
      method: 'POST',
      url: '/console/people/replace',
      remoteAddress: owner.ip,
      payload: 'not a multipart body at all',
      headers: {
        cookie: [...owner.cookies].map(([k, v]) => `${k}=${v}`).join('; '),
        'content-type': 'multipart/form-data; boundary=xyz',
        'sec-fetch-site': 'same-origin',
        origin: 'http://localhost:80',
        host: 'localhost:80',
        'accept-language': 'de',
      },
    });
    expect(res.statusCode).toBe(400);
    expect(res.body).toContain('Der Upload konnte nicht gelesen werden: Er ist nicht das Formular, das die Seite „Personen“ sendet.');
  });
});
