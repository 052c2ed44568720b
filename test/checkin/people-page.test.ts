import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readDataset } from '../fixtures/dataset.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { ConsoleClient } from '../helpers/console-client.js';

/**
 * The console's People page (CONTRACT.md section 12): the roster with the "fewer than 5" note,
 * add, move, remove, CSV replaced whole, settings and words, the week's links as a CSV file
 * without SMTP (which open the check-in page), participation only from 5; viewers are refused.
 */
describe('the People page', () => {
  let t: TestApp;
  let admin: ConsoleClient;
  beforeAll(async () => {
    t = await createTestApp({ dataset: readDataset() });
    admin = await ConsoleClient.join(t.app, t.db, 'org_acme', 'hr@acme.test', 'admin');
  });
  afterAll(async () => t?.close());

  it('says that a team under 5 answers without a team, and adds, moves and removes people', async () => {
    const empty = await admin.get('/console/people');
    expect(empty.statusCode).toBe(200);
    expect(empty.body).toContain('A team with fewer than 5 people on this roster answers without a team');
    expect(empty.body).toContain('<a href="/console/people" aria-current="page">People</a>');
    const added = await admin.submit('/console/people', '/console/people', { email: 'ana@acme.test', team: 'Web' });
    expect(added.statusCode).toBe(200);
    expect(added.body).toContain('ana@acme.test added.');
    expect(added.body).toContain('<td>the organization (no team)</td>');
    const dup = await admin.submit('/console/people', '/console/people', { email: 'ANA@acme.test', team: '' });
    expect(dup.statusCode).toBe(400);
    expect(dup.body).toContain('&#39;email&#39; is already on the roster.');
    const id = /action="\/console\/people\/(rsp_[0-9A-Za-z]+)\/move"/.exec(added.body)![1];
    const moved = await admin.submit('/console/people', `/console/people/${id}/move`, { team: 'Data' });
    expect(moved.body).toContain('Team changed; it applies from the next round.');
    expect(moved.body).toContain('<td><bdi>Data</bdi></td>');
    const removed = await admin.submit('/console/people', `/console/people/${id}/remove`, {});
    expect(removed.body).toContain('Removed from the roster.');
    expect(removed.body).toContain('No one yet.');
  });

  it('replaces the roster from CSV only when the whole file is good', async () => {
    const bad = await admin.submit('/console/people', '/console/people/replace', { csv: 'a@acme.test,Web\nb@acme.test,Web,extra\n' });
    expect(bad.statusCode).toBe(400);
    expect(bad.body).toContain('Line 2: expected &#39;email,team&#39;, found 3 fields.');
    expect(bad.body).toContain('No one yet.');
    const csv = ['email,team', ...[1, 2, 3, 4, 5].map((i) => `w${i}@acme.test,Web`), 'solo@acme.test,'].join('\n');
    const ok = await admin.submit('/console/people', '/console/people/replace', { csv });
    expect(ok.body).toContain('Roster replaced: 6 added, 0 removed, 0 moved, 0 unchanged.');
    expect(ok.body).toContain('<td><bdi>Web</bdi></td><td>5</td><td>as the team</td>');
  });

  it("saves settings and words; the week's links download as CSV and open the check-in page; participation from 5", async () => {
    const saved = await admin.submit('/console/people', '/console/people/settings', {
      weekday: '2',
      hour: '10',
      timeZone: 'Europe/Paris',
      reminderWeekday: '5',
      reasons: 'workload\nteam',
      flagWords: 'idiot\n',
    });
    expect(saved.body).toContain('Check-in settings saved.');
    expect(saved.body).toContain('<option value="2" selected>Tuesday</option>');
    const page = await admin.get('/console/people');
    expect(page.body).toContain("Whoever holds the file can answer in someone's place, though still learn no answer.");
    const file = await admin.postOnly('/console/people/links', { _csrf: ConsoleClient.token(page.body) });
    expect(file.statusCode).toBe(200);
    expect(file.headers['content-type']).toBe('text/csv; charset=utf-8');
    expect(file.headers['content-disposition']).toMatch(/^attachment; filename="checkin-links-\d{4}-\d\d-\d\d\.csv"$/);
    const rows = file.body.trim().split('\r\n');
    expect(rows[0]).toBe('email,team,link');
    expect(rows.slice(1).map((r) => r.split(',').slice(0, 2).join(','))).toEqual(['solo@acme.test,', ...[1, 2, 3, 4, 5].map((i) => `w${i}@acme.test,Web`)]);
    const token = rows[1].split('#')[1];
    const opened = await t.app.inject({ method: 'POST', url: '/checkin/o/org_acme/open', payload: { token } });
    expect(opened.statusCode).toBe(200);
    expect(opened.json().reasons).toEqual(['workload', 'team']);
    const after = await admin.get('/console/people');
    expect(after.body).toMatch(/<td><bdi>Web<\/bdi><\/td><td>5<\/td><td>fewer than 5<\/td><td>fewer than 5<\/td>/);
  });

  it('is not for viewers', async () => {
    const viewer = await ConsoleClient.join(t.app, t.db, 'org_acme', 'viewer@acme.test', 'viewer');
    const res = await viewer.get('/console/people');
    expect(res.statusCode).toBe(403);
    expect((await viewer.get('/console/overview')).body).not.toContain('/console/people');
  });
});
