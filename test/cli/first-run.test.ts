import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkinWayIn, wayIn } from '../../src/cli/first-run.js';
import { operatorActor } from '../../src/domain/audit.js';
import { createOrganization, deleteOrganization } from '../../src/domain/orgs.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';

/**
 * Issue 42: after the README's operator section a restart listed org_readme and org_cli first
 * (newest first) and its commands named the first of them, not the demo the newcomer uses.
 */
describe('what a start without a new demo prints (the way in)', () => {
  let t: TestDatabase;
  const op = operatorActor(null);
  beforeAll(async () => {
    t = await createTestDatabase();
  });
  afterAll(async () => t?.close());

  it('no organization: says so, and the commands name ORG_ID', async () => {
    expect(await wayIn(t.db, 'http://127.0.0.1:3000')).toBe(
      [
        'Organizations: none live.',
        '  a new API key:           npx climate-pulse keys create --org ORG_ID',
        '  a console invitation:    npx climate-pulse members invite --org ORG_ID --email you@example.com --role owner',
        '  the console:             http://127.0.0.1:3000/console',
        '  the check-in roster:     http://127.0.0.1:3000/console/people',
        '  check-in links:          npx climate-pulse checkins links --org ORG_ID',
      ].join('\n'),
    );
  });

  it('names the demo organization in the commands even when newer ones are listed first; deleted ones are left out', async () => {
    await createOrganization(t.db, { id: 'org_demo_abc123', name: 'Demo Company', plan: 'business' }, op, new Date('2026-11-01T00:00:00Z'));
    await createOrganization(t.db, { id: 'org_readme', name: 'Readme Inc', plan: 'business' }, op, new Date('2026-11-02T00:00:00Z'));
    await createOrganization(t.db, { id: 'org_cli', name: 'CLI Inc', plan: 'business' }, op, new Date('2026-11-03T00:00:00Z'));
    await createOrganization(t.db, { id: 'org_gone', name: 'Gone Ltd', plan: 'business' }, op, new Date('2026-11-04T00:00:00Z'));
    await deleteOrganization(t.db, 'org_gone', { erase: false }, op, new Date('2026-11-05T00:00:00Z'));
    const text = await wayIn(t.db, 'https://api.example.com');
    expect(text.split('\n')).toEqual([
      'Organizations: org_cli (CLI Inc), org_readme (Readme Inc), org_demo_abc123 (Demo Company).',
      '  a new API key:           npx climate-pulse keys create --org org_demo_abc123',
      '  a console invitation:    npx climate-pulse members invite --org org_demo_abc123 --email you@example.com --role owner',
      '  the console:             https://api.example.com/console',
      '  the check-in roster:     https://api.example.com/console/people',
      '  check-in links:          npx climate-pulse checkins links --org org_demo_abc123',
    ]);
    // With SMTP_URL the links go by mail: no command that would make new ones.
    expect((await wayIn(t.db, 'https://api.example.com', { mails: true })).split('\n').at(-1)).toBe(
      '  check-in links:          by mail (SMTP_URL), each week at the hour set on that page',
    );
  });

  it("the first run's way to the check-in (issue 45): the People page, the roster, this week's link", () => {
    expect(checkinWayIn('http://127.0.0.1:3000', 'org_demo_abc123', { mails: false }).split('\n')).toEqual([
      "Check-ins: add yourself to the roster on the console's People page, http://127.0.0.1:3000/console/people, and answer this week's check-in:",
      "  without SMTP_URL no mail goes; download the week's links on the Check-ins page, http://127.0.0.1:3000/console/checkins (CSV), or print them: npx climate-pulse checkins links --org org_demo_abc123",
    ]);
    expect(checkinWayIn('https://pulse.example.com', 'org_demo_abc123', { mails: true }).split('\n')).toEqual([
      "Check-ins: add yourself to the roster on the console's People page, https://pulse.example.com/console/people, and answer this week's check-in:",
      "  your personal link comes by mail (SMTP_URL) within a minute once the round's hour has passed (set on that page; Monday 09:00 UTC at first).",
    ]);
  });
});
