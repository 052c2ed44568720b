import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readDataset } from '../fixtures/dataset.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { ConsoleClient } from '../helpers/console-client.js';
import { sql } from '../../src/db/executor.js';
import { parseMultipart } from '../../src/console/pages/people/multipart.js';

/**
 * The console's People page (CONTRACT.md sections 11 amended and 12; issue 52, L9; issue 53): the
 * teams' summary first, then the roster a page of 50 at a time, searchable by email or team; each
 * row's buttons named with the person; a change leads back to its page and search; the roster file
 * uploaded (multipart) with a header row, its columns found by name or chosen, every error listed at
 * once and the text kept; a roster of 50,000 gives a page of the same size as one of 100.
 */
const BOUNDARY = '----cp-test-boundary';
function multipart(fields: Record<string, string>, file?: { name: string; text: string }) {
  const parts = Object.entries(fields).map(([k, v]) => `--${BOUNDARY}\r\nContent-Disposition: form-data; name="${k}"\r\n\r\n${v}\r\n`);
  if (file)
    parts.push(`--${BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename="${file.name}"\r\nContent-Type: text/csv\r\n\r\n${file.text}\r\n`);
  return `${parts.join('')}--${BOUNDARY}--\r\n`;
}
const ESC = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&#39;');

describe('the People page', () => {
  let t: TestApp;
  let admin: ConsoleClient;
  const upload = async (fields: Record<string, string>, file?: { name: string; text: string }) => {
    const page = await admin.get('/console/people');
    const res = await admin.app.inject({
      method: 'POST',
      url: '/console/people/replace',
      payload: multipart({ _csrf: ConsoleClient.token(page.body), ...fields }, file),
      headers: {
        cookie: [...admin.cookies].map(([k, v]) => `${k}=${v}`).join('; '),
        'content-type': `multipart/form-data; boundary=${BOUNDARY}`,
        'sec-fetch-site': 'same-origin',
      },
    });
    return res.statusCode === 303 ? admin.get(res.headers.location as string) : res;
  };
  beforeAll(async () => {
    t = await createTestApp({ dataset: readDataset() });
    admin = await ConsoleClient.join(t.app, t.db, 'org_acme', 'hr@acme.test', 'admin');
  });
  afterAll(async () => t?.close());

  it('says that a team under 5 answers without a team, and adds, moves and removes people by buttons named with them', async () => {
    const empty = await admin.get('/console/people');
    expect(empty.statusCode).toBe(200);
    expect(empty.body).toContain('A team with fewer than 5 people on this roster answers without a team');
    expect(empty.body).toContain('<a href="/console/people" aria-current="page">People</a>');
    const added = await admin.submit('/console/people', '/console/people', { email: 'ana@acme.test', team: 'Web' });
    expect(added.statusCode).toBe(200);
    expect(added.body).toContain('ana@acme.test added.');
    expect(added.body).toContain('<td>the organization (no team)</td>');
    expect(added.body).toContain('<button type="submit" class="secondary" aria-label="Move ana@acme.test">Move</button>');
    expect(added.body).toContain('aria-label="New link for ana@acme.test">New link</button>');
    expect(added.body).toContain('aria-label="Remove ana@acme.test">Remove</button>');
    expect(added.body).toContain(
      '<tr><td><bdi>Web</bdi></td><td>1</td><td>1</td><td>fewer than 5: answers count in the organization&#39;s total, without a team</td></tr>',
    );
    const dup = await admin.submit('/console/people', '/console/people', { email: 'ANA@acme.test', team: '' });
    expect(dup.statusCode).toBe(400);
    expect(dup.body).toContain('&#39;email&#39; is already on the roster.');
    const id = /action="\/console\/people\/(rsp_[0-9A-Za-z]+)\/move"/.exec(added.body)![1];
    const moved = await admin.submit('/console/people', `/console/people/${id}/move`, { team: 'Data' });
    expect(moved.body).toContain('ana@acme.test: team changed; it applies from the next round.');
    expect(moved.body).toContain('<td><bdi>Data</bdi></td>');
    const removed = await admin.submit('/console/people', `/console/people/${id}/remove`, {});
    expect(removed.body).toContain('ana@acme.test removed from the roster.');
    expect(removed.body).toContain('No one yet.');
  });

  it('takes an HRIS export as a file: extra columns ignored, every error listed at once, the text kept; nothing changed', async () => {
    const text = [
      'Employee ID,Name,E-mail,Department,Start date',
      '1,Ana,ana@acme.test,Web,2020-01-01',
      '2,Bob,not-an-address,Web,2021-02-02',
      '3,Cy,ana@acme.test,Data,2022-03-03',
      `4,Di,di@acme.test,${'x'.repeat(81)},2023-04-04`,
      '5,Ed,ed@acme.test,Web,2024-05-05',
    ].join('\n');
    const bad = await upload({ csv: '' }, { name: 'export.csv', text });
    expect(bad.statusCode).toBe(400);
    expect(bad.body).toContain('The file has 3 errors; nothing changed.');
    expect(bad.body).toContain(
      '<ul class="errors"><li>Line 3: &#39;email&#39; must be an email address.</li><li>Line 4: &#39;email&#39; &quot;ana@acme.test&quot; is already on line 2.</li><li>Line 5: &#39;team&#39; must be at most 80 characters.</li></ul>',
    );
    expect(bad.body).toContain(`<textarea name="csv" id="p-csv" rows="6">${ESC(text)}</textarea>`);
    expect(bad.body).toContain('No one yet.');
    const good = text
      .split('\n')
      .filter((_, i) => i !== 2 && i !== 3 && i !== 4)
      .join('\n');
    const ok = await upload({}, { name: 'export.csv', text: good });
    expect(ok.statusCode).toBe(200);
    expect(ok.body).toContain('Roster replaced: 2 added, 0 removed, 0 moved, 0 unchanged.');
  });

  it('asks which columns hold the email and the team when the header does not say it, keeping the text for that step', async () => {
    const text = 'Full name,Work address,Unit\nAna,ana@acme.test,Web\nEd,ed@acme.test,Ops\nFay,fay@acme.test,Ops\n';
    const ask = await upload({ csv: text });
    expect(ask.statusCode).toBe(200);
    expect(ask.body).toContain('Which columns hold the email address and the team?');
    expect(ask.body).toContain('<label for="u-email-col">Column with the email address</label>');
    expect(ask.body).toContain('<option value="Work address">Work address</option>');
    expect(ask.body).toContain('<option value="">No team column (everyone without a team)</option>');
    expect(ask.body).toContain(`<textarea name="csv" id="p-csv" rows="6">${ESC(text)}</textarea>`);
    const unknown = await upload({ csv: text, emailColumn: 'Mail', teamColumn: 'Unit' });
    expect(unknown.statusCode).toBe(400);
    expect(unknown.body).toContain('<li>The file has no column named &quot;Mail&quot; for the email.</li>');
    const done = await upload({ csv: text, emailColumn: 'Work address', teamColumn: 'Unit' });
    expect(done.body).toContain('Roster replaced: 1 added, 0 removed, 1 moved, 1 unchanged.');
  });

  it('reads multipart bodies strictly', () => {
    const body = Buffer.from(multipart({ _csrf: 'x', csv: 'a\r\nb' }, { name: 'f.csv', text: 'email\r\na@b.test' }));
    expect(parseMultipart(body, `multipart/form-data; boundary=${BOUNDARY}`)).toEqual({ _csrf: 'x', csv: 'a\r\nb', file: 'email\r\na@b.test' });
    expect(() =>
      parseMultipart(Buffer.from(multipart({ a: '1', b: '2' }).replace('name="b"', 'name="a"')), `multipart/form-data; boundary=${BOUNDARY}`),
    ).toThrow("The upload gives the field 'a' more than once.");
    expect(() => parseMultipart(Buffer.from(multipart({ team: 'a\u0000b' })), `multipart/form-data; boundary="${BOUNDARY}"`)).toThrow(
      "The upload field 'team' holds a control character (such as NUL), which the console does not accept.",
    );
    expect(() => parseMultipart(body.subarray(0, body.length - 10), `multipart/form-data; boundary=${BOUNDARY}`)).toThrow('The upload is cut short.');
    expect(() => parseMultipart(body, 'multipart/form-data')).toThrow('The upload has no multipart boundary.');
  });

  it('pages the roster by 50 and searches it by email or team; a move leads back to the same page and search', async () => {
    const lines = ['email,team', ...Array.from({ length: 120 }, (_, i) => `p${String(i).padStart(3, '0')}@acme.test,${i % 2 ? 'Odd' : 'Even'}`)];
    await upload({ csv: lines.join('\n') });
    const first = await admin.get('/console/people');
    expect(first.body).toContain('<caption id="roster-caption">120 people on the roster; 1-50 shown</caption>');
    expect(first.body).toContain('Page 1 of 3');
    expect(first.body.match(/aria-label="Move /g)).toHaveLength(50);
    const third = await admin.get('/console/people?page=3');
    expect(third.body).toContain('101-120 shown');
    expect(third.body).toContain('aria-label="Move p119@acme.test"');
    const found = await admin.get('/console/people?q=odd');
    expect(found.body).toContain('<caption id="roster-caption">60 people of 120 on the roster match “odd”</caption>');
    const page2 = await admin.get('/console/people?q=odd&page=2');
    expect(page2.body).toContain('<input type="hidden" name="back" value="q=odd&amp;page=2">');
    const id = /action="\/console\/people\/(rsp_[0-9A-Za-z]+)\/move"/.exec(page2.body)![1];
    admin.followChanges = false;
    const moved = await admin.post(`/console/people/${id}/move`, { _csrf: ConsoleClient.token(page2.body), team: 'Odd', back: 'q=odd&page=2' });
    admin.followChanges = true;
    expect([moved.statusCode, moved.headers.location]).toEqual([303, '/console/people?q=odd&page=2']);
    const twice = await admin.get('/console/people?q=a&q=b');
    expect(twice.statusCode).toBe(400);
    expect(twice.body).toContain('The parameter &#39;q&#39; is given more than once.');
    expect((await admin.get('/console/people?page=-3')).body).toContain('Page 1 of 3');
    const percent = await admin.get('/console/people?q=%25');
    expect(percent.body).toContain('No one matches “%”.');
  });

  it('stays small with a roster of 50,000 (issue 52, L9): the same size as a page of 100 people', async () => {
    const size = async () => Buffer.byteLength((await admin.get('/console/people')).body);
    await t.db.query(sql('t.clear', `DELETE FROM respondents WHERE org_id = 'org_acme'`));
    const insert = sql(
      't.many',
      `INSERT INTO respondents (org_id, id, email, team_id, created_at, team_since)
       SELECT 'org_acme', 'rsp_t' || lpad(i::text, 6, '0'), 'person' || lpad(i::text, 6, '0') || '@acme.test', 'team_web', now(), now()
         FROM generate_series($1::int, $2::int) AS i`,
    );
    await t.db.query(insert, [1, 100]);
    const small = await size();
    await t.db.query(insert, [101, 50_000]);
    const large = await size();
    expect(large - small).toBeLessThan(100);
    expect(large).toBeLessThan(64 * 1024);
    const page = await admin.get('/console/people?page=1000');
    expect(page.body).toContain('Page 1000 of 1000');
    expect(page.body).toContain('aria-label="Move person050000@acme.test"');
  }, 120_000);

  it('is not for viewers', async () => {
    const viewer = await ConsoleClient.join(t.app, t.db, 'org_acme', 'viewer@acme.test', 'viewer');
    const res = await viewer.get('/console/people');
    expect(res.statusCode).toBe(403);
    expect((await viewer.get('/console/overview')).body).not.toContain('/console/people');
  });
});
