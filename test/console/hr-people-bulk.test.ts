import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { ConsoleClient } from '../helpers/console-client.js';
import { operatorActor } from '../../src/domain/audit.js';
import { replaceRoster } from '../../src/domain/checkins/roster.js';
import { exportWeekLinks } from '../../src/domain/checkins/rounds.js';
import { sql } from '../../src/db/executor.js';

/**
 * The People page's moves and removals of several people at once (issue 53, item 2): checkboxes
 * named with each person, one action for all of them (a removal after a page that lists them),
 * one transaction (one unknown person changes nobody), each person audited as a single change is,
 * and the sentence of the week fixed at its start once this week's round has started.
 */
const NOW = new Date('2026-11-25T10:00:00.000Z'); // a Wednesday, after the default round (Monday 09:00 UTC)
const ORG = 'org_bulk';
const roster = ['email,team', ...Array.from({ length: 8 }, (_, i) => `p${i + 1}@bulk.test,Web`)].join('\n');

describe('moving and removing several people at once', () => {
  let t: TestApp;
  let admin: ConsoleClient;
  const idOf = (body: string, email: string) =>
    new RegExp(`<input type="checkbox" name="pick-(rsp_[0-9A-Za-z]+)" form="bulk" aria-label="Choose ${email.replace('.', '\\.')}">`).exec(body)?.[1];
  const audit = async (action: string) =>
    (
      await t.db.query<{ target_id: string }>(sql('t.audit', `SELECT target_id FROM audit_events WHERE org_id = $1 AND action = $2 ORDER BY target_id`), [
        ORG,
        action,
      ])
    ).map((r) => r.target_id);

  beforeAll(async () => {
    t = await createTestApp({
      dataset: { organizations: [{ id: ORG, name: 'Bulk Ltd', plan: 'business', createdAt: '2026-01-01T00:00:00.000Z' }] },
      now: NOW,
    });
    await replaceRoster(t.db, ORG, roster, operatorActor(null), NOW);
    admin = await ConsoleClient.join(t.app, t.db, ORG, 'hr@bulk.test', 'admin');
  });
  afterAll(async () => t?.close());

  it('names every checkbox and the bulk controls for whom they act on', async () => {
    const page = await admin.get('/console/people');
    expect(page.statusCode).toBe(200);
    for (let i = 1; i <= 8; i++) expect(idOf(page.body, `p${i}@bulk.test`)).toMatch(/^rsp_/);
    expect(page.body).toContain('<legend>The people chosen in the table above</legend>');
    expect(page.body).toContain('<label for="b-team">New team for the chosen people (empty: no team)</label>');
    expect(page.body).toContain('<button type="submit" name="do" value="move" class="secondary">Move the chosen people</button>');
    expect(page.body).toContain('<button type="submit" name="do" value="remove" class="danger">Remove the chosen people</button>');
    // A row's own Remove is a button of the same form, named with its person.
    const p1 = idOf(page.body, 'p1@bulk.test');
    expect(page.body).toContain(
      `<button type="submit" form="bulk" name="removeOne" value="${p1}" class="danger" aria-label="Remove p1@bulk.test">Remove</button>`,
    );
  });

  it('moves the chosen people in one change, each audited; the change applies from the next round', async () => {
    const page = await admin.get('/console/people');
    const ids = [1, 2, 3].map((i) => idOf(page.body, `p${i}@bulk.test`)!);
    const moved = await admin.submit('/console/people', '/console/people/bulk', {
      do: 'move',
      team: 'Data',
      ...Object.fromEntries(ids.map((id) => [`pick-${id}`, '1'])),
    });
    expect(moved.statusCode).toBe(200);
    expect(moved.body).toContain('3 people moved to “Data”. The change applies from the next round.');
    expect(moved.body).toContain('<tr><td><bdi>Data</bdi></td><td>3</td><td>3</td>');
    expect(await audit('respondent.moved')).toEqual([...ids].sort());
  });

  it('refuses them all when one is unknown, and says to choose someone when no one is', async () => {
    const page = await admin.get('/console/people');
    const p4 = idOf(page.body, 'p4@bulk.test')!;
    const refused = await admin.submit('/console/people', '/console/people/bulk', { do: 'move', team: 'Ops', [`pick-${p4}`]: '1', 'pick-rsp_nobody': '1' });
    expect(refused.statusCode).toBe(404);
    expect(refused.body).not.toContain('<bdi>Ops</bdi>');
    expect(await audit('respondent.moved')).toHaveLength(3);
    const none = await admin.submit('/console/people', '/console/people/bulk', { do: 'move', team: 'Ops' });
    expect(none.statusCode).toBe(400);
    expect(none.body).toContain('Choose at least one person.');
    const many = Object.fromEntries(Array.from({ length: 501 }, (_, i) => [`pick-rsp_x${i}`, 'on']));
    const tooMany = await admin.submit('/console/people', '/console/people/bulk', { do: 'remove', ...many });
    expect(tooMany.statusCode).toBe(400);
    expect(tooMany.body).toContain('At most 500 people can be changed at once.');
  });

  it("removes the chosen people after a page that lists them; once this week's round started, it says the week stays fixed", async () => {
    // This week's round starts (the links file, without mail): the week is fixed from now on.
    await exportWeekLinks(t.db, ORG, { linkFor: (o, k) => `http://x/checkin/o/${o}#${k}`, mails: false }, operatorActor(null), NOW);
    const page = await admin.get('/console/people');
    const ids = [7, 8].map((i) => idOf(page.body, `p${i}@bulk.test`)!);
    const confirm = await admin.submit('/console/people', '/console/people/bulk', {
      do: 'remove',
      ...Object.fromEntries(ids.map((id) => [`pick-${id}`, '1'])),
    });
    expect(confirm.statusCode).toBe(200);
    expect(confirm.body).toContain('<h1>Remove these people?</h1>');
    expect(confirm.body).toContain('<li><bdi>p7@bulk.test</bdi></li><li><bdi>p8@bulk.test</bdi></li>');
    expect(confirm.body).toContain('<button type="submit" class="danger">Remove 2 people</button>');
    expect(await audit('respondent.removed')).toEqual([]);
    const fields = Object.fromEntries([...confirm.body.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)].map((m) => [m[1], m[2]]));
    expect(fields).toMatchObject({ do: 'remove', confirm: '1', [`pick-${ids[0]}`]: '1', [`pick-${ids[1]}`]: '1' });
    const removed = await admin.post('/console/people/bulk', fields);
    expect(removed.statusCode).toBe(200);
    expect(removed.body).toContain(
      '2 people removed from the roster. This week&#39;s round started already and stays as it was when it started (who is on it, and in which team): the change applies from next week&#39;s round.',
    );
    expect(removed.body).toContain('6 people on the roster');
    expect(removed.body).not.toContain('p7@bulk.test');
    expect(await audit('respondent.removed')).toEqual([...ids].sort());

    // A row's own Remove (with other rows ticked) asks for that one person only.
    const p6 = idOf(removed.body, 'p6@bulk.test')!;
    const p5 = idOf(removed.body, 'p5@bulk.test')!;
    const one = await admin.submit('/console/people', '/console/people/bulk', { removeOne: p6, [`pick-${p5}`]: 'on' });
    expect(one.body).toContain('<li><bdi>p6@bulk.test</bdi></li></ul>');
    expect(one.body).not.toContain('p5@bulk.test');
    expect(one.body).toContain('<button type="submit" class="danger">Remove 1 person</button>');
  });
});
